package gtpmsg

import (
	"net"
)

// IEPrivateExtension is the Private Extension IE (type 255 in GTPv1 and
// GTPv2): the responder names itself in it.
const IEPrivateExtension = 255

// Serve answers GTP requests on c until it is closed, as a small GTP
// peer for tests and `tcpkit gtp-server`: Echo Requests with an Echo
// Response (a Recovery IE), GTPv2 Create Session Requests and GTPv1
// Create PDP Context Requests with an accepting answer; every answer
// carries a Private Extension IE holding label, so a client can tell
// which peer answered. Anything else is not answered.
func Serve(c net.PacketConn, label string) error {
	buf := make([]byte, 65535)
	for {
		n, from, err := c.ReadFrom(buf)
		if err != nil {
			return err
		}
		if a := Respond(buf[:n], label); a != nil {
			c.WriteTo(a, from)
		}
	}
}

// Respond is Serve's answer to request b, nil for none.
func Respond(b []byte, label string) []byte {
	req, err := Parse(b)
	if err != nil || req.Prime {
		return nil
	}
	name := IE{Type: IEPrivateExtension, Value: append([]byte{0, 0}, label...)} // enterprise 0
	switch {
	case req.Type == EchoRequest && req.Version == 1:
		return Answer(req, EchoResponse, IE{Type: IEv1Recovery, Value: []byte{0}}, name)
	case req.Type == EchoRequest:
		return Answer(req, EchoResponse, IE{Type: IEv2Recovery, Value: []byte{0}}, name)
	case req.Version == 2 && req.Type == CreateSessionRequest:
		return Answer(req, CreateSessionResponse, IE{Type: IEv2Cause, Value: []byte{16, 0}}, name) // Request accepted
	case req.Version == 1 && req.Type == CreatePDPRequest:
		return Answer(req, CreatePDPResponse, IE{Type: IEv1Cause, Value: []byte{128}}, name) // Request accepted
	}
	return nil
}

// Label is the responder's name in answer m, "" without one.
func Label(m *Message) string {
	ie, ok := m.Find(IEPrivateExtension, 0, 0)
	if !ok || len(ie.Value) < 2 {
		return ""
	}
	return string(ie.Value[2:])
}
