package fix

import (
	"strconv"
	"time"
)

// Log is a fix profile's log publishers: message-log-publisher gets
// every message of its sessions, both ways, so that a desk can audit
// what went through the system; report-log-publisher gets the errors
// (malformed messages, and what was done with them) and, every
// statistics-sample-interval seconds, a status report of the counts.
// BIG-IP does not document its lines; openltm's are [M]:
//
//	<134>fix /Common/prof /Common/vs: client 10.0.0.1:40000 -> server 10.0.1.1:9878: 8=FIX.4.4|9=..|35=A|...|10=123|
//	<131>fix /Common/prof /Common/vs: client 10.0.0.1:40000 -> server 10.0.1.1:9878: malformed message (bad checksum): dropped
//	<134>fix /Common/prof /Common/vs: status: from-clients 12 from-servers 11 malformed 1 mapped 3
//
// local0.info (134) for messages and status, local0.err (131) for
// errors; the message's SOH separators are written as "|", as FIX logs
// commonly show them; "server none" before the member is chosen.
type Log struct {
	// Message and Report are the publishers' full paths ("": none).
	Message, Report string
	// Interval is statistics-sample-interval: the least time between
	// two status reports; 0: none.
	Interval time.Duration
	// Send gives a line to the publisher of that name in the running
	// configuration (nothing when it is gone).
	Send func(publisher string, line []byte) bool
}

// Syslog priorities of the lines [M].
const (
	priInfo = "<134>"
	priErr  = "<131>"
)

// head starts a line: PRI, "fix PROFILE VIRTUAL: ".
func (l *Log) head(pri, profile, virtual string, n int) []byte {
	b := make([]byte, 0, len(pri)+len(profile)+len(virtual)+n+16)
	b = append(b, pri...)
	b = append(b, "fix "...)
	b = append(b, profile...)
	b = append(b, ' ')
	b = append(b, virtual...)
	b = append(b, ": "...)
	return b
}

// flow appends "client C -> server S" or, for the member's message
// (fromServer), "server S -> client C".
func flow(b []byte, fromServer bool, client, server string) []byte {
	if server == "" {
		server = "none"
	}
	if fromServer {
		b = append(b, "server "...)
		b = append(b, server...)
		b = append(b, " -> client "...)
		return append(b, client...)
	}
	b = append(b, "client "...)
	b = append(b, client...)
	b = append(b, " -> server "...)
	return append(b, server...)
}

// LogsMessages reports whether message-log-publisher is set.
func (l *Log) LogsMessages() bool { return l != nil && l.Message != "" && l.Send != nil }

// LogsReports reports whether report-log-publisher is set.
func (l *Log) LogsReports() bool { return l != nil && l.Report != "" && l.Send != nil }

// Msg sends raw, a whole message read from the client (or from the
// member: fromServer), to message-log-publisher.
func (l *Log) Msg(profile, virtual string, fromServer bool, client, server string, raw []byte) {
	if !l.LogsMessages() {
		return
	}
	b := l.head(priInfo, profile, virtual, len(client)+len(server)+len(raw)+32)
	b = flow(b, fromServer, client, server)
	b = append(b, ": "...)
	for _, c := range raw {
		if c == SOH {
			c = '|'
		}
		b = append(b, c)
	}
	l.Send(l.Message, b)
}

// Malformed tells report-log-publisher that a message was refused for
// reason, and what was done (action: "dropped", "connection reset").
func (l *Log) Malformed(profile, virtual string, fromServer bool, client, server, reason, action string) {
	if !l.LogsReports() {
		return
	}
	b := l.head(priErr, profile, virtual, len(client)+len(server)+len(reason)+64)
	b = flow(b, fromServer, client, server)
	b = append(b, ": malformed message ("...)
	b = append(b, reason...)
	b = append(b, "): "...)
	b = append(b, action...)
	l.Send(l.Report, b)
}

// Status sends a status report of c to report-log-publisher when the
// interval has passed since the last one (now in Unix nanoseconds); the
// first message after the interval sends it, so an idle virtual sends
// none [M]. One of the flows racing for the same report wins.
func (l *Log) Status(profile, virtual string, c *Counts, now int64) {
	if !l.LogsReports() || l.Interval <= 0 {
		return
	}
	last := c.reported.Load()
	if last == 0 {
		c.reported.CompareAndSwap(0, now) // the first interval starts here
		return
	}
	if now-last < int64(l.Interval) || !c.reported.CompareAndSwap(last, now) {
		return
	}
	b := l.head(priInfo, profile, virtual, 96)
	b = append(b, "status: from-clients "...)
	b = strconv.AppendUint(b, c.FromClient.Load(), 10)
	b = append(b, " from-servers "...)
	b = strconv.AppendUint(b, c.FromServer.Load(), 10)
	b = append(b, " malformed "...)
	b = strconv.AppendUint(b, c.Malformed.Load(), 10)
	b = append(b, " mapped "...)
	b = strconv.AppendUint(b, c.Mapped.Load(), 10)
	l.Send(l.Report, b)
}
