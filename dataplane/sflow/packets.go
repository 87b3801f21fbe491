package sflow

// Packet sampling (sFlow v5's sampled_header flow record, format 0:1):
// the packets of a VLAN's interfaces, one in N at random, each sent as a
// flow sample of the VLAN's data source with the first bytes of its
// frame, as BIG-IP samples its VLANs (`sys sflow global-settings vlan
// sampling-rate`, `net vlan NAME sflow { sampling-rate }`). The sampling
// itself is the kernel's (packets_linux.go): only the chosen packets are
// copied to the agent, so unsampled traffic costs the data path nothing.

// MaxHeader is the bytes of a sampled frame sent, sFlow's customary 128.
const MaxHeader = 128

// headerProtocolEthernet is sampled_header's header_protocol for an
// Ethernet frame (ETHERNET-ISO88023).
const headerProtocolEthernet = 1

// PacketSample is one sampled frame: the first bytes of it (at most
// MaxHeader) and its whole length, and the interface it came in on or
// went out of (kernel ifindex; 0 for the other direction).
type PacketSample struct {
	Header          []byte
	FrameLength     uint32
	Input, Output   uint32
	Drops           uint32
	Rate, Pool, Seq uint32
}

// appendPacketSample appends a flow sample of one frame from source id.
func appendPacketSample(b []byte, id uint32, s *PacketSample) []byte {
	b = appendU32(b, formatFlowSample)
	at := len(b)
	b = appendU32(b, 0)
	b = appendU32(b, s.Seq)
	b = appendU32(b, id)
	b = appendU32(b, s.Rate)
	b = appendU32(b, s.Pool)
	b = appendU32(b, s.Drops)
	b = appendU32(b, s.Input)
	b = appendU32(b, s.Output)
	b = appendU32(b, 1) // records
	b = appendU32(b, 1) // sampled_header
	rl := len(b)
	b = appendU32(b, 0)
	b = appendU32(b, headerProtocolEthernet)
	b = appendU32(b, s.FrameLength)
	b = appendU32(b, 0) // stripped: the kernel hands frames without their FCS
	b = appendString(b, s.Header, MaxHeader)
	patchLen(b, rl)
	patchLen(b, at)
	return b
}

// AddPacket encodes a packet flow sample of source id into the datagram
// being filled.
func (a *Agent) AddPacket(id uint32, s *PacketSample) {
	a.mu.Lock()
	if !a.closed {
		at := len(a.buf)
		a.buf = appendPacketSample(a.buf, id, s)
		a.placed(at)
		a.stats.FlowSamples.Add(1)
	}
	a.mu.Unlock()
}
