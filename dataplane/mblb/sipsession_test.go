package mblb

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/internal/rawsock"
	"github.com/openltm/openltm/dataplane/sipmsg"
)

// sipMember is a SIP user agent server on loopback: it answers INVITE
// with 100 Trying and 200 OK (with an SDP body), ACK with nothing, and
// every other request with 200 OK; each answer names the member in
// X-Member. It remembers the methods it got per Call-ID and the
// responses clients sent it.
type sipMember struct {
	t     testing.TB
	label string
	ln    net.Listener

	mu      sync.Mutex
	methods map[string][]string // Call-ID -> methods, in order
	answers []string            // responses received (start lines)
	conns   map[string]net.Conn // Call-ID -> the connection it came on
	raw     []string            // every request, as it came
	accepts atomic.Int32        // connections accepted
	ended   atomic.Int32        // connections ended
	wg      sync.WaitGroup
}

func startSIPMember(t testing.TB, addr, label string) *sipMember {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen %s: %v", addr, err)
	}
	m := &sipMember{t: t, label: label, ln: ln, methods: map[string][]string{}, conns: map[string]net.Conn{}}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			m.accepts.Add(1)
			m.wg.Add(1)
			go m.serve(c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		m.mu.Lock()
		for _, c := range m.conns {
			c.Close()
		}
		m.mu.Unlock()
		m.wg.Wait()
	})
	return m
}

// readSIP reads one SIP message (keep-alives skipped) from r.
func readSIP(r *bufio.Reader) (string, error) {
	f := &SIPFramer{}
	var buf []byte
	for {
		if len(buf) > 0 {
			n, ok, err := f.Frame(buf)
			if err != nil {
				return "", err
			}
			if ok {
				if IsSIPKeepAlive(buf[:n]) {
					buf = buf[n:]
					continue
				}
				return string(buf[:n]), nil
			}
		}
		b, err := r.ReadByte()
		if err != nil {
			return "", err
		}
		buf = append(buf, b)
	}
}

func (m *sipMember) serve(c net.Conn) {
	defer m.wg.Done()
	defer m.ended.Add(1)
	defer c.Close()
	r := bufio.NewReader(c)
	for {
		msg, err := readSIP(r)
		if err != nil {
			return
		}
		p, err := ParseSIP([]byte(msg))
		if err != nil {
			m.t.Errorf("%s: %v", m.label, err)
			return
		}
		cid, _ := p.Header(sipmsg.CallID)
		m.mu.Lock()
		if !p.Request {
			m.answers = append(m.answers, fmt.Sprintf("%d %s", p.Code, cid))
			m.mu.Unlock()
			continue
		}
		m.methods[string(cid)] = append(m.methods[string(cid)], string(p.Method))
		m.raw = append(m.raw, msg)
		m.conns[string(cid)] = c
		m.mu.Unlock()
		if string(p.Method) == "ACK" {
			continue
		}
		if string(p.Method) == "INVITE" && strings.HasPrefix(string(cid), "noanswer") {
			continue // a dialog that never gets its final answer
		}
		var out []byte
		if string(p.Method) == "INVITE" {
			out = append(out, sipAnswer(&p, 100, "Trying", m.label, "")...)
			out = append(out, sipAnswer(&p, 200, "OK", m.label, "v=0\r\no=bob\r\n")...)
		} else {
			out = sipAnswer(&p, 200, "OK", m.label, "")
		}
		if _, err := c.Write(out); err != nil {
			return
		}
	}
}

// sipAnswer builds a response to p that copies its Via fields (all, in
// order), Record-Route fields, From, To, Call-ID and CSeq, in compact
// form where SIP has one.
func sipAnswer(p *SIPMessage, code int, reason, label, body string) []byte {
	h := func(f string) string { v, _ := p.Header(NewSIPField(f)); return string(v) }
	tag := ""
	if v := h("x-tag"); v != "" {
		tag = "X-Tag: " + v + "\r\n"
	}
	vias := ""
	for i := 0; i < 10; i++ {
		v, ok := p.HeaderAt(sipmsg.Via, i)
		if !ok {
			break
		}
		vias += "v: " + string(v) + "\r\n"
	}
	for i := 0; i < 10; i++ {
		v, ok := p.HeaderAt(NewSIPField("Record-Route"), i)
		if !ok {
			break
		}
		vias += "Record-Route: " + string(v) + "\r\n"
	}
	return []byte(fmt.Sprintf("SIP/2.0 %d %s\r\n%sf: %s\r\nt: %s;tag=%s\r\ni: %s\r\nCSeq: %s\r\nX-Member: %s\r\n%sl: %d\r\n\r\n%s",
		code, reason, vias, h("from"), h("to"), label, h("call-id"), h("cseq"), label, tag, len(body), body))
}

