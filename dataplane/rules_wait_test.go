package dataplane

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
)

// TestRuleWaitTarpit: `after ms` in HTTP_REQUEST suspends that request
// alone, past the event's 500 ms of work (a tarpit as BIG-IP users write
// it): the slowed client is answered afterwards, by its member, and the
// virtual's other clients are served meanwhile (its clients are on
// goroutines, not on the event loops a wait would hold up). The same on
// an L4 virtual in CLIENT_ACCEPTED.
func TestRuleWaitTarpit(t *testing.T) {
	t.Parallel()
	t.Run("HTTP", func(t *testing.T) {
		startHTTPServer(t, "127.11.5.2:80", "W")
		p, _ := newPlane(t)
		cfg := mblbConfig("127.11.5.1:80", &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}, "127.11.5.2:80")
		cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `when HTTP_REQUEST {
    if {[HTTP::path] eq "/login"} { after 3000 }
    HTTP::header insert X-Waited [HTTP::path]
}`)
		mustApply(t, p, cfg)
		slow := make(chan string, 1)
		sc := dialHTTPVS(t, "127.11.5.1:80")
		go func() {
			r, body, err := sc.do(httpReq("a", "/login"))
			if err != nil || r.StatusCode != http.StatusOK {
				slow <- "error: " + errString(err)
				return
			}
			slow <- body
		}()
		// Six other clients, one request each, all answered while the
		// tarpitted one still waits (3 s, against a few ms for these: a wide
		// margin, so that a loaded machine does not turn the order round).
		for i := 0; i < 6; i++ {
			r, body, err := dialHTTPVS(t, "127.11.5.1:80").do(httpReq("a", "/fast"))
			if err != nil || r.StatusCode != http.StatusOK || !strings.HasPrefix(body, "W") {
				t.Fatalf("fast client %d: %v %q", i, err, body)
			}
			select {
			case got := <-slow:
				t.Fatalf("the tarpitted request was answered (%q) before the other clients", got)
			default:
			}
		}
		select {
		case got := <-slow:
			if !strings.HasPrefix(got, "W") {
				t.Errorf("tarpitted request: %q, want the member's answer", got)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the tarpitted request was never answered")
		}
	})
	t.Run("L4", func(t *testing.T) {
		p, _ := newPlane(t)
		cfg := basic("127.11.5.3:8000", "127.11.5.4:9000")
		cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `when CLIENT_ACCEPTED { after 700; TCP::respond "late\n"; TCP::close }`)
		mustApply(t, p, cfg)
		got, _ := readAll(t, dial(t, "127.11.5.3:8000"))
		if got != "late\n" {
			t.Errorf("L4: %q, want the rule's answer after its wait", got)
		}
	})
}

func errString(err error) string {
	if err == nil {
		return "status"
	}
	return err.Error()
}
