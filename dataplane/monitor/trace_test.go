package monitor

import (
	"net"
	"net/netip"
	"regexp"
	"testing"
	"time"
)

// TestDebugTrace: a traced udp or database monitor writes a line per
// probe with what it sent, what it received and its verdict; an
// untraced one writes none. Real probes of a UDP echo server and the fake
// PostgreSQL server on loopback.
func TestDebugTrace(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.17.7.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	go func() {
		buf := make([]byte, 512)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			pc.WriteTo(append([]byte("pong "), buf[:n]...), from)
		}
	}()
	udpTarget := netip.MustParseAddrPort(pc.LocalAddr().String())
	pg := &pgServer{user: "mon", password: "pw", rows: [][]string{{"ready", "1"}}, seen: make(chan string, 64), addr: "127.17.7.2:0"}
	pgTarget := pg.start(t)
	for _, c := range []struct {
		name   string
		spec   Spec
		target netip.AddrPort
		want   string // a regexp the first line must match; "": no line
	}{
		{"udp debug", Spec{Name: "/Common/u", Type: UDP, Send: "ping", Recv: regexp.MustCompile("pong"), Debug: true}, udpTarget,
			`^Monitor /Common/u 127\.17\.7\.1:\d+ \(udp\): sent "ping"; received "pong ping"; up$`},
		{"udp no match", Spec{Name: "/Common/u2", Type: UDP, Send: "ping", Recv: regexp.MustCompile("ready"), Debug: true}, udpTarget,
			`received "pong ping"; down: No successful responses received before deadline$`},
		{"postgresql debug", Spec{Name: "/Common/pg", Type: PostgreSQL, Debug: true,
			DB: &DBCheck{Username: "mon", Password: "pw", Database: "app", Send: "SELECT status, n FROM health", Recv: "ready"}}, pgTarget,
			`^Monitor /Common/pg 127\.17\.7\.2:\d+ \(postgresql\): login as "mon" to database "app"; query "SELECT status, n FROM health"; answered 1 rows, the first \["ready" "1"\]; up$`},
		{"no debug", Spec{Name: "/Common/u3", Type: UDP, Send: "ping", Recv: regexp.MustCompile("pong")}, udpTarget, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.spec.Interval, c.spec.Timeout = 50*time.Millisecond, 300*time.Millisecond
			lines := make(chan string, 64)
			probed := make(chan bool, 64)
			// The caller traces monitors with debug (or a node's with
			// logging); the others start untraced.
			trace := func(l string) { lines <- l }
			if !c.spec.Debug {
				trace = nil
			}
			in := StartTraced(&c.spec, c.target, func(State) {}, trace)
			defer in.Stop()
			in.WhenProbed(func(up bool) { probed <- up })
			select {
			case <-probed:
			case <-time.After(5 * time.Second):
				t.Fatal("no probe")
			}
			if c.want == "" {
				select {
				case l := <-lines:
					t.Fatalf("a line without debug: %s", l)
				default:
				}
				return
			}
			select {
			case l := <-lines:
				if !regexp.MustCompile(c.want).MatchString(l) {
					t.Errorf("trace %q, want %s", l, c.want)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("no trace line")
			}
		})
	}
}
