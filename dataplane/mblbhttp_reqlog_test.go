package dataplane

import (
	"regexp"
	"strings"
	"sync"
	"testing"

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
