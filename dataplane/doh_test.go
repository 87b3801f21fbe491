package dataplane

import (
	"bytes"
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// dohMember is a DNS member on UDP and TCP: A records for every name;
// over UDP, a name under big. gets an empty answer with TC set, which
// only TCP answers whole.
func dohMember(t *testing.T, addr string) {
	t.Helper()
	h := dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		name := r.Question[0].Name
		if strings.HasSuffix(name, "big.") && w.RemoteAddr().Network() == "udp" {
			m.Truncated = true
			w.WriteMsg(m)
			return
		}
		n := 1
		if strings.HasSuffix(name, "big.") {
			n = 40
		}
		for i := range n {
			rr, _ := dns.NewRR(name + " 77 IN A 192.0.2." + string(rune('1'+i%9)))
			m.Answer = append(m.Answer, rr)
		}
		w.WriteMsg(m)
	})
	for _, network := range []string{"udp", "tcp"} {
		started := make(chan struct{})
		srv := &dns.Server{Addr: addr, Net: network, Handler: h, NotifyStartedFunc: func() { close(started) }}
		go srv.ListenAndServe()
		select {
		case <-started:
		case <-time.After(5 * time.Second):
			t.Fatalf("the DNS member on %s/%s did not start", addr, network)
		}
		t.Cleanup(func() { srv.Shutdown() })
	}
}

// dohAsk sends a DoH query for name (GET or POST) with client to url and
// returns the answer.
func dohAsk(t *testing.T, client *http.Client, url, name string, post bool) (*dns.Msg, *http.Response) {
	t.Helper()
	q := new(dns.Msg)
	q.SetQuestion(name, dns.TypeA)
	q.Id = 0
	wire, _ := q.Pack()
	var req *http.Request
	if post {
		req, _ = http.NewRequest("POST", url, bytes.NewReader(wire))
		req.Header.Set("Content-Type", "application/dns-message")
	} else {
		req, _ = http.NewRequest("GET", url+"?dns="+base64.RawURLEncoding.EncodeToString(wire), nil)
	}
	req.Header.Set("Accept", "application/dns-message")
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		return nil, res
	}
	m := new(dns.Msg)
	if err := m.Unpack(body); err != nil {
		t.Fatalf("%s: the answer does not unpack: %v", name, err)
	}
	return m, res
}

func TestDoHVirtual(t *testing.T) {
	dohMember(t, "127.171.2.11:5353")
	p, _ := newPlane(t)
	cfg := basic("127.171.2.1:8053", "127.171.2.11:5353")
	cfg.Virtuals["/Common/vs"].DoH = &DoH{Profile: "doh-proxy /Common/doh-proxy", Proxy: true, ALPN: true, H2C: true}
	srv := basic("127.171.2.2:8053", "127.171.2.11:5353").Virtuals["/Common/vs"]
	srv.Name = "/Common/vs_server"
	srv.DoH = &DoH{Profile: "doh-server /Common/doh-server"}
	srv.DNS = &DNSProfile{Name: "/Common/dns", Unhandled: "allow"}
	cfg.Virtuals[srv.Name] = srv
	rej := basic("127.171.2.3:8053", "127.171.2.11:5353").Virtuals["/Common/vs"]
	rej.Name = "/Common/vs_reject"
	rej.DoH = &DoH{Profile: "doh-server /Common/doh-server"}
	rej.DNS = &DNSProfile{Name: "/Common/dns_reject", Unhandled: "reject"}
	cfg.Virtuals[rej.Name] = rej
	mustApply(t, p, cfg)

	h1 := &http.Client{Timeout: 5 * time.Second}
	var unencrypted http.Protocols
	unencrypted.SetUnencryptedHTTP2(true) // prior knowledge, as dig +http-plain
	h2c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{Protocols: &unencrypted}}
	for _, tc := range []struct {
		name, url string
		client    *http.Client
		post      bool
		qname     string
		records   int
		rcode     int
	}{
		{"proxy, http/1.1 get", "http://127.171.2.1:8053/dns-query", h1, false, "www.example.", 1, dns.RcodeSuccess},
		{"proxy, http/1.1 post", "http://127.171.2.1:8053/dns-query", h1, true, "www.example.", 1, dns.RcodeSuccess},
		{"proxy, h2c post", "http://127.171.2.1:8053/dns-query", h2c, true, "www.example.", 1, dns.RcodeSuccess},
		{"proxy, truncated over udp, whole over tcp", "http://127.171.2.1:8053/dns-query", h2c, false, "a.big.", 40, dns.RcodeSuccess},
		{"server, pool", "http://127.171.2.2:8053/dns-query", h1, true, "www.example.", 1, dns.RcodeSuccess},
		{"server, truncated over udp", "http://127.171.2.2:8053/dns-query", h1, false, "b.big.", 40, dns.RcodeSuccess},
		{"server, unhandled-query-action reject", "http://127.171.2.3:8053/dns-query", h1, false, "www.example.", 0, dns.RcodeRefused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, res := dohAsk(t, tc.client, tc.url, tc.qname, tc.post)
			if m == nil {
				t.Fatalf("status %d", res.StatusCode)
			}
			if m.Rcode != tc.rcode || len(m.Answer) != tc.records || m.Truncated {
				t.Fatalf("answer rcode %d, %d records, TC %v; want rcode %d, %d records:\n%s", m.Rcode, len(m.Answer), m.Truncated, tc.rcode, tc.records, m)
			}
			if tc.records > 0 && res.Header.Get("Cache-Control") != "max-age=77" {
				t.Errorf("Cache-Control %q", res.Header.Get("Cache-Control"))
			}
			if tc.client == h2c && res.ProtoMajor != 2 {
				t.Errorf("answered over %s", res.Proto)
			}
		})
	}
	c := p.DoHStats("doh-proxy /Common/doh-proxy")
	if c.Get != 2 || c.Post != 2 || c.Answers != 4 {
		t.Errorf("doh-proxy counts %+v", c)
	}
	if c := p.DoHStats("doh-server /Common/doh-server"); c.Answers != 3 {
		t.Errorf("doh-server counts %+v", c)
	}

	// A query no member answers: 503. The pool's member is taken away.
	cfg.Pools["/Common/pool"].Members = nil
	mustApply(t, p, cfg)
	if _, res := dohAsk(t, h1, "http://127.171.2.1:8053/dns-query", "www.example.", false); res.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("no member: status %d, want 503", res.StatusCode)
	}
	if c := p.DoHStats("doh-proxy /Common/doh-proxy"); c.NoAnswer != 1 || c.Answers != 4 {
		t.Errorf("the counts did not live across the commit: %+v", c)
	}
}
