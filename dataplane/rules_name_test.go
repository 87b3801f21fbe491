package dataplane

import (
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/rules"
)

// slowNameServer answers www.example at once and slow.example after
// delay, each with one A record; it stops with the test.
func slowNameServer(t *testing.T, addr string, delay time.Duration) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, q *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(q)
		rr := "www.example. 60 IN A 192.0.2.10"
		if q.Question[0].Name == "slow.example." {
			time.Sleep(delay)
			rr = "slow.example. 60 IN A 192.0.2.20"
		}
		a, _ := dns.NewRR(rr)
		m.Answer = append(m.Answer, a)
		w.WriteMsg(m)
	})}
	go srv.ActivateAndServe()
	t.Cleanup(func() { srv.Shutdown() })
	return pc.LocalAddr().String()
}

// nameRules compiles rule bodies with a resolver, as the daemon gives
// them one.
func nameRules(t *testing.T, body string) Rules {
	t.Helper()
	r, err := rules.Compile("/Common/r1", body)
	if err != nil {
		t.Fatal(err)
	}
	prog := rules.NewProgram(&rules.Env{Resolver: rules.DNSResolver{}}, r)
	if err := prog.Init(); err != nil {
		t.Fatal(err)
	}
	return NewRules(prog)
}

// TestRuleNameLookup: NAME::lookup in HTTP_REQUEST parks that request
// until the answer is in, NAME_RESOLVED answers it with NAME::response
// (the request still in hand), and the virtual's other clients are
// served meanwhile; on an L4 virtual CLIENT_ACCEPTED's lookup answers
// the client from NAME_RESOLVED.
func TestRuleNameLookup(t *testing.T) {
	t.Parallel()
	ns := slowNameServer(t, "127.132.3.53:0", 1200*time.Millisecond)
	t.Run("HTTP", func(t *testing.T) {
		startHTTPServer(t, "127.132.3.2:80", "W")
		p, _ := newPlane(t)
		cfg := mblbConfig("127.132.3.1:80", &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}, "127.132.3.2:80")
		cfg.Virtuals["/Common/vs"].Rules = nameRules(t, `when HTTP_REQUEST {
    if {[HTTP::path] eq "/slow"} { NAME::lookup @`+ns+` slow.example } elseif {[HTTP::path] eq "/fast"} { NAME::lookup @`+ns+` www.example }
}
when NAME_RESOLVED {
    HTTP::respond 200 content "[HTTP::path]=[NAME::response]"
}`)
		mustApply(t, p, cfg)
		slow := make(chan string, 1)
		sc := dialHTTPVS(t, "127.132.3.1:80")
		go func() {
			r, body, err := sc.do(httpReq("a", "/slow"))
			if err != nil || r.StatusCode != http.StatusOK {
				slow <- "error: " + errString(err)
				return
			}
			slow <- body
		}()
		for i := 0; i < 4; i++ {
			r, body, err := dialHTTPVS(t, "127.132.3.1:80").do(httpReq("a", "/fast"))
			if err != nil || r.StatusCode != http.StatusOK || body != "/fast=192.0.2.10" {
				t.Fatalf("fast client %d: %v %q", i, err, body)
			}
			r, body, err = dialHTTPVS(t, "127.132.3.1:80").do(httpReq("a", "/other"))
			if err != nil || r.StatusCode != http.StatusOK || !strings.HasPrefix(body, "W ") {
				t.Fatalf("client %d without a lookup: %v %q", i, err, body)
			}
			select {
			case got := <-slow:
				t.Fatalf("the parked request was answered (%q) before the other clients", got)
			default:
			}
		}
		select {
		case got := <-slow:
			if got != "/slow=192.0.2.20" {
				t.Errorf("parked request: %q", got)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the parked request was never answered")
		}
	})
	t.Run("L4", func(t *testing.T) {
		p, _ := newPlane(t)
		cfg := basic("127.132.3.3:8000", "127.132.3.4:9000")
		cfg.Virtuals["/Common/vs"].Rules = nameRules(t, `when CLIENT_ACCEPTED { NAME::lookup @`+ns+` www.example }
when NAME_RESOLVED { TCP::respond "[NAME::response]\n"; TCP::close }`)
		mustApply(t, p, cfg)
		got, _ := readAll(t, dial(t, "127.132.3.3:8000"))
		if got != "192.0.2.10\n" {
			t.Errorf("L4: %q, want NAME_RESOLVED's answer", got)
		}
	})
}
