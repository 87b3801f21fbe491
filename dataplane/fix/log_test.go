package fix

import (
	"strings"
	"testing"
	"time"
)

type sink struct{ lines []string }

func (s *sink) send(pub string, line []byte) bool {
	s.lines = append(s.lines, pub+" "+string(line))
	return true
}

// TestLogLines: each line the profile's publishers get, and which
// publisher gets it.
func TestLogLines(t *testing.T) {
	raw := []byte("8=FIX.4.4\x019=5\x0135=0\x0110=123\x01")
	for _, tc := range []struct {
		name string
		log  Log
		do   func(l *Log)
		want []string
	}{
		{"client message", Log{Message: "/Common/m"}, func(l *Log) {
			l.Msg("/Common/p", "/Common/vs", false, "10.0.0.1:4000", "", raw)
		}, []string{"/Common/m <134>fix /Common/p /Common/vs: client 10.0.0.1:4000 -> server none: 8=FIX.4.4|9=5|35=0|10=123|"}},
		{"member message", Log{Message: "/Common/m"}, func(l *Log) {
			l.Msg("/Common/p", "/Common/vs", true, "10.0.0.1:4000", "10.0.1.1:9878", raw)
		}, []string{"/Common/m <134>fix /Common/p /Common/vs: server 10.0.1.1:9878 -> client 10.0.0.1:4000: 8=FIX.4.4|9=5|35=0|10=123|"}},
		{"no message publisher", Log{Report: "/Common/r"}, func(l *Log) {
			l.Msg("/Common/p", "/Common/vs", false, "10.0.0.1:4000", "", raw)
		}, nil},
		{"malformed", Log{Report: "/Common/r"}, func(l *Log) {
			l.Malformed("/Common/p", "/Common/vs", false, "10.0.0.1:4000", "10.0.1.1:9878", "bad sum", "dropped")
		}, []string{"/Common/r <131>fix /Common/p /Common/vs: client 10.0.0.1:4000 -> server 10.0.1.1:9878: malformed message (bad sum): dropped"}},
		{"no report publisher", Log{Message: "/Common/m"}, func(l *Log) {
			l.Malformed("/Common/p", "/Common/vs", false, "a", "b", "bad sum", "dropped")
		}, nil},
		{"status after the interval", Log{Report: "/Common/r", Interval: time.Second}, func(l *Log) {
			var c Counts
			c.FromClient.Add(3)
			c.FromServer.Add(2)
			c.Malformed.Add(1)
			base := int64(1e12)
			l.Status("/Common/p", "/Common/vs", &c, base)                        // starts the interval
			l.Status("/Common/p", "/Common/vs", &c, base+int64(time.Second)/2)   // too soon
			l.Status("/Common/p", "/Common/vs", &c, base+int64(time.Second))     // due
			l.Status("/Common/p", "/Common/vs", &c, base+int64(time.Second)*3/2) // too soon again
			c.Mapped.Add(4)
			l.Status("/Common/p", "/Common/vs", &c, base+int64(time.Second)*21/10) // due
		}, []string{
			"/Common/r <134>fix /Common/p /Common/vs: status: from-clients 3 from-servers 2 malformed 1 mapped 0",
			"/Common/r <134>fix /Common/p /Common/vs: status: from-clients 3 from-servers 2 malformed 1 mapped 4",
		}},
		{"no status without an interval", Log{Report: "/Common/r"}, func(l *Log) {
			var c Counts
			l.Status("/Common/p", "/Common/vs", &c, 1)
			l.Status("/Common/p", "/Common/vs", &c, int64(time.Hour))
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &sink{}
			l := tc.log
			l.Send = s.send
			tc.do(&l)
			if strings.Join(s.lines, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("got\n%s\nwant\n%s", strings.Join(s.lines, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
	// A nil log or one without a sender sends nothing and does not fail.
	var l *Log
	l.Msg("p", "v", false, "c", "s", raw)
	l.Malformed("p", "v", false, "c", "s", "r", "dropped")
	(&Log{Message: "/Common/m", Report: "/Common/r", Interval: time.Second}).Status("p", "v", &Counts{}, 5)
}
