package render

import (
	"io"
	"strings"

	"github.com/openltm/openltm/dataplane/bwc"
)

// BWCPolicy prints one `Net::BWC Policy` block: the policy's rates, the
// traffic its flows passed, delayed and dropped, its current rate, and
// each measurement on (measure enabled: the policy, its categories and
// its instances; BWC::measure's flows and sessions) with the rate of its
// last whole second and the bits it counted, named as in the
// log-publisher's lines [M: the layout and field names are openltm's, in
// the style of the other shows; traffic in bits as tmsh counts it].
func BWCPolicy(w io.Writer, name string, st bwc.Stats, o Options) error {
	rows := [][2]string{
		{"Max Rate (bits/sec)", o.num(st.MaxRate)},
		{"Current Rate (bits/sec)", o.num(st.Rate)},
		{"Passed", ""},
		{"  Bits", o.num(st.Passed * 8)},
		{"  Packets", o.num(st.PassedPkts)},
		{"Delayed Bits", o.num(st.Delayed * 8)},
		{"Dropped", ""},
		{"  Bits", o.num(st.Dropped * 8)},
		{"  Packets", o.num(st.DroppedPkts)},
		{"Dynamic Instances", o.num(uint64(st.Instances))},
	}
	if len(st.Measured) > 0 {
		rows = append(rows, [2]string{"Measured", ""})
	}
	for _, m := range st.Measured {
		what := "Policy"
		if m.What != "" {
			kind, rest, _ := strings.Cut(m.What, " ")
			what = strings.ToUpper(kind[:1]) + kind[1:] + " " + rest
		}
		if m.ID != "" {
			what += " (" + m.ID + ")"
		}
		rows = append(rows, [2]string{"  " + what, ""},
			[2]string{"    Rate (bits/sec)", o.num(m.Rate)},
			[2]string{"    Bits", o.num(m.Bytes * 8)})
	}
	return statBlock(w, "Net::BWC Policy: "+o.rel(name), rows)
}
