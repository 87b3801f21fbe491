package mblb

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/internal/rawsock"
	"github.com/openltm/openltm/dataplane/sipmsg"
)

// fields is every value of a header field of a message, in order.
func fields(t testing.TB, b []byte, name string) []string {
	t.Helper()
	m, err := ParseSIP(b)
	if err != nil {
		t.Fatalf("%v: %q", err, b)
	}
	var out []string
	for i := 0; i < 10; i++ {
		v, ok := m.HeaderAt(NewSIPField(name), i)
		if !ok {
			break
		}
		out = append(out, string(v))
	}
	return out
}

// lastRaw is the last request member m got of a method.
func (m *sipMember) lastRaw(method string) []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := len(m.raw) - 1; i >= 0; i-- {
		if strings.HasPrefix(m.raw[i], method+" ") {
			return []byte(m.raw[i])
		}
	}
	return nil
}

// TestSIPProxyHeaders: the Via and Record-Route the profile inserts, on
// the wire both ways: on top of the request the member gets, off the
// answer the client gets, the branch the same for an INVITE and its
// CANCEL, and no Record-Route on a request that opens no dialog.
func TestSIPProxyHeaders(t *testing.T) {
	const clientVia = "SIP/2.0/TCP 127.78.0.9:5060;branch=z9hG4bK"
	for i, tc := range []struct {
		name string
		opt  SIPOptions
		via  string // the member's top Via, a pattern ("" none inserted); VS is the virtual's address
		rr   string // the member's Record-Route on the INVITE ("" none)
	}{
		{"nothing", SIPOptions{}, "", ""},
		{"insert-via-header", SIPOptions{Via: true}, `^SIP/2\.0/TCP VS;branch=z9hG4bKltm[0-9a-z]+-[0-9a-z]+$`, ""},
		{"secure-via-header", SIPOptions{SecureVia: true}, `^SIP/2\.0/TLS VS;branch=z9hG4bKltm[0-9a-z]+-[0-9a-z]+$`, ""},
		{"user-via-header", SIPOptions{Via: true, UserVia: "SIP/2.0/TCP sip.example.com:5070"}, `^SIP/2\.0/TCP sip\.example\.com:5070;branch=z9hG4bKltm[0-9a-z]+-[0-9a-z]+$`, ""},
		{"insert-record-route-header", SIPOptions{RecordRoute: true}, "", "<sip:VS;transport=tcp;lr>"},
		{"both, secure", SIPOptions{Via: true, SecureVia: true, RecordRoute: true}, `^SIP/2\.0/TLS VS;branch=z9hG4bKltm`, "<sips:VS;lr>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s1 := startSIPMember(t, fmt.Sprintf("127.49.1.%d:0", i+1), "S1")
			cfg := sipConfig(newTestPoolAddrs(s1), false)
			cfg.Request.SIP = tc.opt
			vs := startVS(t, fmt.Sprintf("127.49.1.%d:0", i+101), cfg)
			vsAddr := regexp.QuoteMeta(vs.addr())
			c := dialSIPFrom(t, vs, "127.49.0.9")
			cid := "hdr-" + tc.name
			c.send(sipRequest("INVITE", cid, "z9hG4bKinv", 1, "v=0\r\n"))
			for _, want := range []int{100, 200} {
				p := c.recv()
				if p.Code != want {
					t.Fatalf("answer %d, want %d", p.Code, want)
				}
				if v := fields(t, p.B, "via"); len(v) != 1 || v[0] != clientVia+"inv" {
					t.Fatalf("the client's %d has Via %q, want only its own", p.Code, v)
				}
				rr := fields(t, p.B, "record-route")
				if (tc.rr == "") != (len(rr) == 0) {
					t.Fatalf("the client's %d has Record-Route %q", p.Code, rr)
				}
			}
			inv := s1.lastRaw("INVITE")
			vias := fields(t, inv, "via")
			if tc.via == "" {
				if len(vias) != 1 {
					t.Fatalf("the member's INVITE has Via %q, want the client's alone", vias)
				}
			} else {
				if len(vias) != 2 || vias[1] != clientVia+"inv" {
					t.Fatalf("the member's INVITE has Via %q, want the virtual's and the client's", vias)
				}
				if re := regexp.MustCompile(strings.ReplaceAll(tc.via, "VS", vsAddr)); !re.MatchString(vias[0]) {
					t.Fatalf("the virtual's Via %q does not match %s", vias[0], re)
				}
			}
			rr := fields(t, inv, "record-route")
			if want := strings.ReplaceAll(tc.rr, "VS", vs.addr()); (want == "" && len(rr) != 0) || (want != "" && (len(rr) != 1 || rr[0] != want)) {
				t.Fatalf("the member's INVITE has Record-Route %q, want %q", rr, want)
			}
			// The CANCEL repeats the INVITE's Via, so the member gets the
			// INVITE's branch again.
			c.send(sipRequest("CANCEL", cid, "z9hG4bKinv", 1, ""))
			c.recv()
			if got := fields(t, s1.lastRaw("CANCEL"), "via"); got[0] != vias[0] {
				t.Fatalf("CANCEL's top Via %q, INVITE's %q", got[0], vias[0])
			}
			// An in-dialog request gets a branch of its own and no
			// Record-Route.
			bye := strings.Replace(sipRequest("BYE", cid, "z9hG4bKbye", 2, ""), "To: <sip:bob@example.com>", "To: <sip:bob@example.com>;tag=S1", 1)
			c.send(bye)
			if p := c.recv(); len(fields(t, p.B, "via")) != 1 {
				t.Fatalf("the BYE's answer has Via %q", fields(t, p.B, "via"))
			}
			raw := s1.lastRaw("BYE")
			if len(fields(t, raw, "record-route")) != 0 {
				t.Fatalf("an in-dialog BYE got a Record-Route: %q", raw)
			}
			if tc.via != "" && fields(t, raw, "via")[0] == vias[0] {
				t.Fatalf("the BYE reused the INVITE's branch: %q", vias[0])
			}
			// Without any setting the request reaches the member as sent.
			if tc.via == "" && tc.rr == "" && string(inv) != sipRequest("INVITE", cid, "z9hG4bKinv", 1, "v=0\r\n") {
				t.Fatalf("the member's INVITE was changed: %q", inv)
			}
		})
	}
}

