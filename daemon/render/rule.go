package render

import (
	"io"
	"strconv"
	"strings"

	"github.com/openltm/openltm/rules"
)

// RuleEvent prints one `Ltm::Rule Event: RULE:EVENT` block (show ltm
// rule; kind is "Ltm" or "Gtm"). BIG-IP counts the CPU cycles of each
// execution; openltm times it, and shows time × mhz (the CPU's nominal
// frequency) as cycles. With detail, the times themselves follow in
// microseconds, to compare with openltm's other figures. With field-fmt,
// the same counters as `ltm rule-event RULE:EVENT { key value ... }`.
func RuleEvent(w io.Writer, kind, rule string, st rules.EventStats, mhz float64, o Options) error {
	cycles := func(ns int64) uint64 { return uint64(float64(ns) * mhz / 1000) }
	if o.FieldFmt {
		f := newFields()
		name := o.rel(rule) + ":" + st.Event.String()
		f.set("name", o.rel(rule))
		f.set("event-type", st.Event.String())
		f.set("priority", strconv.Itoa(st.Priority))
		f.counts(o, counter{"total-executions", st.Executions}, counter{"failures", st.Failures}, counter{"aborts", st.Aborts},
			counter{"avg-cycles", cycles(int64(st.Average()))}, counter{"max-cycles", cycles(int64(st.Max))},
			counter{"min-cycles", cycles(int64(st.Min))})
		return writeObject(w, strings.ToLower(kind)+" rule-event", name, f)
	}
	rows := [][2]string{
		{"Priority", strconv.Itoa(st.Priority)},
		{"Executions", ""},
		{"  Total", o.num(st.Executions)},
		{"  Failures", o.num(st.Failures)},
		{"  Aborts", o.num(st.Aborts)},
		{"CPU Cycles on Executing", ""},
		{"  Average", o.num(cycles(int64(st.Average())))},
		{"  Maximum", o.num(cycles(int64(st.Max)))},
		{"  Minimum", o.num(cycles(int64(st.Min)))},
	}
	if o.Detail {
		us := func(ns int64) string { return strconv.FormatFloat(float64(ns)/1000, 'f', 3, 64) }
		rows = append(rows,
			[2]string{"Time on Executing (us)", ""},
			[2]string{"  Average", us(int64(st.Average()))},
			[2]string{"  Maximum", us(int64(st.Max))},
			[2]string{"  Minimum", us(int64(st.Min))},
			[2]string{"  Total", us(int64(st.Total))},
			[2]string{"Cycles per us", strconv.FormatFloat(mhz, 'f', -1, 64)},
		)
	}
	// BIG-IP's values end near column 29 (the width varies with the
	// version and the name's length).
	return statBlockWidth(w, kind+"::Rule Event: "+o.rel(rule)+":"+st.Event.String(), rows, 29)
}
