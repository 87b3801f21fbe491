package gtpmsg

import (
	"encoding/binary"
	"hash/fnv"
	"net"
)

// IEPrivateExtension is the Private Extension IE (type 255 in GTPv1 and
// GTPv2): the responder names itself in it.
const IEPrivateExtension = 255

// Serve answers GTP requests on c until it is closed, as a small GTP
// peer for tests and `tcpkit gtp-server`: Echo Requests with an Echo
// Response (a Recovery IE); GTPv2 Create Session, Modify Bearer and
// Delete Session Requests and GTPv1 Create and Delete PDP Context
// Requests with an accepting answer, a session's answers giving the
// peer's TEIDs (SessionTEIDs); a G-PDU with a G-PDU of the same TEID
// back. Every answer carries label (a Private Extension IE, a G-PDU's
// payload), so a client can tell which peer answered. Anything else is
// not answered.
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
	v1ok := IE{Type: IEv1Cause, Value: []byte{causeV1Accepted}}
	v2ok := IE{Type: IEv2Cause, Value: []byte{causeV2Accepted, 0}}
	switch {
	case req.Version == 1 && req.Type == GPDU:
		m := Message{Header: Header{Version: 1, Type: GPDU, TEID: req.TEID}, Payload: []byte(label)}
		return m.Append(nil)
	case req.Type == EchoRequest && req.Version == 1:
		return Answer(req, EchoResponse, IE{Type: IEv1Recovery, Value: []byte{0}}, name)
	case req.Type == EchoRequest:
		return Answer(req, EchoResponse, IE{Type: IEv2Recovery, Value: []byte{0}}, name)
	case req.Version == 2 && req.Type == CreateSessionRequest:
		cp, up := SessionTEIDs(label, req.IMSI())
		return answerTo(req, CreateSessionResponse, v2ok,
			IE{Type: IEv2FTEID, Instance: 1, Value: FTEID(7, cp, [4]byte{127, 0, 0, 1})}, // S5/S8 PGW GTP-C
			IE{Type: IEv2BearerCtx, Value: Group(IE{Type: 73, Value: []byte{5}}, // EPS Bearer ID 5
				IE{Type: IEv2FTEID, Instance: 2, Value: FTEID(5, up, [4]byte{127, 0, 0, 1})})}, // S5/S8 PGW GTP-U
			name)
	case req.Version == 2 && (req.Type == ModifyBearerRequest || req.Type == DeleteSessionRequest):
		return answerTo(req, req.Type+1, v2ok, name)
	case req.Version == 1 && req.Type == CreatePDPRequest:
		cp, up := SessionTEIDs(label, req.IMSI())
		var d, c [4]byte
		binary.BigEndian.PutUint32(d[:], up)
		binary.BigEndian.PutUint32(c[:], cp)
		return Answer(req, CreatePDPResponse, v1ok, IE{Type: IEv1TEIDData, Value: d[:]}, IE{Type: IEv1TEIDControl, Value: c[:]}, name)
	case req.Version == 1 && req.Type == DeletePDPRequest:
		return Answer(req, DeletePDPResponse, v1ok, name)
	}
	return nil
}

// answerTo is req's GTPv2 answer of type typ, addressed to the TEID the
// request's sender gave (its Sender F-TEID for Control Plane), 0 without
// one.
func answerTo(req *Message, typ uint8, ies ...IE) []byte {
	m := Message{Header: Header{Version: 2, Type: typ, HasTEID: true, Seq: req.Seq}, IEs: ies}
	if ie, ok := req.Find(IEv2FTEID, 0, 0); ok && len(ie.Value) >= 5 {
		m.TEID = binary.BigEndian.Uint32(ie.Value[1:])
	}
	return m.Append(nil)
}

// SessionTEIDs are the control and user plane TEIDs the peer named label
// gives the session of imsi: the same every time, different for each
// peer and subscriber.
func SessionTEIDs(label, imsi string) (cp, up uint32) {
	h := fnv.New32a()
	h.Write([]byte(label + "/" + imsi))
	x := h.Sum32()
	return x | 1, x&^1 | 2
}

// Label is the responder's name in answer m, "" without one.
func Label(m *Message) string {
	ie, ok := m.Find(IEPrivateExtension, 0, 0)
	if !ok || len(ie.Value) < 2 {
		return ""
	}
	return string(ie.Value[2:])
}
