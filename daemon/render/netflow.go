package render

import (
	"io"

	"github.com/openltm/openltm/dataplane/ipfix"
	"github.com/openltm/openltm/rules"
)

// NetflowStats are one netflow profile's counters.
type NetflowStats struct {
	// Flows are the connections reported, Records the records queued
	// for a collector, Dropped the records no ipfix destination took.
	Flows, Records, Dropped uint64
}

// NetflowProfile prints one `Ltm::NetFlow Profile` block [M: BIG-IP has
// the profile's statistics (reset-stats) but its layout is not
// documented; the figures are openltm's].
func NetflowProfile(w io.Writer, name string, st NetflowStats, o Options) error {
	return statBlock(w, "Ltm::NetFlow Profile: "+o.rel(name), [][2]string{
		{"Flows Reported", o.num(st.Flows)},
		{"Records", ""},
		{"  Records Sent", o.num(st.Records)},
		{"  Records Dropped", o.num(st.Dropped)},
	})
}

// IPFIXDestination prints one `Sys::IPFIX Destination` block: what an
// ipfix log destination's exporters sent, in every version its users
// asked for (the IPFIX:: commands, netflow profiles) [M: the layout and
// the field names are openltm's].
func IPFIXDestination(w io.Writer, name string, st ipfix.Stats, o Options) error {
	proto := "UDP"
	if st.TCP {
		proto = "TCP"
	}
	if st.TLS {
		proto = "TLS"
	}
	return statBlock(w, "Sys::IPFIX Destination: "+o.rel(name), [][2]string{
		{"Collectors", o.rel(st.Pool) + " (" + proto + ")"},
		{"Records", ""},
		{"  Sent", o.num(st.Records)},
		{"  Dropped", o.num(st.Dropped)},
		{"Messages Sent", o.num(st.Messages)},
		{"Templates Sent", o.num(st.Templates)},
		{"Failures", o.num(st.Failures)},
	})
}

// IPFIXRule prints one `Sys::IPFIX iRule` block: what a rule's IPFIX::
// commands did [M: BIG-IP's show sys ipfix irules reports its iRules'
// IPFIX statistics in a layout F5 does not document; openltm counts the
// templates and messages each rule made, and the messages it sent that a
// destination queued (Sent) or that none did (Dropped)].
func IPFIXRule(w io.Writer, name string, st rules.IPFIXStats, o Options) error {
	return statBlock(w, "Sys::IPFIX iRule: "+o.rel(name), [][2]string{
		{"Templates Created", o.num(st.Templates)},
		{"Messages", ""},
		{"  Created", o.num(st.Created)},
		{"  Sent", o.num(st.Sent)},
		{"  Dropped", o.num(st.Dropped)},
	})
}
