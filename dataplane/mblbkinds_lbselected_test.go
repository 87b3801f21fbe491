package dataplane

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"strings"
	"testing"
	"time"

	qhttp3 "github.com/quic-go/quic-go/http3"

	"github.com/openltm/openltm/dataplane/h2gw"
	"github.com/openltm/openltm/dataplane/http3"
	"github.com/openltm/openltm/dataplane/iiop"
	"github.com/openltm/openltm/dataplane/iiop/iioptest"
	"github.com/openltm/openltm/dataplane/mblb"
)

// The client kinds whose messages reach the message engine's one Pick
// (internal/mblbvs/lbselected.go) by paths of their own: a SIP virtual's
// requests, an IIOP virtual's GIOP requests, an HTTP/2 client's streams
// and an HTTP/3 client's requests. Each test's rule sends every choice
// made in the virtual's pool elsewhere in LB_SELECTED; the answer comes
// from there only if the decision was followed.

// lbSelectedElsewhere is the rule of these tests: a choice in the
// virtual's pool goes to pool p2 instead.
const lbSelectedElsewhere = `when LB_SELECTED {
    if {[LB::server pool] eq "/Common/pool"} { pool p2 }
}`

// sipMember answers every SIP request on TCP with a 200 naming label in
// a Server field, echoing the request's Via, Call-ID and CSeq.
func sipMember(t *testing.T, addr, label string) {
	t.Helper()
	serveConns(t, addr, func(c net.Conn) {
		defer c.Close()
		tp := textproto.NewReader(bufio.NewReader(c))
		for {
			if _, err := tp.ReadLine(); err != nil {
				return
			}
			h, err := tp.ReadMIMEHeader()
			if err != nil {
				return
			}
			fmt.Fprintf(c, "SIP/2.0 200 OK\r\nVia: %s\r\nCall-ID: %s\r\nCSeq: %s\r\nServer: %s\r\nContent-Length: 0\r\n\r\n",
				h.Get("Via"), h.Get("Call-ID"), h.Get("CSeq"), label)
		}
	})
}

