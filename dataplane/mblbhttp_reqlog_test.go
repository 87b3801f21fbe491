package dataplane

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/hsl"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/reqlog"
)

// lineSink keeps the lines a request-log profile sends.
type lineSink struct {
	mu    sync.Mutex
	lines []string
}

func (s *lineSink) send(b []byte) bool {
	s.mu.Lock()
	s.lines = append(s.lines, string(b))
	s.mu.Unlock()
	return true
}

func (s *lineSink) all() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.lines...)
}

// TestRequestLogProfile: an HTTP virtual with a request-log profile
// sends a line per request as it leaves for its member and one per
// response as it comes back, with and without OneConnect.
func TestRequestLogProfile(t *testing.T) {
	startL7Member(t, "127.0.236.21:80", "M1")
	for _, tc := range []struct {
		name string
		vs   string
		oc   bool
	}{{"per-connection", "127.0.236.5:80", false}, {"oneconnect", "127.0.236.6:80", true}} {
		t.Run(tc.name, func(t *testing.T) {
			var reqs, resps lineSink
			rl := &mblb.RequestLog{
				Request:     reqlog.Parse(`REQ $CLIENT_IP $VIRTUAL_IP:$VIRTUAL_PORT $VIRTUAL_NAME "$HTTP_REQUEST" $Host ${X-Tag} -> $SERVER_IP:$SERVER_PORT`),
				Response:    reqlog.Parse(`RESP $HTTP_METHOD $HTTP_PATH $HTTP_STATCODE "$HTTP_STATUS" $RESPONSE_SIZE ${X-Member} $RESPONSE_MSECS $HTTP_KEEPALIVE`),
				SendRequest: reqs.send, SendResponse: resps.send, VirtualName: "/Common/vs",
			}
			p, lg := newPlane(t)
			mustApply(t, p, l7Config(t, tc.vs, tc.oc, mblb.HTTPOptions{RequestLog: rl}, "", "127.0.236.21:80"))
			c := dialHTTPVS(t, tc.vs)
			for _, path := range []string{"/one", "/two?x=1"} {
				if _, _, err := c.do("GET " + path + " HTTP/1.1\r\nHost: www.example\r\nX-Tag: t1\r\n\r\n"); err != nil {
					t.Fatalf("%s: %v (log %s)", path, err, lg)
				}
			}
			wantReq := []string{
				`REQ 127.0.0.1 ` + tc.vs + ` /Common/vs "GET /one HTTP/1.1" www.example t1 -> 127.0.236.21:80`,
				`REQ 127.0.0.1 ` + tc.vs + ` /Common/vs "GET /two?x=1 HTTP/1.1" www.example t1 -> 127.0.236.21:80`,
			}
			if got := reqs.all(); strings.Join(got, "\n") != strings.Join(wantReq, "\n") {
				t.Errorf("request lines:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantReq, "\n"))
			}
			re := regexp.MustCompile(`^RESP GET (/one|/two) 200 "200 OK" \d+ M1 \d+ 1$`)
			got := resps.all()
			if len(got) != 2 || !re.MatchString(got[0]) || !re.MatchString(got[1]) {
				t.Errorf("response lines: %q", got)
			}
		})
	}
}

// udpLines keeps the datagrams a UDP log server receives.
func udpLines(t *testing.T, addr string) *lineSink {
	t.Helper()
	c, err := net.ListenPacket("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	s := &lineSink{}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, _, err := c.ReadFrom(buf)
			if err != nil {
				return
			}
			s.send(append([]byte(nil), buf[:n]...))
		}
	}()
	return s
}

