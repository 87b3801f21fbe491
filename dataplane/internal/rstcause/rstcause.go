// Package rstcause reports the resets the dataplane sends with their
// cause, as BIG-IP's `sys db tm.rstcause.log` does: one line per reset in
// the ltm log (01230140). Every reset site of the data paths calls
// Log.Reset with a Cause; while the key is disabled that is one atomic
// load and nothing else, so the sites need no check of their own.
package rstcause

import (
	"net/netip"
	"strconv"
	"sync/atomic"
	"time"
)

// Cause is why a reset was sent; its words and tag are in causes.
type Cause uint8

// The causes the data paths report. The words are BIG-IP's where the
// cause has a BIG-IP counterpart; the tag stands where BIG-IP prints the
// code location of the reset ([0x2a7c4e0:2511]), stable across builds.
const (
	None Cause = iota
	NoServer
	ConnectRefused
	ConnectTimeout
	IdleTimeout
	RuleReject
	ConnLimit
	NoListener
	VirtualDisabled
	RejectVirtual
	ServiceDown
	RateLimit
	TLSHandshake
	HeaderTooLarge
	QueueFull
	PeerReset
	TCLError
	AlertTimeout
	ServerFailed
	MQTTMalformed
	FIXMalformed
	RTSPMalformed
	LDAPMalformed
	LDAPStartTLS
	DiameterMalformed
	DiameterTimeout
	DiameterHandshake
	LSNPort
	PacketFilter
	SNATLimit
	SNATPort
	numCauses
)

// Peer marks a cause that arose on the other side of the proxy: the
// reset passes on what happened to the peer flow, and the line says
// "{peer}" before the words, as BIG-IP's does (a member's reset passed
// to the client: `{peer} TCP RST from remote system`).
const Peer Cause = 0x80

// causes are each cause's tag and words.
var causes = [numCauses]struct{ tag, text string }{
	None:              {"none", "Unknown reason"},
	NoServer:          {"lb", "No server selected"},
	ConnectRefused:    {"connect", "TCP 3WHS rejected"},
	ConnectTimeout:    {"connect-timeout", "Handshake timeout"},
	IdleTimeout:       {"idle", "Idle timeout (clientside)"},
	RuleReject:        {"rule", "iRule execution (reject)"},
	ConnLimit:         {"limit", "Connection limit reached"},
	NoListener:        {"listener", "No local listener"},
	VirtualDisabled:   {"disabled", "Virtual server disabled"},
	RejectVirtual:     {"reject", "Reject virtual"},
	ServiceDown:       {"service-down", "Service down (immediate action)"},
	RateLimit:         {"rate", "Rate limit reached"},
	TLSHandshake:      {"ssl", "SSL handshake failed"},
	HeaderTooLarge:    {"http", "HTTP header exceeded maximum allowed size"},
	QueueFull:         {"queue", "Connection queue full"},
	PeerReset:         {"peer-rst", "TCP RST from remote system"},
	TCLError:          {"tcl", "TCL error"},
	AlertTimeout:      {"ssl-alert", "SSL alert timeout exceeded"},
	ServerFailed:      {"server", "Server connection failed"},
	MQTTMalformed:     {"mqtt", "MQTT message malformed"},                       // [M]
	FIXMalformed:      {"fix", "FIX message malformed"},                         // [M]
	LDAPMalformed:     {"ldap", "LDAP message malformed"},                       // [M]
	LDAPStartTLS:      {"ldap-starttls", "LDAP StartTLS failed"},                // [M]
	RTSPMalformed:     {"rtsp", "RTSP message malformed"},                       // [M]
	DiameterMalformed: {"diameter", "Diameter message malformed"},               // [M]
	DiameterTimeout:   {"diameter", "Diameter retransmission failed"},           // [M]
	DiameterHandshake: {"diameter", "Diameter capabilities exchange timed out"}, // [M]
	LSNPort:           {"lsn", "LSN port allocation failure"},                   // [M]
	PacketFilter:      {"packet-filter", "Packet filter reject"},                // [M]
	SNATLimit:         {"snat", "SNAT translation connection limit reached"},    // [M]
	SNATPort:          {"snat", "SNAT source port in use (preserve-strict)"},    // [M]
}

// String is the cause's words, as the log line ends.
func (c Cause) String() string {
	c &^= Peer
	if c >= numCauses {
		c = None
	}
	return causes[c].text
}

// Tag is the cause's short code location.
func (c Cause) Tag() string {
	c &^= Peer
	if c >= numCauses {
		c = None
	}
	return causes[c].tag
}

// Sink takes one finished line (without the syslog header).
type Sink func(line string)

// Log is the plane's reset-cause reporter; its zero value reports
// nothing. A nil *Log reports nothing either, so engines built without
// one need no check.
type Log struct {
	on   atomic.Bool
	sink atomic.Pointer[Sink]

	// The reject rate (sys db tm.maxrejectrate): max is the resets a
	// second allowed plus one, 0 for no limit; n counts the refusals of
	// second win; over those refused a reset since the limit was reached;
	// warn takes the 011e0001 line.
	max  atomic.Uint64
	win  atomic.Int64
	n    atomic.Uint64
	over atomic.Uint64
	warn atomic.Pointer[Sink]
}