// TestSIPLBSelectedDecision: on a SIP virtual (sip and mblb profiles:
// each request balanced by itself), `pool p2` in LB_SELECTED sends every
// request to p2's member; the member first chosen counts none.
func TestSIPLBSelectedDecision(t *testing.T) {
	sipMember(t, "127.220.1.11:5060", "S1")
	sipMember(t, "127.220.1.12:5060", "S2")
	p, logs := newPlane(t)
	cfg := mblbConfig("127.220.1.1:5060", &MBLB{Request: mblb.Framing{Mode: mblb.SIP}, MaxMessageSize: 65535}, "127.220.1.11:5060")
	withPool(cfg, "/Common/p2", "127.220.1.12:5060")
	rs, lg := compileRules(t, lbSelectedElsewhere)
	lg.showOnFailure(t)
	cfg.Virtuals["/Common/vs"].Rules = rs
	mustApply(t, p, cfg)
	c, err := net.DialTimeout("tcp", "127.220.1.1:5060", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tp := textproto.NewReader(bufio.NewReader(c))
	for i := 1; i <= 3; i++ {
		fmt.Fprintf(c, "OPTIONS sip:a@example.com SIP/2.0\r\nVia: SIP/2.0/TCP 127.0.0.1;branch=z9hG4bK%d\r\nCall-ID: c%d\r\nCSeq: %d OPTIONS\r\nContent-Length: 0\r\n\r\n", i, i, i)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		status, err := tp.ReadLine()
		if err != nil {
			t.Fatalf("request %d: %v\n%s", i, err, logs)
		}
		h, err := tp.ReadMIMEHeader()
		if err != nil || status != "SIP/2.0 200 OK" || h.Get("Server") != "S2" {
			t.Fatalf("request %d: %q from %q, %v; want 200 from S2 (pool p2)\n%s", i, status, h.Get("Server"), err, logs)
		}
	}
	if m := memberStat(t, p, "/Common/pool", "/Common/127.220.1.11:5060"); m.TotRequests != 0 {
		t.Errorf("the member passed over counts %d requests, want 0", m.TotRequests)
	}
	if m := memberStat(t, p, "/Common/p2", "/Common/127.220.1.12:5060"); m.TotRequests != 3 {
		t.Errorf("p2's member counts %d requests, want 3", m.TotRequests)
	}
}

// TestIIOPLBSelectedDecision: on an IIOP virtual each GIOP request is
// balanced by itself; `pool p2` in LB_SELECTED sends it to p2's member,
// whose name is the reply's body.
func TestIIOPLBSelectedDecision(t *testing.T) {
	for _, name := range []string{"M1", "M2"} {
		addr := "127.220.2.11:26831"
		if name == "M2" {
			addr = "127.220.2.12:26831"
		}
		s, err := iioptest.Listen(addr, name)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
	}
	p, logs := newPlane(t)
	cfg := mblbConfig("127.220.2.1:26831", &MBLB{Request: mblb.Framing{Mode: mblb.IIOP}}, "127.220.2.11:26831")
	withPool(cfg, "/Common/p2", "127.220.2.12:26831")
	rs, lg := compileRules(t, lbSelectedElsewhere)
	lg.showOnFailure(t)
	cfg.Virtuals["/Common/vs"].Rules = rs
	mustApply(t, p, cfg)
	c, err := net.DialTimeout("tcp", "127.220.2.1:26831", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := uint32(1); i <= 3; i++ {
		if _, err := c.Write(iiop.AppendRequest(nil, 2, false, i, true, []byte("k"), "op", nil)); err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		b, err := iioptest.ReadMessage(c)
		if got := string(iiop.ReplyBody(b)); err != nil || got != "M2" {
			t.Fatalf("request %d: reply %q, %v; want M2's (pool p2)\n%s", i, got, err, logs)
		}
	}
	if m := memberStat(t, p, "/Common/pool", "/Common/127.220.2.11:26831"); m.TotRequests != 0 {
		t.Errorf("the member passed over counts %d requests, want 0", m.TotRequests)
	}
}

// TestHTTP2LBSelectedDecision: an HTTP/2 client's streams on an http
// virtual with the http2 profile reach the same engine: `pool p2` in
// LB_SELECTED sends each stream's request to p2's member.
func TestHTTP2LBSelectedDecision(t *testing.T) {
	const vs = "127.220.3.1:80"
	h2Member(t, "127.220.3.11:80", "M1")
	h2Member(t, "127.220.3.12:80", "M2")
	cfg := l7Config(t, vs, true, mblb.HTTPOptions{}, "", "127.220.3.11:80")
	withPool(cfg, "/Common/p2", "127.220.3.12:80")
	rs, lg := compileRules(t, lbSelectedElsewhere)
	lg.showOnFailure(t)
	cfg.Virtuals["/Common/vs"].Rules = rs
	cfg.Virtuals["/Common/vs"].HTTP2 = &HTTP2{Always: true, Config: h2gw.Config{MaxConcurrentStreams: 8, Stats: new(h2gw.Stats)}}
	p, logs := newPlane(t)
	mustApply(t, p, cfg)
	client := h2Client(t)
	for i := 0; i < 3; i++ {
		resp, err := client.Get(fmt.Sprintf("http://%s/r%d", vs, i))
		if err != nil {
			t.Fatalf("%v\n%s", err, logs)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.Proto != "HTTP/2.0" || !strings.HasPrefix(string(b), "M2 ") {
			t.Fatalf("stream %d: %s %q; want HTTP/2.0 from M2 (pool p2)\n%s", i, resp.Proto, b, logs)
		}
	}
	if m := memberStat(t, p, "/Common/pool", "/Common/127.220.3.11:80"); m.TotRequests != 0 {
		t.Errorf("the member passed over counts %d requests, want 0", m.TotRequests)
	}
}

// TestHTTP3LBSelectedDecision: an HTTP/3 client's requests on an http
// virtual with the http3 profile reach the same engine: `pool p2` in
// LB_SELECTED sends each to p2's member.
func TestHTTP3LBSelectedDecision(t *testing.T) {
	const vs = "127.220.4.1:30443"
	t.Setenv("QUIC_GO_DISABLE_RECEIVE_BUFFER_WARNING", "true")
	startHTTPServer(t, "127.220.4.11:80", "M1")
	startHTTPServer(t, "127.220.4.12:80", "M2")
	cfg := mblbConfig(vs, &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}, "127.220.4.11:80")
	withPool(cfg, "/Common/p2", "127.220.4.12:80")
	v := cfg.Virtuals["/Common/vs"]
	v.Protocol = ProtoUDP
	cert, key, _ := testCert(t, "h3.test")
	v.TLS = clientSSL(t, cert, key)
	v.HTTP3 = &http3.Config{Profile: "/Common/http3", QUICProfile: "/Common/quic"}
	rs, lg := compileRules(t, lbSelectedElsewhere)
	lg.showOnFailure(t)
	v.Rules = rs
	p, logs := newPlane(t)
	mustApply(t, p, cfg)
	tr := &qhttp3.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, ServerName: "h3.test"}}
	defer tr.Close()
	hc := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	for i := 0; i < 3; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("https://%s/r%d", vs, i), nil)
		resp, err := hc.Do(req)
		if err != nil {
			cancel()
			t.Fatalf("HTTP/3 request %d: %v\n%s", i, err, logs)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		if resp.StatusCode != 200 || !strings.HasPrefix(string(b), "M2 ") {
			t.Fatalf("request %d: %d %q; want M2's answer (pool p2)\n%s", i, resp.StatusCode, b, logs)
		}
	}
	if m := memberStat(t, p, "/Common/pool", "/Common/127.220.4.11:80"); m.TotRequests != 0 {
		t.Errorf("the member passed over counts %d requests, want 0", m.TotRequests)
	}
}
