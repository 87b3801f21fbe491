package tlsprof

import (
	"net"
)

// FailureLog is a profile's log-publisher: each handshake that fails is
// told to it in BIG-IP's words, so that an administrator sees through a
// remote syslog or the local log which clients (or members) could not
// agree with the virtual, and why.
type FailureLog struct {
	// Publisher is the sys log-config publisher's full path.
	Publisher string
	// Send gives a line to the publisher of that name in the running
	// configuration (nothing when it is gone).
	Send func(publisher string, line []byte) bool
}

// Publishes reports whether the profile names a log-publisher: its
// failed handshakes then go there instead of the ltm log, as a BIG-IP
// profile's log-publisher replaces the default sys-ssl-publisher.
func (l *FailureLog) Publishes() bool { return l != nil && l.Send != nil }

// failurePRI is local0.warning, the facility and severity of BIG-IP's
// tmm lines about SSL handshakes [M].
const failurePRI = "<132>"

// Failed tells the publisher that the handshake on c ended with err: a
// line "01260013:4: SSL Handshake failed for TCP FROM -> TO" and one with
// the reason, "01260009:4: FROM -> TO: Connection error: REASON", FROM
// being the side that opened the connection (the client; the system
// toward a member, serverSide). A nil log, a nil c or a nil err sends
// nothing.
func (l *FailureLog) Failed(c net.Conn, serverSide bool, err error) {
	if l == nil || c == nil || err == nil || l.Send == nil {
		return
	}
	from, to := c.RemoteAddr(), c.LocalAddr()
	if serverSide {
		from, to = to, from
	}
	if from == nil || to == nil {
		return
	}
	b := make([]byte, 0, 160)
	b = append(b, failurePRI+"01260013:4: SSL Handshake failed for TCP "...)
	b = append(b, from.String()...)
	b = append(b, " -> "...)
	b = append(b, to.String()...)
	l.Send(l.Publisher, b)
	b = append(b[:0], failurePRI+"01260009:4: "...)
	b = append(b, from.String()...)
	b = append(b, " -> "...)
	b = append(b, to.String()...)
	b = append(b, ": Connection error: "...)
	b = append(b, err.Error()...)
	l.Send(l.Publisher, b)
}
