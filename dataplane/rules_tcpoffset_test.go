package dataplane

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/mblb"
)

// offsets are the numbers the rule logged after prefix, in order.
func offsets(lg *ruleLog, prefix string) []int {
	var out []int
	for _, l := range lg.Lines() {
		if _, v, ok := strings.Cut(l, prefix); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			out = append(out, n)
		}
	}
	return out
}

// TCP::offset on a standard virtual: where each side's collected data
// starts in its stream, with a real client and echoing member.
func TestRulesTCPOffset(t *testing.T) {
	t.Parallel()
	serveConns(t, "127.140.6.2:9000", func(c net.Conn) { rawEcho(c) })
	p, _ := newPlane(t)
	cfg := basic("127.140.6.1:8000", "127.140.6.2:9000")
	var lg *ruleLog
	cfg.Virtuals["/Common/vs"].Rules, lg = compileRules(t, `
when CLIENT_ACCEPTED { TCP::collect }
when CLIENT_DATA {
	log local0. "client [TCP::offset]"
	TCP::release
	TCP::collect
}
when SERVER_CONNECTED {
	log local0. "connected [TCP::offset]"
	TCP::collect
}
when SERVER_DATA {
	log local0. "server [TCP::offset]"
	TCP::release
	TCP::collect
}`)
	mustApply(t, p, cfg)
	lg.showOnFailure(t)
	c := dialFrom(t, "127.140.6.9", "127.140.6.1:8000")
	for _, m := range []string{"hello", "world!", "again"} {
		if got := c.mustAsk(m); got != m {
			t.Fatalf("echo %q, want %q", got, m)
		}
	}
	// Each message (with its newline) is one read either way.
	want := []int{0, 6, 13}
	if got := offsets(lg, "client "); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("client offsets %v, want %v", got, want)
	}
	if got := offsets(lg, "server "); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("server offsets %v, want %v", got, want)
	}
	if got := offsets(lg, "connected "); fmt.Sprint(got) != "[0]" {
		t.Fatalf("offset in SERVER_CONNECTED %v, want [0]", got)
	}
}

// TCP::offset on an HTTP virtual: in HTTP_REQUEST the bytes the client
// sent so far, in HTTP_RESPONSE those the response's server connection
// brought.
func TestRulesTCPOffsetHTTP(t *testing.T) {
	t.Parallel()
	startSourceHTTP(t, "127.140.6.12:80")
	p, _ := newPlane(t)
	cfg := mblbConfig("127.140.6.11:80", &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}, "127.140.6.12:80")
	cfg.Virtuals["/Common/vs"].SNAT = SNAT{}
	var lg *ruleLog
	cfg.Virtuals["/Common/vs"].Rules, lg = compileRules(t, `
when HTTP_REQUEST { log local0. "req [TCP::offset]" }
when HTTP_RESPONSE { log local0. "resp [TCP::offset]" }`)
	mustApply(t, p, cfg)
	lg.showOnFailure(t)
	c := dialHTTPVS(t, "127.140.6.11:80")
	r1, r2 := httpReq("a", "/one"), httpReq("a", "/second")
	for _, r := range []string{r1, r2} {
		if resp, _, err := c.do(r); err != nil || resp.StatusCode != 200 {
			t.Fatalf("request: %v %v", resp, err)
		}
	}
	if got, want := offsets(lg, "req "), []int{len(r1), len(r1) + len(r2)}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("request offsets %v, want %v", got, want)
	}
	if got := offsets(lg, "resp "); len(got) != 2 || got[0] <= 0 || got[1] <= got[0] {
		t.Fatalf("response offsets %v, want two, growing", got)
	}
}
