package objects

// scriptKinds are tmsh scripting: `cli script` (a Tcl body of procedures
// that `run cli script NAME args` runs) and iCall (`sys icall script`, and
// the handlers that run one on a timer, for ever, or on an event). The
// daemon runs them (daemon/tmshscript). The property lists follow F5's
// tmsh reference pages of sys icall script, sys icall handler periodic,
// perpetual and triggered, and of sys icall istats-trigger (the event an
// iStats value raises). A handler's arguments reach its script as
// EVENT::context entries [M].
func scriptKinds() []*Kind {
	cli := &Kind{Words: []string{"cli", "script"}, Title: "Script", Lower: "script", Source: tmshRef("cli script"),
		Help:  "tmsh script: Tcl procedures (script::init, script::run) run by run cli script NAME args, with the tmsh:: commands",
		Props: []*Prop{{Name: "definition", Type: TTcl, Help: "the script's Tcl body"}}}

	script := &Kind{Words: []string{"sys", "icall", "script"}, Title: "Script", Lower: "script", Source: tmshRef("sys icall script"),
		Help: "iCall script: Tcl run from top to bottom by the handlers that name it, with the tmsh:: and EVENT:: commands",
		Props: []*Prop{
			help(&Prop{Name: "definition", Type: TTcl}, "the script's Tcl body: definition { ... }"),
			help(str("description", "none"), "a description of the script"),
			passive(str("app-service", "none")),
			help(passive(&Prop{Name: "events", Type: TColl, Items: ItemPlain, Sub: &Kind{Title: "Event", Props: []*Prop{
				{Name: "contexts", Type: TList},
			}}}), "the events the script generates and their context names, registered with the system (kept; openltm needs none registered)"),
		}}

	status := func(vals ...string) *Prop {
		return help(enum("status", "active", vals...), "active runs the handler; inactive stops it")
	}
	scriptRef := func() *Prop {
		p := ref("script", "sys icall script")
		p.Checked = true
		return help(p, "the iCall script the handler runs")
	}
	arguments := func() *Prop {
		return help(&Prop{Name: "arguments", Type: TColl, Items: ItemPlain, Sub: &Kind{Title: "Argument", Props: []*Prop{str("value", "")}}},
			"name/value pairs the script reads as EVENT::context entries: arguments { NAME { value V } }")
	}
	subscriptions := func() *Prop {
		filter := &Kind{Title: "Filter", Props: []*Prop{
			help(str("value", ""), "the value the event's context of the filter's name must match"),
			help(enum("match-algorithm", "exact", "accept-all", "exact", "glob", "regex", "subnet"), "how value matches: accept-all, exact, glob, regex, or subnet (an address within the value's prefix)"),
		}}
		return help(&Prop{Name: "subscriptions", Type: TColl, Items: ItemPlain, Sub: &Kind{Title: "Subscription", Props: []*Prop{
			help(str("event-name", ""), "the name of the events the subscription takes (generate sys icall event NAME)"),
			help(&Prop{Name: "filters", Type: TColl, Items: ItemPlain, Sub: filter}, "context values an event must have: filters { NAME { value V match-algorithm exact } }"),
		}}}, "the events that run the script: subscriptions { SUB { event-name E } }")
	}
	periodic := &Kind{Words: []string{"sys", "icall", "handler", "periodic"}, Title: "Handler", Lower: "handler", Source: tmshRef("sys icall handler periodic"),
		Help: "iCall periodic handler: runs its script every interval seconds, one run at a time",
		Props: []*Prop{
			arguments(),
			str("description", "none"),
			help(str("first-occurrence", "none"), "when the first run is due (YYYY-MM-DD:HH:MM:SS, local time); none: interval seconds after the handler starts"),
			help(&Prop{Name: "interval", Type: TInt, Min: 1}, "seconds between runs"),
			help(str("last-occurrence", "none"), "after this time (YYYY-MM-DD:HH:MM:SS, local time) the handler runs no more"),
			scriptRef(),
			status("active", "inactive"),
			passive(str("app-service", "none")),
		}}
	perpetual := &Kind{Words: []string{"sys", "icall", "handler", "perpetual"}, Title: "Handler", Lower: "handler", Source: tmshRef("sys icall handler perpetual"),
		Help: "iCall perpetual handler: runs its script continuously, started again when it ends",
		Props: []*Prop{
			arguments(),
			str("description", "none"),
			scriptRef(),
			help(enum("status", "active", "active", "inactive", "suspend"), "active runs the script; inactive and suspend stop it"),
			subscriptions(),
			passive(str("app-service", "none")),
		}}
	triggered := &Kind{Words: []string{"sys", "icall", "handler", "triggered"}, Title: "Handler", Lower: "handler", Source: tmshRef("sys icall handler triggered"),
		Help: "iCall triggered handler: runs its script for each event its subscriptions take",
		Props: []*Prop{
			arguments(),
			str("description", "none"),
			scriptRef(),
			status("active", "inactive"),
			subscriptions(),
			passive(str("app-service", "none")),
		}}
	// The iStats trigger's semantics are openltm's reading of its property
	// names [M: F5's reference lists them (duration, repeat, range-min,
	// range-max) without saying more].
	istatsTrigger := &Kind{Words: []string{"sys", "icall", "istats-trigger"}, Title: "iStats trigger", Lower: "istats-trigger", Source: tmshRef("sys icall istats-trigger"),
		Help: "iCall iStats trigger: raises an iCall event when an iStats value (set by iRules' ISTATS:: commands) enters a range",
		Props: []*Prop{
			str("description", "none"),
			help(str("istats-key", ""), "the iStats key watched, \"NAMESPACE OBJECT TYPE NAME\" as ISTATS:: writes it (TYPE counter or gauge)"),
			help(str("event-name", ""), "the name of the iCall event raised (a triggered handler's subscription event-name)"),
			help(&Prop{Name: "range-min", Type: TInt}, "the least value in the range (unset: no lower bound)"),
			help(&Prop{Name: "range-max", Type: TInt}, "the greatest value in the range (unset: no upper bound)"),
			help(num("duration", "0"), "seconds the value must stay in the range before the event is raised (0: at once)"),
			help(num("repeat", "0"), "seconds between events raised again while the value stays in the range (0: once each time it enters)"),
			passive(str("app-service", "none")),
		}}
	return []*Kind{cli, script, periodic, perpetual, triggered, istatsTrigger}
}
