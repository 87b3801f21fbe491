package render

import (
	"io"
	"strconv"

	"github.com/openltm/openltm/dataplane/bwc"
)

// RateClass prints one `Net::Rate Class` block: the class's rate and
// ceiling, the traffic it passed, delayed, borrowed from its parent and
// dropped (the datagrams a full queue dropped apart from those its drop
// policy dropped early), and its queue now (the bytes and flows waiting
// on its buckets, the datagrams in a pfifo class's queue) [M: the
// layout and field names are openltm's, in the style of show net bwc
// policy; traffic in bits as tmsh counts it].
func RateClass(w io.Writer, name string, st bwc.ClassStats, rate, ceiling uint64, o Options) error {
	rows := [][2]string{
		{"Rate (bits/sec)", o.num(rate)},
		{"Ceiling (bits/sec)", o.num(ceiling)},
		{"Current Rate (bits/sec)", o.num(st.Rate)},
		{"Passed", ""},
		{"  Bits", o.num(st.Bytes * 8)},
		{"  Packets", o.num(st.Pkts)},
		{"Delayed Bits", o.num(st.Delayed * 8)},
		{"Borrowed Bits", o.num(st.Borrowed * 8)},
		{"Dropped Bits", o.num(st.Dropped * 8)},
		{"Dropped Packets", ""},
		{"  Queue Full", o.num(st.DroppedFull)},
		{"  Drop Policy", o.num(st.DroppedEarly)},
		{"Queue", ""},
		{"  Depth (bytes)", strconv.FormatInt(st.QueueBytes, 10)},
		{"  Flows", strconv.FormatInt(int64(st.QueueFlows), 10)},
		{"  Packets", strconv.Itoa(st.QueuePkts)},
	}
	return statBlock(w, "Net::Rate Class: "+o.rel(name), rows)
}
