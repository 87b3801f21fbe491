package render

import (
	"io"

	"github.com/openltm/openltm/dataplane/bwc"
)

// BWCPolicy prints one `Net::BWC Policy` block: the policy's rates, the
// traffic its flows passed, delayed and dropped, and its current rate
// [M: the layout and field names are openltm's, in the style of the
// other shows; traffic in bits as tmsh counts it].
func BWCPolicy(w io.Writer, name string, st bwc.Stats, o Options) error {
	return statBlock(w, "Net::BWC Policy: "+o.rel(name), [][2]string{
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
	})
}