// bye sends a BYE of the member's own down the connection the dialog
// came on.
func (m *sipMember) bye(callID string) error {
	m.mu.Lock()
	c := m.conns[callID]
	m.mu.Unlock()
	if c == nil {
		return fmt.Errorf("%s has no connection for %s", m.label, callID)
	}
	_, err := c.Write([]byte(sipRequest("BYE", callID, "z9hG4bKsrv-"+callID, 2, "")))
	return err
}

func (m *sipMember) got(callID string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.methods[callID]...)
}

// sipRequest is a request of a dialog; OPTIONS and INVITE carry a body
// when one is given.
func sipRequest(method, callID, branch string, cseq int, body string) string {
	return fmt.Sprintf("%s sip:bob@example.com SIP/2.0\r\nVia: SIP/2.0/TCP 127.78.0.9:5060;branch=%s\r\nMax-Forwards: 70\r\nFrom: <sip:alice@example.com>;tag=a1\r\nTo: <sip:bob@example.com>\r\nCall-ID: %s\r\nCSeq: %d %s\r\nContent-Length: %d\r\n\r\n%s",
		method, branch, callID, cseq, method, len(body), body)
}

// sipClient is a user agent client talking to the virtual.
type sipClient struct {
	t testing.TB
	c net.Conn
	r *bufio.Reader
}

func dialSIP(t testing.TB, v *testVS) *sipClient {
	t.Helper()
	c, err := net.DialTimeout("tcp", v.addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &sipClient{t: t, c: c, r: bufio.NewReader(c)}
}

func (c *sipClient) send(s string) {
	c.t.Helper()
	c.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c.c, s); err != nil {
		c.t.Fatal(err)
	}
}

func (c *sipClient) recv() *SIPMessage {
	c.t.Helper()
	c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	s, err := readSIP(c.r)
	if err != nil {
		c.t.Fatal(err)
	}
	p, err := ParseSIP([]byte(s))
	if err != nil {
		c.t.Fatal(err)
	}
	return &p
}

func member(p *SIPMessage) string {
	v, _ := p.Header(NewSIPField("X-Member"))
	return string(v)
}

func sipConfig(p *testPool, persist bool) Config {
	cfg := baseConfig(p, nil)
	cfg.Request = Framing{Mode: SIP}
	if persist {
		cfg.Request.SIP.PersistHeader = "Call-ID"
		var mu sync.Mutex
		rec := map[string]Member{}
		cfg.Pick = func(c Choice) (Member, error) {
			mu.Lock()
			defer mu.Unlock()
			if m, ok := rec[c.SIPKey]; ok && c.SIPKey != "" {
				return m, nil
			}
			m, err := p.Pick(c)
			if err == nil && c.SIPKey != "" {
				rec[c.SIPKey] = m
			}
			return m, err
		}
	}
	return cfg
}

// TestSIPBalancesEachRequest: one client connection, OPTIONS requests
// alternate between the members, and every answer (with its body) comes
// back to the client.
func TestSIPBalancesEachRequest(t *testing.T) {
	s1 := startSIPMember(t, "127.78.0.1:0", "S1")
	s2 := startSIPMember(t, "127.78.0.2:0", "S2")
	pool := newTestPoolAddrs(s1, s2)
	vs := startVS(t, "127.78.0.10:0", sipConfig(pool, false))
	c := dialSIP(t, vs)
	seen := map[string]int{}
	for i := 0; i < 6; i++ {
		c.send(sipRequest("OPTIONS", fmt.Sprintf("opt-%d", i), fmt.Sprintf("z9hG4bKo%d", i), 1, "ping"))
		p := c.recv()
		if p.Code != 200 {
			t.Fatalf("OPTIONS %d: %d", i, p.Code)
		}
		seen[member(p)]++
	}
	if seen["S1"] != 3 || seen["S2"] != 3 {
		t.Fatalf("answers by member %v, want 3 and 3", seen)
	}
	// A keep-alive ping is answered by the proxy and reaches no member.
	c.send("\r\n\r\n")
	c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	pong := make([]byte, 2)
	if _, err := io.ReadFull(c.r, pong); err != nil || string(pong) != "\r\n" {
		t.Fatalf("pong %q, %v", pong, err)
	}
}

