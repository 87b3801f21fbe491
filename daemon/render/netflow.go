package render

import "io"

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