// TestSIPTerminateOnBye: a BYE's final answer ends the member's
// connection (mblb: the next request opens another) or, balanced once,
// the client's; a BYE the member sends, answered by the client, too.
// Without terminate-on-bye the connections stay.
func TestSIPTerminateOnBye(t *testing.T) {
	for i, tc := range []struct {
		name            string
		terminate, once bool
		memberBye       bool
	}{
		{"mblb", true, false, false},
		{"mblb, the member's BYE", true, false, true},
		{"balanced once", true, true, false},
		{"off", false, false, false},
		{"off, balanced once", false, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s1 := startSIPMember(t, fmt.Sprintf("127.49.2.%d:0", i+1), "S1")
			cfg := sipConfig(newTestPoolAddrs(s1), false)
			cfg.Request.SIP.TerminateOnBye = tc.terminate
			cfg.Request.SIP.PerConnection = tc.once
			vs := startVS(t, fmt.Sprintf("127.49.2.%d:0", i+101), cfg)
			c := dialSIPFrom(t, vs, "127.49.0.9")
			cid := "bye-" + tc.name
			c.send(sipRequest("INVITE", cid, "z9hG4bKi", 1, ""))
			c.recv()
			c.recv()
			c.send(sipRequest("ACK", cid, "z9hG4bKa", 1, ""))
			if tc.memberBye {
				if err := s1.bye(cid); err != nil {
					t.Fatal(err)
				}
				req := c.recv()
				c.send(string(sipAnswer(req, 200, "OK", "client", "")))
			} else {
				c.send(sipRequest("BYE", cid, "z9hG4bKb", 2, ""))
				if p := c.recv(); p.Code != 200 {
					t.Fatalf("BYE answered %d", p.Code)
				}
			}
			if tc.terminate && tc.once {
				c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
				if _, err := c.r.ReadByte(); err != io.EOF {
					t.Fatalf("read after the BYE's 200: %v, want the virtual's close", err)
				}
				waitFor(t, "the member's connection to end", func() bool { return s1.ended.Load() == 1 })
				return
			}
			if tc.terminate {
				waitFor(t, "the member's connection to end", func() bool { return s1.ended.Load() == 1 })
			}
			// The client's connection carries on.
			c.send(sipRequest("OPTIONS", "after-"+cid, "z9hG4bKo", 1, ""))
			if p := c.recv(); p.Code != 200 {
				t.Fatalf("OPTIONS after the BYE answered %d", p.Code)
			}
			want := int32(1)
			if tc.terminate {
				want = 2
			}
			if got := s1.accepts.Load(); got != want {
				t.Fatalf("the member accepted %d connections, want %d", got, want)
			}
		})
	}
}