// TestSIPDialogPersists: with Call-ID persistence a whole dialog (INVITE,
// its 100 and 200, ACK, BYE) stays on one member while dialogs spread;
// a CANCEL follows its INVITE even without persistence.
func TestSIPDialogPersists(t *testing.T) {
	s1 := startSIPMember(t, "127.78.0.3:0", "S1")
	s2 := startSIPMember(t, "127.78.0.4:0", "S2")
	vs := startVS(t, "127.78.0.11:0", sipConfig(newTestPoolAddrs(s1, s2), true))
	c := dialSIP(t, vs)
	byMember := map[string]int{}
	for d := 0; d < 4; d++ {
		cid := fmt.Sprintf("dialog-%d@127.78.0.9", d)
		c.send(sipRequest("INVITE", cid, "z9hG4bKi"+cid, 1, "v=0\r\no=alice\r\n"))
		trying, ok := c.recv(), c.recv()
		if trying.Code != 100 || ok.Code != 200 || member(trying) != member(ok) {
			t.Fatalf("dialog %d: answers %d %d from %s %s", d, trying.Code, ok.Code, member(trying), member(ok))
		}
		if !strings.HasSuffix(string(ok.B), "v=0\r\no=bob\r\n") {
			t.Fatalf("200 OK lost its body: %q", ok.B)
		}
		// Compact forms from the client too.
		c.send(strings.Replace(sipRequest("ACK", cid, "z9hG4bKa"+cid, 1, ""), "Call-ID:", "i:", 1))
		c.send(sipRequest("BYE", cid, "z9hG4bKb"+cid, 2, ""))
		bye := c.recv()
		if bye.Code != 200 || member(bye) != member(ok) {
			t.Fatalf("dialog %d: BYE answered %d by %s, INVITE by %s", d, bye.Code, member(bye), member(ok))
		}
		byMember[member(ok)]++
	}
	if byMember["S1"] != 2 || byMember["S2"] != 2 {
		t.Fatalf("dialogs by member %v, want 2 and 2", byMember)
	}
	for d := 0; d < 4; d++ {
		cid := fmt.Sprintf("dialog-%d@127.78.0.9", d)
		a, b := s1.got(cid), s2.got(cid)
		if len(a)+len(b) != 3 || (len(a) != 0 && len(b) != 0) {
			t.Fatalf("%s split: S1 %v S2 %v", cid, a, b)
		}
	}
}

// TestSIPMemberRequestAndCancel: a BYE the member sends reaches the
// client, whose 200 goes back to that member; a CANCEL goes where its
// INVITE went though balancing alone would send it elsewhere.
func TestSIPMemberRequestAndCancel(t *testing.T) {
	s1 := startSIPMember(t, "127.78.0.5:0", "S1")
	s2 := startSIPMember(t, "127.78.0.6:0", "S2")
	vs := startVS(t, "127.78.0.12:0", sipConfig(newTestPoolAddrs(s1, s2), false))
	c := dialSIP(t, vs)
	c.send(sipRequest("INVITE", "call-x", "z9hG4bKinv1", 1, ""))
	first := c.recv()
	c.recv()
	c.send(sipRequest("CANCEL", "call-x", "z9hG4bKinv1", 1, ""))
	if p := c.recv(); member(p) != member(first) {
		t.Fatalf("CANCEL answered by %s, INVITE by %s", member(p), member(first))
	}
	owner := s1
	if member(first) == "S2" {
		owner = s2
	}
	if err := owner.bye("call-x"); err != nil {
		t.Fatal(err)
	}
	req := c.recv()
	if !req.Request || string(req.Method) != "BYE" {
		t.Fatalf("client got %s, want the member's BYE", req.String())
	}
	c.send(string(sipAnswer(req, 200, "OK", "client", "")))
	waitFor(t, "the client's 200 at the member", func() bool {
		owner.mu.Lock()
		defer owner.mu.Unlock()
		return len(owner.answers) == 1 && owner.answers[0] == "200 call-x"
	})
}

