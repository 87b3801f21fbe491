package render

import (
	"io"
	"strconv"
)

// SFlowReceiver is one receiver's figures: where it is, whether it is
// sent samples, and what the agent sent (every enabled receiver is sent
// the same datagrams).
type SFlowReceiver struct {
	Address, State                                    string
	Datagrams, Flows, Counters, Dropped, SendFailures uint64
}

// SFlowReceiverBlock prints one `Sys::sFlow Receiver` block [M: BIG-IP's
// layout is not documented; the figures are openltm's].
func SFlowReceiverBlock(w io.Writer, name string, st SFlowReceiver, o Options) error {
	return statBlock(w, "Sys::sFlow Receiver: "+o.rel(name), [][2]string{
		{"Address", st.Address},
		{"State", st.State},
		{"Datagrams Sent", o.num(st.Datagrams)},
		{"Samples", ""},
		{"  Flow Samples", o.num(st.Flows)},
		{"  Counter Samples", o.num(st.Counters)},
		{"  Dropped", o.num(st.Dropped)},
		{"Send Failures", o.num(st.SendFailures)},
	})
}

// SFlowHTTPSource is an http virtual's sFlow data source.
type SFlowHTTPSource struct {
	Index                 uint32
	Rate, PollSeconds     uint64
	Samples, RequestsSeen uint64
}

// SFlowHTTPSourceBlock prints one `Sys::sFlow HTTP Data Source` block
// [M: the layout is openltm's].
func SFlowHTTPSourceBlock(w io.Writer, name string, st SFlowHTTPSource, o Options) error {
	return statBlock(w, "Sys::sFlow HTTP Data Source: "+o.rel(name), [][2]string{
		{"Data Source", "3:" + strconv.FormatUint(uint64(st.Index), 10)},
		{"Sampling Rate", strconv.FormatUint(st.Rate, 10)},
		{"Poll Interval", strconv.FormatUint(st.PollSeconds, 10)},
		{"Flow Samples", o.num(st.Samples)},
		{"Requests Seen", o.num(st.RequestsSeen)},
	})
}