// waitLines waits (5s at most) for s to hold n lines.
func waitLines(t *testing.T, s *lineSink, n int) []string {
	t.Helper()
	for i := 0; i < 500; i++ {
		if got := s.all(); len(got) >= n {
			return got
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("log server has %q, want %d lines", s.all(), n)
	return nil
}

// TestRequestLogErrors: a request-log profile whose logging pool cannot
// take the line (no member available, or its member refuses the TCP
// connection) writes the error template's line to the error pool, and
// with proxy-respond-on-logging-error answers the client with the
// proxy-response instead of forwarding, closing the connection after
// it with proxy-close-on-error. Real log servers, a real member, real
// high-speed logging senders.
func TestRequestLogErrors(t *testing.T) {
	member := startL7Member(t, "127.17.1.21:80", "M1")
	errs := udpLines(t, "127.17.1.51:5514")
	good := udpLines(t, "127.17.1.52:5514")
	members := map[string][]netip.AddrPort{
		"/Common/empty":    nil,                      // every member down
		"/Common/refuses":  {ap("127.17.1.50:5999")}, // nothing listens
		"/Common/refuses2": {ap("127.17.1.50:5998")},
		"/Common/errors":   {ap("127.17.1.51:5514")}, // the error log server
		"/Common/good":     {ap("127.17.1.52:5514")}, // a working log server
	}
	hub := hsl.New(hsl.Options{Members: func(pool string) ([]netip.AddrPort, error) {
		ms, ok := members[pool]
		if !ok {
			return nil, fmt.Errorf("no pool %s", pool)
		}
		return ms, nil
	}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Cleanup(hub.Close)
	sender := func(proto, pool string) (func([]byte) bool, mblb.RequestLogSend) {
		h, err := hub.Open(proto, pool)
		if err != nil {
			t.Fatal(err)
		}
		return func(b []byte) bool { ok, _ := hub.Send(h, b); return ok },
			func(b []byte, dropped func([]byte)) bool { return hub.SendChecked(h, b, dropped) }
	}
	errSend, _ := sender("UDP", "/Common/errors")
	for i, tc := range []struct {
		name, proto, pool string
		respond, close    bool
		// answered: which of the two requests get the proxy response
		// (the others their member's); errLines the error lines written.
		answered [2]bool
		errLines int
		goodLine bool
	}{
		{name: "pool-down-error-log", proto: "UDP", pool: "/Common/empty", errLines: 2},
		{name: "pool-down-respond", proto: "UDP", pool: "/Common/empty", respond: true, answered: [2]bool{true, true}, errLines: 2},
		{name: "pool-down-respond-close", proto: "UDP", pool: "/Common/empty", respond: true, close: true, answered: [2]bool{true, true}, errLines: 1},
		{name: "tcp-refused-error-log", proto: "TCP", pool: "/Common/refuses", errLines: 2},
		// The first line is queued (the sender has not tried the member
		// yet) and fails later; the second is refused at once.
		{name: "tcp-refused-respond", proto: "TCP", pool: "/Common/refuses2", respond: true, answered: [2]bool{false, true}, errLines: 2},
		{name: "logging-works", proto: "UDP", pool: "/Common/good", respond: true, goodLine: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := fmt.Sprintf("127.17.1.%d:80", 5+i)
			send, check := sender(tc.proto, tc.pool)
			rl := &mblb.RequestLog{
				Request:      reqlog.Parse(`REQ $HTTP_REQUEST`),
				SendRequest:  send,
				CheckRequest: check,
				RequestError: &mblb.ErrorLog{Template: reqlog.Parse(`LOST $CLIENT_IP "$HTTP_REQUEST"`), Send: errSend},
				VirtualName:  "/Common/vs",
			}
			if tc.respond {
				rl.Respond, rl.CloseOnError = mblb.LoggingErrorResponse("logging is down", tc.close), tc.close
			}
			before := len(errs.all())
			reqsBefore := member.reqs.Load()
			p, lg := newPlane(t)
			mustApply(t, p, l7Config(t, vs, false, mblb.HTTPOptions{RequestLog: rl}, "", "127.17.1.21:80"))
			c := dialHTTPVS(t, vs)
			for j, path := range []string{"/one", "/two"} {
				resp, body, err := c.do("GET " + path + " HTTP/1.1\r\nHost: www.example\r\n\r\n")
				if tc.close && j == 1 {
					if err == nil {
						t.Fatalf("%s: the connection is still open after the proxy response: %d %q", path, resp.StatusCode, body)
					}
					break
				}
				if err != nil {
					t.Fatalf("%s: %v (log %s)", path, err, lg)
				}
				if tc.answered[j] {
					if resp.StatusCode != 502 || body != "logging is down" {
						t.Fatalf("%s: %d %q, want the proxy response", path, resp.StatusCode, body)
					}
					if tc.close != resp.Close {
						t.Errorf("%s: Connection: close is %v", path, resp.Close)
					}
					continue
				}
				if resp.StatusCode != 200 || !strings.HasPrefix(body, "M1 GET "+path) {
					t.Fatalf("%s: %d %q, want the member's answer", path, resp.StatusCode, body)
				}
				if tc.proto == "TCP" && j == 0 {
					// The refused line is known only once the sender
					// tried it: wait for its error line.
					waitLines(t, errs, before+1)
				}
			}
			want := int32(0)
			for _, a := range tc.answered {
				if !a {
					want++
				}
			}
			if tc.close {
				want = 0
			}
			if got := member.reqs.Load() - reqsBefore; got != want {
				t.Errorf("the member got %d requests, want %d", got, want)
			}
			if tc.errLines > 0 {
				got := waitLines(t, errs, before+tc.errLines)[before:]
				if !strings.HasPrefix(got[0], `LOST 127.0.0.1 "GET /one HTTP/1.1"`) {
					t.Errorf("error lines %q", got)
				}
			}
			if tc.goodLine {
				if got := waitLines(t, good, 2); got[0] != "REQ GET /one HTTP/1.1" {
					t.Errorf("log lines %q", got)
				}
			}
			if tc.errLines == 0 && len(errs.all()) != before {
				t.Errorf("error lines written while logging works: %q", errs.all()[before:])
			}
		})
	}
}