// TestSIPPerConnection: without an mblb profile the connection is
// balanced once.
func TestSIPPerConnection(t *testing.T) {
	s1 := startSIPMember(t, "127.78.0.7:0", "S1")
	s2 := startSIPMember(t, "127.78.0.8:0", "S2")
	cfg := sipConfig(newTestPoolAddrs(s1, s2), false)
	cfg.Request.SIP.PerConnection = true
	vs := startVS(t, "127.78.0.13:0", cfg)
	c := dialSIP(t, vs)
	seen := map[string]int{}
	for i := 0; i < 4; i++ {
		c.send(sipRequest("OPTIONS", fmt.Sprintf("pc-%d", i), fmt.Sprintf("z9hG4bKpc%d", i), 1, ""))
		seen[member(c.recv())]++
	}
	if len(seen) != 1 {
		t.Fatalf("answers by member %v, want one member", seen)
	}
}

// TestSIPBadMessageResets: a client that sends something not SIP is
// reset.
func TestSIPBadMessageResets(t *testing.T) {
	s1 := startSIPMember(t, "127.78.0.14:0", "S1")
	vs := startVS(t, "127.78.0.15:0", sipConfig(newTestPoolAddrs(s1), false))
	c := dialSIP(t, vs)
	c.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.r.ReadByte(); !isReset(err) {
		t.Fatalf("read after garbage: %v, want a reset", err)
	}
}

// newTestPoolAddrs is newTestPool for SIP members.
func newTestPoolAddrs(ms ...*sipMember) *testPool {
	p := &testPool{disabled: map[MemberID]bool{}, picks: map[MemberID]int{}}
	for i, m := range ms {
		p.members = append(p.members, Member{ID: MemberID(i + 1), Addr: rawsock.AddrPortOf(m.ln.Addr()), Pool: "/Common/sip_pool", Name: m.label})
	}
	return p
}

// BenchmarkSIPMessages: one synchronous client sends OPTIONS requests,
// balanced over two members that answer each with a fixed 200; the
// figure to watch is allocations per message (with sip_info
// persistence the key is the one).
func BenchmarkSIPMessages(b *testing.B) {
	for _, persist := range []bool{false, true} {
		b.Run(fmt.Sprintf("persist=%v", persist), func(b *testing.B) {
			req := []byte(sipRequest("OPTIONS", "bench@127.78.0.9", "z9hG4bKbench", 1, ""))
			resp := []byte("SIP/2.0 200 OK\r\nVia: SIP/2.0/TCP 127.78.0.9:5060;branch=z9hG4bKbench\r\nCall-ID: bench@127.78.0.9\r\nCSeq: 1 OPTIONS\r\nl: 0\r\n\r\n")
			pool := &testPool{disabled: map[MemberID]bool{}, picks: map[MemberID]int{}}
			for i := 0; i < 2; i++ {
				ln, err := net.Listen("tcp", fmt.Sprintf("127.78.1.%d:0", i+1))
				if err != nil {
					b.Fatal(err)
				}
				defer ln.Close()
				go func() {
					for {
						c, err := ln.Accept()
						if err != nil {
							return
						}
						go func() {
							defer c.Close()
							in := make([]byte, len(req))
							for {
								if _, err := io.ReadFull(c, in); err != nil {
									return
								}
								if _, err := c.Write(resp); err != nil {
									return
								}
							}
						}()
					}
				}()
				pool.members = append(pool.members, Member{ID: MemberID(i + 1), Addr: rawsock.AddrPortOf(ln.Addr()), Name: fmt.Sprintf("S%d", i+1)})
			}
			vs := startVS(b, "127.78.1.10:0", sipConfig(pool, persist))
			c, err := net.Dial("tcp", vs.addr())
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(5 * time.Minute))
			in := make([]byte, len(resp))
			trip := func() {
				if _, err := c.Write(req); err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(c, in); err != nil {
					b.Fatal(err)
				}
			}
			trip()
			trip() // both members' connections open
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				trip()
			}
		})
	}
}

// sipTestRule is a SIP rule in Go: it records the methods and codes it
// saw, tags every request for the member (X-Tag: rewritten), and answers
// REGISTER itself with 403 without passing it on.
type sipTestRule struct {
	mu   sync.Mutex
	seen []string
}

