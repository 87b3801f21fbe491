package state

import (
	"crypto/tls"
	"net"
	"net/netip"
	"strconv"
	"sync/atomic"
)

// Syslog severities, as sys db log.*.level names them: a subsystem logs
// a line when the line's severity is at or below its level.
const (
	SevError   = 3
	SevWarning = 4
	SevDebug   = 7
)

// SSLLog is the plane's log of failed client-ssl handshakes, at the
// level sys db log.ssl.level sets, as BIG-IP's tmm writes them to the
// ltm log (01260013). A handshake that succeeds costs nothing; a failed
// one a level check before any line is made. The zero value (and nil)
// logs nothing.
type SSLLog struct {
	level atomic.Int32 // the highest severity logged; 0 with no sink
	sink  atomic.Pointer[func(sev int, line string)]
}

// Set has lines of severity level and below (more severe) go to sink
// with their severity; a nil sink stops them.
func (l *SSLLog) Set(level int, sink func(sev int, line string)) {
	if sink == nil {
		l.level.Store(0)
		l.sink.Store(nil)
		return
	}
	l.sink.Store(&sink)
	l.level.Store(int32(level))
}

// Enabled reports whether a line of severity sev is logged, so that a
// site makes it only then.
func (l *SSLLog) Enabled(sev int) bool { return l != nil && int32(sev) <= l.level.Load() }

func (l *SSLLog) log(sev int, line string) {
	if s := l.sink.Load(); s != nil {
		(*s)(sev, line)
	}
}

// HandshakeFailed logs a failed handshake on conn, a client's (client
// true) or a member's: at warning BIG-IP's `01260013:4: SSL Handshake
// failed for TCP CLIENT -> VIRTUAL` (SELF -> MEMBER for a member), and at
// debug the reason as Go's TLS stack words it [M: BIG-IP's debug lines
// name its own state machine (ssl_hs_rxhello), not a Go error].
func (l *SSLLog) HandshakeFailed(conn *tls.Conn, client bool, err error) {
	if !l.Enabled(SevWarning) || conn == nil {
		return
	}
	from, to := logAddr(conn.RemoteAddr()), logAddr(conn.LocalAddr())
	if !client {
		from, to = to, from
	}
	l.log(SevWarning, "01260013:4: SSL Handshake failed for TCP "+from+" -> "+to)
	if l.Enabled(SevDebug) && err != nil {
		l.log(SevDebug, "01260009:7: "+from+" - "+to+": Connection error: "+err.Error())
	}
}

// logAddr writes an address as BIG-IP's logs do: IPv4 as a.b.c.d:port,
// IPv6 as addr.port.
func logAddr(a net.Addr) string {
	if a == nil {
		return "0.0.0.0:0"
	}
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return a.String()
	}
	ip := ap.Addr().Unmap()
	sep := ":"
	if ip.Is6() {
		sep = "."
	}
	return ip.String() + sep + strconv.Itoa(int(ap.Port()))
}