// TestSIPDialogAware: every request of a dialog goes to the member its
// INVITE went to while balancing alone would alternate; a dialog not
// answered in time, or idle too long, is balanced afresh.
func TestSIPDialogAware(t *testing.T) {
	inDialog := func(method, cid, branch string, cseq int) string {
		return strings.Replace(sipRequest(method, cid, branch, cseq, ""), "To: <sip:bob@example.com>", "To: <sip:bob@example.com>;tag=x", 1)
	}
	for i, tc := range []struct {
		name      string
		opt       SIPOptions
		answered  bool          // the member answers the INVITE
		idle      time.Duration // wait before the in-dialog requests
		followAll bool          // every in-dialog request on the INVITE's member
	}{
		{"aware", SIPOptions{DialogAware: true}, true, 0, true},
		{"not aware", SIPOptions{}, true, 0, false},
		{"aware, not answered in time", SIPOptions{DialogAware: true, DialogTimeout: 100 * time.Millisecond}, false, 300 * time.Millisecond, false},
		{"aware, answered, establishment timeout passed", SIPOptions{DialogAware: true, DialogTimeout: 100 * time.Millisecond}, true, 300 * time.Millisecond, true},
		{"aware, idle past the session timeout", SIPOptions{DialogAware: true, SessionTimeout: 100 * time.Millisecond}, true, 300 * time.Millisecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s1 := startSIPMember(t, fmt.Sprintf("127.49.3.%d:0", 2*i+1), "S1")
			s2 := startSIPMember(t, fmt.Sprintf("127.49.3.%d:0", 2*i+2), "S2")
			cfg := sipConfig(newTestPoolAddrs(s1, s2), false)
			cfg.Request.SIP = tc.opt
			vs := startVS(t, fmt.Sprintf("127.49.3.%d:0", i+101), cfg)
			c := dialSIPFrom(t, vs, "127.49.0.9")
			cid := "dlg"
			if !tc.answered {
				cid = "noanswer-dlg"
			}
			c.send(sipRequest("INVITE", cid, "z9hG4bKi", 1, ""))
			if tc.answered {
				c.recv() // 100 Trying
				c.recv()
			}
			waitFor(t, "the INVITE at a member", func() bool { return len(s1.got(cid))+len(s2.got(cid)) == 1 })
			first := "S1"
			if len(s2.got(cid)) == 1 {
				first = "S2"
			}
			if tc.idle > 0 {
				time.Sleep(tc.idle)
			}
			for k := 0; k < 4; k++ {
				c.send(inDialog("INFO", cid, fmt.Sprintf("z9hG4bKinfo%d", k), k+2))
				c.recv()
			}
			owner, other := s1, s2
			if first == "S2" {
				owner, other = s2, s1
			}
			got := len(owner.got(cid))
			if tc.followAll && (got != 5 || len(other.got(cid)) != 0) {
				t.Fatalf("INVITE on %s: %s got %v, the other %v", first, owner.label, owner.got(cid), other.got(cid))
			}
			if !tc.followAll && len(other.got(cid)) == 0 {
				t.Fatalf("INVITE on %s: every INFO followed it (%v), want them balanced", first, owner.got(cid))
			}
		})
	}
}