func (r *sipTestRule) OnSIPRequest(x *SIPEvent) error {
	m, err := ParseSIP(x.Message())
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.seen = append(r.seen, string(m.Method))
	r.mu.Unlock()
	if string(m.Method) == "REGISTER" {
		x.Respond([]byte("SIP/2.0 403 Forbidden\r\nCall-ID: reg\r\nContent-Length: 0\r\n\r\n"))
		x.Discard()
		return nil
	}
	x.Replace(sipmsg.Replace(x.Message(), "X-Tag", "rewritten"))
	return nil
}

func (r *sipTestRule) OnSIPResponse(x *SIPEvent) error {
	m, err := ParseSIP(x.Message())
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.seen = append(r.seen, fmt.Sprint(m.Code))
	r.mu.Unlock()
	x.Replace(sipmsg.Insert(x.Message(), "X-Seen", "lb"))
	return nil
}

func (r *sipTestRule) OnSIPSend(*SIPEvent, bool, bool) error { return nil }

func (r *sipTestRule) SIPSends() (bool, bool) { return false, false }

// TestSIPRuleHooks: the rule sees each request and response, its edits
// reach the member and the client, and its own answer replaces the
// member's.
func TestSIPRuleHooks(t *testing.T) {
	s1 := startSIPMember(t, "127.78.0.16:0", "S1")
	rule := &sipTestRule{}
	vs := startVS(t, "127.78.0.17:0", sipConfig(newTestPoolAddrs(s1), false), func(c net.Conn) ClientOptions {
		return ClientOptions{Tag: c.RemoteAddr().String(), SIPRule: rule}
	})
	c := dialSIP(t, vs)
	c.send(strings.Replace(sipRequest("OPTIONS", "r-1", "z9hG4bKr1", 1, ""), "Max-Forwards", "X-Tag: original\r\nMax-Forwards", 1))
	p := c.recv()
	if p.Code != 200 {
		t.Fatalf("OPTIONS answered %d", p.Code)
	}
	if v, _ := p.Header(NewSIPField("X-Seen")); string(v) != "lb" {
		t.Fatalf("response not edited: %q", p.B)
	}
	if v, _ := p.Header(NewSIPField("X-Tag")); string(v) != "rewritten" {
		t.Fatalf("the member did not get the rule's X-Tag: %q", p.B)
	}
	c.send(sipRequest("REGISTER", "reg", "z9hG4bKreg", 1, ""))
	if p := c.recv(); p.Code != 403 {
		t.Fatalf("REGISTER answered %d, want the rule's 403", p.Code)
	}
	if got := s1.got("reg"); len(got) != 0 {
		t.Fatalf("the member got the discarded REGISTER: %v", got)
	}
	rule.mu.Lock()
	seen := strings.Join(rule.seen, " ")
	rule.mu.Unlock()
	if seen != "OPTIONS 200 REGISTER" {
		t.Fatalf("the rule saw %q", seen)
	}
}

// sipRouteRule sends every request to one member, as `pool p member
// a:p` in SIP_REQUEST does.
type sipRouteRule struct{ to Target }

func (r sipRouteRule) OnSIPRequest(x *SIPEvent) error {
	if x.FromClient() {
		x.Select(r.to)
	}
	return nil
}

func (sipRouteRule) OnSIPResponse(*SIPEvent) error { return nil }

func (sipRouteRule) OnSIPSend(*SIPEvent, bool, bool) error { return nil }

func (sipRouteRule) SIPSends() (bool, bool) { return false, false }

// TestSIPRuleTarget: a rule's choice of member overrides balancing for
// that request.
func TestSIPRuleTarget(t *testing.T) {
	s1 := startSIPMember(t, "127.78.0.18:0", "S1")
	s2 := startSIPMember(t, "127.78.0.19:0", "S2")
	pool := newTestPoolAddrs(s1, s2)
	rule := sipRouteRule{to: Target{Member: pool.members[1].Addr}}
	vs := startVS(t, "127.78.0.20:0", sipConfig(pool, false), func(c net.Conn) ClientOptions {
		return ClientOptions{Tag: c.RemoteAddr().String(), SIPRule: rule}
	})
	c := dialSIP(t, vs)
	for i := 0; i < 4; i++ {
		c.send(sipRequest("OPTIONS", fmt.Sprintf("t-%d", i), fmt.Sprintf("z9hG4bKt%d", i), 1, ""))
		if p := c.recv(); member(p) != "S2" {
			t.Fatalf("OPTIONS %d answered by %s, want the rule's S2", i, member(p))
		}
	}
}