// Set turns reporting on with s taking the lines, or off with nil.
func (l *Log) Set(s Sink) {
	if s == nil {
		l.on.Store(false)
		l.sink.Store(nil)
		return
	}
	l.sink.Store(&s)
	l.on.Store(true)
}

// On reports whether resets are logged, for a site whose cause costs
// something to work out.
func (l *Log) On() bool { return l != nil && l.on.Load() }

// Reset reports a reset sent from one address to another (the virtual
// server's to the client's, or the self or SNAT address's to the
// member's) with its cause; area names the data path (l4, http, ...).
func (l *Log) Reset(area string, from, to netip.AddrPort, c Cause) {
	if l == nil || !l.on.Load() {
		return
	}
	s := l.sink.Load()
	if s == nil {
		return
	}
	(*s)(Line(area, from, to, c))
}

// Line is the log line of one reset, as BIG-IP writes it after the
// syslog header: `01230140:6: RST sent from 10.1.1.10:80 to
// 10.2.2.2:51234, [l4:lb] No server selected`.
func Line(area string, from, to netip.AddrPort, c Cause) string {
	b := make([]byte, 0, 128)
	b = append(b, "01230140:6: RST sent from "...)
	b = appendAddr(b, from)
	b = append(b, " to "...)
	b = appendAddr(b, to)
	b = append(b, ", ["...)
	b = append(b, area...)
	b = append(b, ':')
	b = append(b, c.Tag()...)
	b = append(b, "] "...)
	if c&Peer != 0 {
		b = append(b, "{peer} "...)
	}
	b = append(b, c.String()...)
	return string(b)
}

// appendAddr writes an address as BIG-IP's logs do: IPv4 as a.b.c.d:port,
// IPv6 as addr.port (BIG-IP's own separator for IPv6 flows).
func appendAddr(b []byte, ap netip.AddrPort) []byte {
	a := ap.Addr().Unmap()
	if !a.IsValid() {
		return append(b, "0.0.0.0:0"...)
	}
	b = a.AppendTo(b)
	if a.Is4() {
		b = append(b, ':')
	} else {
		b = append(b, '.')
	}
	return strconv.AppendUint(b, uint64(ap.Port()), 10)
}

// SetRejectRate limits the resets sent to clients a virtual server
// refuses to max a second, as BIG-IP's tm.maxrejectrate limits its
// resets for packets it will not take (0 sends none); warn takes the
// 011e0001 line of a second over the limit. A negative max lifts the
// limit (a plane no daemon configures).
func (l *Log) SetRejectRate(max int64, warn Sink) {
	if warn != nil {
		l.warn.Store(&warn)
	} else {
		l.warn.Store(nil)
	}
	l.win.Store(0) // a new rate counts afresh
	l.n.Store(0)
	if max < 0 {
		l.max.Store(0)
		return
	}
	l.max.Store(uint64(max) + 1)
}

// Refuse reports whether a refused client may be reset: false once this
// second's refusals are over the reject rate, and the site closes the
// connection without a reset instead [M: BIG-IP drops the packet; a
// socket the kernel has accepted can only be closed]. Without a limit it
// is one atomic load.
func (l *Log) Refuse() bool {
	if l == nil {
		return true
	}
	max := l.max.Load()
	if max == 0 {
		return true
	}
	now := unixNow()
	if w := l.win.Load(); w != now && l.win.CompareAndSwap(w, now) {
		l.n.Store(0)
	}
	n := l.n.Add(1)
	if n < max {
		return true
	}
	if n == max {
		// The first refusal over the limit this second: the line is
		// written when the second ends, with the second's count.
		l.over.Store(0)
		afterFunc(time.Until(time.Unix(now+1, 0)), func() { l.report(max - 1) })
	}
	l.over.Add(1)
	return false
}

// report writes the line of a second over the limit, as BIG-IP's tmm
// does: `011e0001:4: Limiting open port RST response from 251 to 250
// packets/sec`.
func (l *Log) report(limit uint64) {
	w := l.warn.Load()
	if w == nil {
		return
	}
	b := make([]byte, 0, 96)
	b = append(b, "011e0001:4: Limiting open port RST response from "...)
	b = strconv.AppendUint(b, limit+l.over.Load(), 10)
	b = append(b, " to "...)
	b = strconv.AppendUint(b, limit, 10)
	b = append(b, " packets/sec"...)
	(*w)(string(b))
}

// unixNow is the second a refusal counts in, and afterFunc runs the
// report when it ends (a test's clock and timer).
var (
	unixNow   = func() int64 { return time.Now().Unix() }
	afterFunc = func(d time.Duration, f func()) { time.AfterFunc(d, f) }
)