// dialSIPFrom is dialSIP from a source address of the tests' own.
func dialSIPFrom(t testing.TB, v *testVS, src string) *sipClient {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
	c, err := d.Dial("tcp", v.addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &sipClient{t: t, c: c, r: bufio.NewReader(c)}
}

// TestSIPRegistrationLimits: with dialog-aware, a client connection
// holds at most max-registrations addresses of record and each at most
// max-sessions-per-registration open dialogs; the virtual answers a
// request past a bound 503 itself and the member never sees it. An
// unregistering REGISTER, an ended dialog or registration-timeout frees
// the place.
func TestSIPRegistrationLimits(t *testing.T) {
	register := func(aor string, expires int, n int) string {
		return fmt.Sprintf("REGISTER sip:example.com SIP/2.0\r\nVia: SIP/2.0/TCP 127.49.0.9:5060;branch=z9hG4bKr%d\r\nFrom: <sip:%s>;tag=r\r\nTo: <sip:%s>\r\nCall-ID: reg-%s\r\nCSeq: %d REGISTER\r\nContact: <sip:%s>\r\nExpires: %d\r\nContent-Length: 0\r\n\r\n", n, aor, aor, aor, n, aor, expires)
	}
	invite := func(from, cid string) string {
		return strings.Replace(sipRequest("INVITE", cid, "z9hG4bKi"+cid, 1, ""), "From: <sip:alice@example.com>", "From: <sip:"+from+">", 1)
	}
	bye := func(from, cid string) string {
		return strings.Replace(strings.Replace(sipRequest("BYE", cid, "z9hG4bKb"+cid, 2, ""), "From: <sip:alice@example.com>", "From: <sip:"+from+">", 1), "To: <sip:bob@example.com>", "To: <sip:bob@example.com>;tag=S1", 1)
	}
	type step struct {
		send  string
		code  int // the final answer
		by    string
		sleep time.Duration
	}
	const virtual = "" // the answer names no member
	for i, tc := range []struct {
		name  string
		opt   SIPOptions
		steps []step
	}{
		{"max-registrations", SIPOptions{DialogAware: true, MaxRegistrations: 2}, []step{
			{send: register("alice@example.com", 60, 1), code: 200, by: "S1"},
			{send: register("bob@example.com", 60, 2), code: 200, by: "S1"},
			{send: register("carol@example.com", 60, 3), code: 503, by: virtual},
			{send: register("alice@example.com", 60, 4), code: 200, by: "S1"}, // a refresh
			{send: register("bob@example.com", 0, 5), code: 200, by: "S1"},    // unregistered
			{send: register("carol@example.com", 60, 6), code: 200, by: "S1"},
			{send: register("dave@example.com", 60, 7), code: 503, by: virtual},
		}},
		{"registration-timeout", SIPOptions{DialogAware: true, MaxRegistrations: 1, RegistrationTimeout: 100 * time.Millisecond}, []step{
			{send: register("alice@example.com", 3600, 1), code: 200, by: "S1"},
			{send: register("bob@example.com", 3600, 2), code: 503, by: virtual},
			{send: register("bob@example.com", 3600, 3), code: 200, by: "S1", sleep: 300 * time.Millisecond},
		}},
		{"max-sessions-per-registration", SIPOptions{DialogAware: true, MaxSessionsPerRegistration: 1}, []step{
			{send: register("alice@example.com", 60, 1), code: 200, by: "S1"},
			{send: invite("alice@example.com", "c1"), code: 200, by: "S1"},
			{send: invite("alice@example.com", "c2"), code: 503, by: virtual},
			{send: invite("dave@example.com", "d1"), code: 200, by: "S1"}, // not registered: not bounded
			{send: invite("dave@example.com", "d2"), code: 200, by: "S1"},
			{send: bye("alice@example.com", "c1"), code: 200, by: "S1"},
			{send: invite("alice@example.com", "c3"), code: 200, by: "S1"},
		}},
		{"not dialog-aware: no bound", SIPOptions{MaxRegistrations: 1, MaxSessionsPerRegistration: 1}, []step{
			{send: register("alice@example.com", 60, 1), code: 200, by: "S1"},
			{send: register("bob@example.com", 60, 2), code: 200, by: "S1"},
			{send: invite("alice@example.com", "c1"), code: 200, by: "S1"},
			{send: invite("alice@example.com", "c2"), code: 200, by: "S1"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s1 := startSIPMember(t, fmt.Sprintf("127.49.4.%d:0", i+1), "S1")
			cfg := sipConfig(newTestPoolAddrs(s1), false)
			cfg.Request.SIP = tc.opt
			vs := startVS(t, fmt.Sprintf("127.49.4.%d:0", i+101), cfg)
			c := dialSIPFrom(t, vs, "127.49.0.9")
			for k, st := range tc.steps {
				if st.sleep > 0 {
					time.Sleep(st.sleep)
				}
				c.send(st.send)
				p := c.recv()
				for p.Code < 200 {
					p = c.recv()
				}
				if p.Code != st.code || member(p) != st.by {
					t.Fatalf("step %d: answer %d by %q, want %d by %q", k+1, p.Code, member(p), st.code, st.by)
				}
				if p.Code == 503 {
					// The virtual's answer is a whole response to the
					// request: its Via, Call-ID, CSeq and a To tag.
					req, _ := ParseSIP([]byte(st.send))
					if got, want := fields(t, p.B, "via"), fields(t, req.B, "via"); len(got) != 1 || got[0] != want[0] {
						t.Fatalf("503 Via %q, want %q", got, want)
					}
					cid, _ := req.Header(sipmsg.CallID)
					if got, _ := p.Header(sipmsg.CallID); string(got) != string(cid) || !p.HasToTag() || string(p.CSeqMethod()) != string(req.Method) {
						t.Fatalf("503 is not an answer to its request: %q", p.B)
					}
					if len(s1.got(string(cid))) != 0 {
						t.Fatalf("the member got the refused %s", req.Method)
					}
				}
			}
		})
	}
}

// BenchmarkSIPProxy: BenchmarkSIPMessages with the profile's proxy
// settings: terminate-on-bye alone (the profile's default) must cost no
// allocation per message; the Via costs its removal's copy per answer.
func BenchmarkSIPProxy(b *testing.B) {
	for i, tc := range []struct {
		name string
		opt  SIPOptions
	}{
		{"terminate-on-bye", SIPOptions{TerminateOnBye: true}},
		{"dialog-aware", SIPOptions{TerminateOnBye: true, DialogAware: true}},
		{"insert-via-header", SIPOptions{TerminateOnBye: true, Via: true}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			ln, err := net.Listen("tcp", fmt.Sprintf("127.49.6.%d:0", i+1))
			if err != nil {
				b.Fatal(err)
			}
			defer ln.Close()
			go func() {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				defer c.Close()
				// A member that answers each request 200 with its Via
				// fields, allocating nothing per message.
				buf := make([]byte, 0, 8192)
				out := make([]byte, 0, 8192)
				rd := make([]byte, 4096)
				var f SIPFramer
				for {
					n, err := c.Read(rd)
					if err != nil {
						return
					}
					buf = append(buf, rd[:n]...)
					for {
						size, ok, err := f.Frame(buf)
						if err != nil || !ok {
							break
						}
						out = append(out[:0], "SIP/2.0 200 OK\r\n"...)
						for rest := buf[:size]; len(rest) > 0; {
							n := bytes.IndexByte(rest, '\n') + 1
							if n == 0 || n <= 2 {
								break
							}
							if bytes.HasPrefix(rest, []byte("Via:")) {
								out = append(out, rest[:n]...)
							}
							rest = rest[n:]
						}
						out = append(out, "Call-ID: bench\r\nCSeq: 1 OPTIONS\r\nl: 0\r\n\r\n"...)
						if _, err := c.Write(out); err != nil {
							return
						}
						buf = append(buf[:0], buf[size:]...)
					}
				}
			}()
			pool := &testPool{disabled: map[MemberID]bool{}, picks: map[MemberID]int{}}
			pool.members = append(pool.members, Member{ID: 1, Addr: rawsock.AddrPortOf(ln.Addr()), Name: "S1"})
			cfg := sipConfig(pool, false)
			cfg.Request.SIP = tc.opt
			vs := startVS(b, fmt.Sprintf("127.49.6.%d:0", i+101), cfg)
			c := dialSIPFrom(b, vs, "127.49.0.9")
			req := []byte(sipRequest("OPTIONS", "bench", "z9hG4bKbench", 1, ""))
			c.send(string(req))
			first := c.recv()
			if v := fields(b, first.B, "via"); len(v) != 1 {
				b.Fatalf("answer's Via %q", v)
			}
			in := make([]byte, len(first.B)) // every answer is as long
			c.c.SetDeadline(time.Now().Add(5 * time.Minute))
			b.ReportAllocs()
			b.ResetTimer()
			for k := 0; k < b.N; k++ {
				if _, err := c.c.Write(req); err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(c.r, in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
