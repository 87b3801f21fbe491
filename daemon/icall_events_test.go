package daemon

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// A handler's arguments reach its script as EVENT::context entries, an
// event's own pair of the same name winning.
func TestICallHandlerArguments(t *testing.T) {
	t.Parallel()
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"create ltm pool ap1",
		"create ltm pool ap2",
		`create sys icall script describe definition {
    tmsh::modify ltm pool $EVENT::context(pool) description "[EVENT::context who]-[llength [EVENT::context]]"
}`,
		`create sys icall handler triggered at script describe arguments add { pool { value ap1 } who { value args } } subscriptions add { s { event-name DESC } }`,
		`create sys icall handler periodic ap interval 1 script describe arguments add { pool { value ap2 } who { value periodic } }`)
	out, _ := run(t, s, "list sys icall handler triggered at")
	if !strings.Contains(out, "arguments {") || !strings.Contains(out, "value ap1") {
		t.Fatalf("list: %s", out)
	}
	mustRun(t, s, "generate sys icall event DESC context { { name who value event } }")
	eventually(t, 10*time.Second, "the triggered handler to describe ap1", func() bool {
		out, _ := run(t, s, "list ltm pool ap1")
		return strings.Contains(out, "description event-4")
	})
	// A periodic handler has no event: its arguments alone.
	eventually(t, 10*time.Second, "the periodic handler to describe ap2", func() bool {
		out, _ := run(t, s, "list ltm pool ap2")
		return strings.Contains(out, "description periodic-4")
	})
	mustRun(t, s, "delete sys icall handler periodic ap")
}

// A perpetual handler's script loops on EVENT::get_next, taking each
// event of its subscriptions in turn; stopping the handler ends the wait.
func TestICallPerpetualGetNext(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"create ltm pool gp1 members add { 127.186.9.1:80 127.186.9.2:80 }",
		`create sys icall script drain definition {
    tmsh::log "waiting in [EVENT::handler] [clock clicks]"
    while { 1 } {
        EVENT::get_next
        tmsh::modify ltm pool $EVENT::context(pool) members modify \{ $EVENT::context(member) \{ session user-disabled \} \}
        tmsh::log "[EVENT::name] drained $EVENT::context(member) [EVENT::context site]"
    }
}`,
		`create sys icall handler perpetual pg script drain arguments add { site { value east } } subscriptions add { s { event-name DRAIN filters add { pool { value gp1 } } } }`)
	eventually(t, 10*time.Second, "the script to wait for events", func() bool {
		out, _ := run(t, s, "show sys log ltm")
		return strings.Contains(out, "waiting in /Common/pg")
	})
	mustRun(t, s,
		"generate sys icall event DRAIN context { { name pool value other } { name member value 127.186.9.2:80 } }",
		"generate sys icall event DRAIN context { { name pool value gp1 } { name member value 127.186.9.1:80 } }",
		"generate sys icall event DRAIN context { { name pool value gp1 } { name member value 127.186.9.2:80 } }")
	eventually(t, 10*time.Second, "both members drained by one run", func() bool {
		out, _ := run(t, s, "show sys log ltm")
		return strings.Contains(out, "DRAIN drained 127.186.9.1:80 east") && strings.Contains(out, "DRAIN drained 127.186.9.2:80 east")
	})
	out, _ := run(t, s, "show sys log ltm")
	if n := strings.Count(out, "waiting in /Common/pg"); n != 1 {
		t.Fatalf("the script ran %d times, want once, waiting between events:\n%s", n, out)
	}
	if n := strings.Count(out, "drained"); n != 2 {
		t.Fatalf("%d events handled, want 2 (the filter takes gp1's only):\n%s", n, out)
	}
	// Deleted, the handler's wait ends and events reach it no more.
	mustRun(t, s, "delete sys icall handler perpetual pg",
		"modify ltm pool gp1 members modify { all { session user-enabled } }",
		"generate sys icall event DRAIN context { { name pool value gp1 } { name member value 127.186.9.1:80 } }")
	eventually(t, 10*time.Second, "the handler to stop", func() bool {
		e.scripts.mu.Lock()
		defer e.scripts.mu.Unlock()
		return len(e.scripts.handlers) == 0
	})
	if out, _ := run(t, s, "list ltm pool gp1"); strings.Contains(out, "user-disabled") {
		t.Fatalf("a deleted handler took an event:\n%s", out)
	}
	// EVENT::get_next belongs to perpetual handlers.
	mustRun(t, s, `create sys icall script wrong definition { EVENT::get_next }`,
		`create sys icall handler triggered tw script wrong subscriptions add { s { event-name W } }`,
		"generate sys icall event W")
	eventually(t, 10*time.Second, "the refusal in the log", func() bool {
		out, _ := run(t, s, "show sys log ltm")
		return strings.Contains(out, "only the script of a perpetual handler waits for events")
	})
}

