package render

import "io"

// PacketFilterStats is what show net packet-filter prints of one filter.
type PacketFilterStats struct {
	Order, Action string
	// Matches counts the connections and UDP flows the filter matched
	// (BIG-IP counts packets and bytes; openltm filters a connection or
	// flow once, when it begins).
	Matches uint64
	// Acting is false while filtering is off, or for a filter kept
	// without acting (a rule outside what openltm acts on, a vlan).
	Acting bool
}

// PacketFilter writes one filter's block [M: BIG-IP's layout of show net
// packet-filter is not documented; this follows its other Net:: blocks].
func PacketFilter(w io.Writer, name string, st PacketFilterStats, o Options) error {
	state := "in force"
	if !st.Acting {
		state = "not in force"
	}
	return statBlock(w, "Net::Packet Filter: "+o.rel(name), [][2]string{
		{"Order", st.Order},
		{"Action", st.Action},
		{"State", state},
		{"Matches (connections and flows)", o.num(st.Matches)},
	})
}
