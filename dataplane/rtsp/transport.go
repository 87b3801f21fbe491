package rtsp

import (
	"net/netip"
	"strconv"
	"strings"
)

// Spec is one transport of a Transport header (RFC 2326 12.39): the
// header lists the transports the client accepts, separated by commas,
// each a protocol and ;-separated parameters.
type Spec struct {
	// Proto is "RTP/AVP", "RTP/AVP/UDP", "RTP/AVP/TCP", ...
	Proto  string
	Params []Param
}

// Param is one parameter of a Spec; Value is "" for a flag (unicast).
type Param struct {
	Name, Value string
	flag        bool
}

// ParseTransport reads a Transport header's value.
func ParseTransport(v string) []Spec {
	var out []Spec
	for _, s := range strings.Split(v, ",") {
		parts := strings.Split(strings.TrimSpace(s), ";")
		if parts[0] == "" {
			continue
		}
		sp := Spec{Proto: strings.TrimSpace(parts[0])}
		for _, p := range parts[1:] {
			p = strings.TrimSpace(p)
			if p == "" {
				continue
			}
			n, val, ok := strings.Cut(p, "=")
			sp.Params = append(sp.Params, Param{Name: strings.TrimSpace(n), Value: strings.TrimSpace(val), flag: !ok})
		}
		out = append(out, sp)
	}
	return out
}

// FormatTransport writes specs back as a Transport header's value.
func FormatTransport(specs []Spec) string {
	var b strings.Builder
	for i, s := range specs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(s.Proto)
		for _, p := range s.Params {
			b.WriteByte(';')
			b.WriteString(p.Name)
			if !p.flag {
				b.WriteByte('=')
				b.WriteString(p.Value)
			}
		}
	}
	return b.String()
}

// Get is parameter name's value.
func (s *Spec) Get(name string) (string, bool) {
	for _, p := range s.Params {
		if strings.EqualFold(p.Name, name) {
			return p.Value, true
		}
	}
	return "", false
}

// Set replaces parameter name's value, or adds it.
func (s *Spec) Set(name, value string) {
	for i := range s.Params {
		if strings.EqualFold(s.Params[i].Name, name) {
			s.Params[i].Value, s.Params[i].flag = value, false
			return
		}
	}
	s.Params = append(s.Params, Param{Name: name, Value: value})
}

// Remove drops parameter name.
func (s *Spec) Remove(name string) {
	out := s.Params[:0]
	for _, p := range s.Params {
		if !strings.EqualFold(p.Name, name) {
			out = append(out, p)
		}
	}
	s.Params = out
}

// UDP reports a transport whose data goes in UDP datagrams: the data
// channels the gateway opens. RTP/AVP/TCP and interleaved= carry the
// data inside the control connection, which passes untouched.
func (s *Spec) UDP() bool {
	p := strings.ToUpper(s.Proto)
	if strings.HasSuffix(p, "/TCP") {
		return false
	}
	_, inter := s.Get("interleaved")
	return !inter
}

// Multicast reports a multicast transport (the client joins a group;
// nothing is relayed [M]).
func (s *Spec) Multicast() bool {
	for _, p := range s.Params {
		if p.flag && strings.EqualFold(p.Name, "multicast") {
			return true
		}
	}
	return false
}

// Ports is a client_port or server_port value: RTP's port and, when
// the pair is given, RTCP's (Last 0: RTP only).
type Ports struct {
	First, Last uint16
}

// ParsePorts reads "a" or "a-b".
func ParsePorts(v string) (Ports, bool) {
	a, b, pair := strings.Cut(v, "-")
	x, err := strconv.ParseUint(strings.TrimSpace(a), 10, 16)
	if err != nil || x == 0 {
		return Ports{}, false
	}
	if !pair {
		return Ports{First: uint16(x)}, true
	}
	y, err := strconv.ParseUint(strings.TrimSpace(b), 10, 16)
	if err != nil || y < x {
		return Ports{}, false
	}
	return Ports{First: uint16(x), Last: uint16(y)}, true
}

// String is the value as it goes in a Transport header.
func (p Ports) String() string {
	if p.Last == 0 {
		return strconv.Itoa(int(p.First))
	}
	return strconv.Itoa(int(p.First)) + "-" + strconv.Itoa(int(p.Last))
}

// Count is how many channels the ports name: RTP, and RTCP with a pair.
func (p Ports) Count() int {
	if p.Last == 0 {
		return 1
	}
	return 2
}

// Port is the i-th channel's port (0: RTP, 1: RTCP).
func (p Ports) Port(i int) uint16 {
	if i == 0 {
		return p.First
	}
	return p.Last
}

// PortsOf is the ports of a pair of sockets' addresses as a Ports.
func PortsOf(addrs []netip.AddrPort) Ports {
	if len(addrs) == 1 {
		return Ports{First: addrs[0].Port()}
	}
	return Ports{First: addrs[0].Port(), Last: addrs[1].Port()}
}

// AnyPorts asks ListenPair for n channels (1: RTP only, 2: RTP and
// RTCP) on ports the system chooses.
func AnyPorts(n int) Ports {
	if n == 2 {
		return Ports{Last: 1}
	}
	return Ports{}
}