// The iStats trigger's checks at create: BIG-IP-shaped errors, nothing
// changed.
func TestIStatsTriggerConfig(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, tc := range []struct{ cmd, want string }{
		{`create sys icall istats-trigger t1 event-name E range-min 1`, "istats-key is required"},
		{`create sys icall istats-trigger t1 istats-key "a b counter c" range-min 1`, "event-name is required"},
		{`create sys icall istats-trigger t1 istats-key "a b counter" event-name E range-min 1`, `is not "NAMESPACE NAME TYPE FIELD"`},
		{`create sys icall istats-trigger t1 istats-key "a b string c" event-name E range-min 1`, "a range needs a counter or gauge"},
		{`create sys icall istats-trigger t1 istats-key "a b counter c" event-name E`, "needs range-min, range-max or both"},
		{`create sys icall istats-trigger t1 istats-key "a b counter c" event-name E range-min 5 range-max 2`, "range-min 5 is greater than range-max 2"},
		{`create sys icall istats-trigger t1 istats-key "a b counter c" event-name E range-min x`, `"x" is not a valid value for "range-min"`},
		{`create sys icall istats-trigger t1 istats-key "a b counter c" event-name E range-min 1 duration -1`, `"-1" is not a valid value for "duration"`},
	} {
		_, errText := run(t, s, tc.cmd)
		if !strings.Contains(errText, tc.want) {
			t.Errorf("%s: error %q, want %q", tc.cmd, errText, tc.want)
		}
	}
	// sys icall event is generated, not created.
	if _, errText := run(t, s, "create sys icall event ev1"); !strings.Contains(errText, "is not an object to create") {
		t.Errorf("create sys icall event: %q", errText)
	}
	if out, _ := run(t, s, "list sys icall istats-trigger"); strings.Contains(out, "t1") {
		t.Fatalf("a refused trigger was kept:\n%s", out)
	}
	mustRun(t, s, `create sys icall istats-trigger t1 istats-key "ltm.virtual /Common/vs counter hits" event-name HOT range-min 3 duration 0 repeat 10`)
	out, errText := run(t, s, "show sys icall istats-trigger t1")
	if errText != "" || !strings.Contains(out, "Sys::iCall iStats Trigger: t1") || !strings.Contains(out, "Value        -") || !strings.Contains(out, "out of range") {
		t.Fatalf("show: %q %s", out, errText)
	}
	mustRun(t, s, "delete sys icall istats-trigger t1")
	e.scripts.mu.Lock()
	watching := e.scripts.stopWatch != nil
	e.scripts.mu.Unlock()
	if watching {
		t.Fatal("the watch goes on with no trigger left")
	}
}

