package diamtest

import (
	"errors"
	"net"
	"time"

	"github.com/openltm/openltm/dataplane/diammsg"
)

// DialServe connects to addr as a Diameter peer named name of realm
// realm that answers requests as a Server does: it sends its CER, waits
// for a CEA saying DIAMETER_SUCCESS, then serves the connection (what it
// receives is kept, Got) until Close. It stands for a client an agent
// routes requests to over the client's own connection (a PCEF a PCRF's
// Re-Auth-Requests reach through the agent).
func DialServe(addr, name, realm string) (*Server, error) {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	var b []byte
	b = diammsg.AppendAVP(b, diammsg.AVPOriginHost, diammsg.AVPFlagMandatory, 0, []byte(name))
	b = diammsg.AppendAVP(b, diammsg.AVPOriginRealm, diammsg.AVPFlagMandatory, 0, []byte(realm))
	b = diammsg.AppendAVP(b, diammsg.AVPVendorID, diammsg.AVPFlagMandatory, 0, diammsg.U32(0))
	b = diammsg.AppendAVP(b, diammsg.AVPProductName, 0, 0, []byte("diamtest"))
	b = diammsg.AppendAVP(b, diammsg.AVPAuthAppID, diammsg.AVPFlagMandatory, 0, diammsg.U32(4))
	if _, err := c.Write(diammsg.Build(diammsg.FlagRequest, diammsg.CmdCapabilitiesExchange, 0, 1, 1, b)); err != nil {
		c.Close()
		return nil, err
	}
	c.SetReadDeadline(time.Now().Add(15 * time.Second))
	rd := diammsg.Reader{R: c}
	raw, err := rd.Next()
	c.SetReadDeadline(time.Time{})
	if err != nil {
		c.Close()
		return nil, err
	}
	m, err := diammsg.Parse(raw)
	if err != nil || m.Request() || m.Code() != diammsg.CmdCapabilitiesExchange {
		c.Close()
		return nil, errors.New("diamtest: no CEA")
	}
	if rc := m.Get(diammsg.AVPResultCode); len(rc) != 4 || rc[3] != byte(diammsg.ResultSuccess&0xff) || rc[2] != byte(diammsg.ResultSuccess>>8) {
		c.Close()
		return nil, errors.New("diamtest: the CEA refused the capabilities exchange")
	}
	s := &Server{Name: name, conns: map[net.Conn]bool{c: true}, done: make(chan struct{})}
	go s.serve(c)
	return s, nil
}

// DPR makes the server send a Disconnect-Peer-Request (Disconnect-Cause
// BUSY) on each of its open connections, as a peer about to leave does;
// it returns how many it sent.
func (s *Server) DPR() int {
	b := diammsg.AppendAVP(nil, diammsg.AVPOriginHost, diammsg.AVPFlagMandatory, 0, []byte(s.Name))
	b = diammsg.AppendAVP(b, diammsg.AVPOriginRealm, diammsg.AVPFlagMandatory, 0, []byte("members.example"))
	b = diammsg.AppendAVP(b, 273, diammsg.AVPFlagMandatory, 0, diammsg.U32(1))
	dpr := diammsg.Build(diammsg.FlagRequest, diammsg.CmdDisconnectPeer, 0, 0xdead, 0xdead, b)
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for c := range s.conns {
		if _, err := c.Write(dpr); err == nil {
			n++
		}
	}
	return n
}
