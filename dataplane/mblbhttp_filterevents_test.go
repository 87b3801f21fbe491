package dataplane

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
)

// TestHTTPFilterEvents: HTTP_REJECT runs when the http filter rejects a
// client's request (one that cannot be read, past max-header-count),
// with HTTP::reject_reason saying why, and reject there resets the
// client instead of the 400; HTTP_DISABLED runs when the filter goes
// into passthrough (HTTP::disable, a CONNECT the member accepted), with
// HTTP::passthrough_reason saying why. Real clients, a real member.
func TestHTTPFilterEvents(t *testing.T) {
	t.Parallel()
	const vs, member = "127.130.2.1:80", "127.130.2.11:80"
	h2Member(t, member, "M")
	logRule := `
when HTTP_REQUEST { if { [HTTP::path] eq "/disable" } { HTTP::disable } }
when HTTP_REJECT { log local0. "reject [HTTP::reject_reason] [HTTP::reject_reason as_num]" }
when HTTP_DISABLED { log local0. "disabled [HTTP::passthrough_reason]" }`
	many := "GET / HTTP/1.1\r\nHost: x\r\n" + strings.Repeat("X-A: 1\r\n", 20) + "\r\n"
	for _, tc := range []struct {
		name, rule, send string
		status           int // 0: reset or closed unanswered
		log              string
	}{
		{"bad request answered 400", logRule, "NOT HTTP\r\n\r\n", 400, "reject Bad Request 1"},
		{"excess headers reset", logRule, many, 0, "reject Excess Client Headers 3"},
		{"reject in HTTP_REJECT resets", `when HTTP_REJECT { log local0. "rejecting"; reject }`, "NOT HTTP\r\n\r\n", 0, "rejecting"},
		{"HTTP::disable", logRule, "GET /disable HTTP/1.1\r\nHost: x\r\n\r\n", 200, "disabled iRule"},
		{"CONNECT accepted", logRule, "CONNECT x:443 HTTP/1.1\r\nHost: x:443\r\n\r\n", 200, "disabled Connect"},
		{"served: neither", logRule, "GET /plain HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := l7Config(t, vs, false, mblb.HTTPOptions{MaxHeaderCount: 8}, "", member)
			var lg *ruleLog
			cfg.Virtuals["/Common/vs"].Rules, lg = compileRules(t, tc.rule)
			p, _ := newPlane(t)
			mustApply(t, p, cfg)
			c, err := net.DialTimeout("tcp", vs, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.Write([]byte(tc.send))
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			status := 0
			if resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: strings.Fields(tc.send)[0]}); err == nil {
				status = resp.StatusCode
				if tc.status != 200 || !strings.HasPrefix(tc.send, "CONNECT") {
					io.Copy(io.Discard, resp.Body)
				}
			}
			if status != tc.status {
				t.Fatalf("status %d, want %d; log: %s", status, tc.status, lg)
			}
			got := ""
			for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
				if got = lg.String(); tc.log == "" || strings.Contains(got, tc.log) {
					break
				}
			}
			if tc.log == "" {
				if strings.Contains(got, "reject") || strings.Contains(got, "disabled") {
					t.Fatalf("an event ran for a request served: %s", got)
				}
			} else if !strings.Contains(got, tc.log) {
				t.Fatalf("log %q, want %q", got, tc.log)
			}
		})
	}
}