// The trigger's look at successive values: when it raises its event.
func TestIStatsTriggerLook(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	type step struct {
		at    int // seconds after t0
		n     int64
		ok    bool
		raise bool
	}
	for _, tc := range []struct {
		name             string
		min, max         int64
		duration, repeat int
		steps            []step
	}{
		{"enters once", 3, 1 << 62, 0, 0, []step{{0, 1, true, false}, {1, 3, true, true}, {2, 4, true, false}, {3, 9, true, false}}},
		{"no key is out of range", 0, 10, 0, 0, []step{{0, 0, false, false}, {1, 0, true, true}}},
		{"leaves and enters again", 1, 5, 0, 0, []step{{0, 2, true, true}, {1, 7, true, false}, {2, 3, true, true}}},
		{"duration", 1, 5, 2, 0, []step{{0, 2, true, false}, {1, 2, true, false}, {2, 2, true, true}, {3, 2, true, false}}},
		{"duration restarts when it leaves", 1, 5, 2, 0, []step{{0, 2, true, false}, {1, 9, true, false}, {2, 2, true, false}, {4, 2, true, true}}},
		{"repeat", 1, 5, 0, 2, []step{{0, 2, true, true}, {1, 2, true, false}, {2, 2, true, true}, {3, 2, true, false}, {4, 2, true, true}}},
		{"bounds included", 2, 2, 0, 0, []step{{0, 1, true, false}, {1, 2, true, true}, {2, 3, true, false}}},
	} {
		tr := &istatsTrigger{name: "/Common/t", key: "a b counter c", event: "E", min: tc.min, max: tc.max,
			duration: time.Duration(tc.duration) * time.Second, repeat: time.Duration(tc.repeat) * time.Second}
		for i, st := range tc.steps {
			ev := tr.look(st.n, st.ok, t0.Add(time.Duration(st.at)*time.Second))
			if (ev != nil) != st.raise {
				t.Errorf("%s: step %d (%d): raised %v, want %v", tc.name, i, st.n, ev != nil, st.raise)
				continue
			}
			if ev != nil && (ev.Name != "E" || len(ev.Context) != 3 || ev.Context[1][1] != strconv.FormatInt(st.n, 10)) {
				t.Errorf("%s: step %d: event %+v", tc.name, i, ev)
			}
		}
	}
}

// stop, start and restart sys icall handler perpetual NAME: the script
// ends and runs again, the configuration unchanged.
func TestICallPerpetualStartStop(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	mustRun(t, s, `create sys icall script waits definition {
    tmsh::log "waits started [clock clicks]"
    while { 1 } { EVENT::get_next; tmsh::log "waits took [EVENT::name] [clock clicks]" }
}`, "create sys icall handler perpetual pw script waits subscriptions add { s { event-name PW } }")
	count := func(what string) int {
		out, _ := run(t, s, "show sys log ltm")
		return strings.Count(out, what)
	}
	eventually(t, 10*time.Second, "the first run", func() bool { return count("waits started") == 1 })
	mustRun(t, s, "stop sys icall handler perpetual pw")
	out, _ := run(t, s, "show sys icall handler perpetual pw")
	if !strings.Contains(out, "active (stopped: start sys icall handler perpetual pw)") {
		t.Fatalf("show after stop:\n%s", out)
	}
	if out, _ := run(t, s, "list sys icall handler perpetual pw"); strings.Contains(out, "inactive") {
		t.Fatalf("stop changed the configuration:\n%s", out)
	}
	mustRun(t, s, "generate sys icall event PW", "start sys icall handler perpetual pw")
	eventually(t, 10*time.Second, "the run after start", func() bool { return count("waits started") == 2 })
	mustRun(t, s, "generate sys icall event PW")
	eventually(t, 10*time.Second, "the event after start", func() bool { return count("waits took PW") == 1 })
	mustRun(t, s, "restart sys icall handler perpetual pw")
	eventually(t, 10*time.Second, "the run after restart", func() bool { return count("waits started") == 3 })
	for _, tc := range []struct{ cmd, want string }{
		{"stop sys icall handler perpetual nosuch", "was not found"},
		{"stop ltm pool p1", "stop takes an iCall perpetual handler"},
		{"start sys icall handler perpetual", "one perpetual handler's name"},
	} {
		if _, errText := run(t, s, tc.cmd); !strings.Contains(errText, tc.want) {
			t.Errorf("%s: %q, want %q", tc.cmd, errText, tc.want)
		}
	}
	mustRun(t, s, "modify sys icall handler perpetual pw status inactive")
	if _, errText := run(t, s, "start sys icall handler perpetual pw"); !strings.Contains(errText, "status active") {
		t.Errorf("start of an inactive handler: %q", errText)
	}
}
