package mblb

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/sipmsg"
)

// sipSendRule is a rule of the send and done events in Go: in the send
// events it tags a request with the member it goes to and whether the
// virtual's Via is on top, tags a response, and discards INFO; it
// records every event with its message.
type sipSendRule struct {
	mu   sync.Mutex
	seen []string
}

func (r *sipSendRule) OnSIPRequest(*SIPEvent) error  { return nil }
func (r *sipSendRule) OnSIPResponse(*SIPEvent) error { return nil }
func (r *sipSendRule) SIPSends() (bool, bool)        { return true, true }

func (r *sipSendRule) OnSIPSend(x *SIPEvent, request, done bool) error {
	m, err := ParseSIP(x.Message())
	if err != nil {
		return err
	}
	cid, _ := m.Header(sipmsg.CallID)
	what := fmt.Sprint(m.Code)
	if request {
		what = string(m.Method)
	}
	ev := map[[2]bool]string{{true, false}: "REQUEST_SEND", {true, true}: "REQUEST_DONE", {false, false}: "RESPONSE_SEND", {false, true}: "RESPONSE_DONE"}[[2]bool{request, done}]
	r.mu.Lock()
	r.seen = append(r.seen, fmt.Sprintf("%s %s %s", ev, what, cid))
	r.mu.Unlock()
	switch {
	case done:
	case request && string(m.Method) == "INFO":
		x.Discard()
	case request:
		via, _ := m.HeaderAt(sipmsg.Via, 0)
		x.Replace(sipmsg.Replace(x.Message(), "X-Tag", fmt.Sprintf("%s ltm-via=%v", x.Server(), strings.Contains(string(via), "branch=z9hG4bKltm"))))
	default:
		x.Replace(sipmsg.Insert(x.Message(), "X-Out", "seen"))
	}
	return nil
}

func (r *sipSendRule) events() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.seen, "\n")
}

// TestSIPSendEvents: the send events run once the member is chosen and
// the profile's Via inserted, may still edit or discard the message, and
// the done events follow each message that left, either way.
func TestSIPSendEvents(t *testing.T) {
	s1 := startSIPMember(t, "127.83.23.1:0", "S1")
	rule := &sipSendRule{}
	cfg := sipConfig(newTestPoolAddrs(s1), false)
	cfg.Request.SIP.Via = true
	vs := startVS(t, "127.83.23.10:0", cfg, func(c net.Conn) ClientOptions {
		return ClientOptions{Tag: c.RemoteAddr().String(), SIPRule: rule}
	})
	c := dialSIP(t, vs)
	c.send(sipRequest("INFO", "i-1", "z9hG4bKi1", 1, ""))
	c.send(sipRequest("OPTIONS", "o-1", "z9hG4bKo1", 1, ""))
	p := c.recv()
	if cid, _ := p.Header(sipmsg.CallID); p.Code != 200 || string(cid) != "o-1" {
		t.Fatalf("got %q, want the OPTIONS's 200 (the INFO discarded)", p.B)
	}
	if v, _ := p.Header(NewSIPField("X-Out")); string(v) != "seen" {
		t.Fatalf("SIP_RESPONSE_SEND's edit missing: %q", p.B)
	}
	want := s1.ln.Addr().String() + " ltm-via=true"
	if v, _ := p.Header(NewSIPField("X-Tag")); string(v) != want {
		t.Fatalf("the member echoed X-Tag %q, want %q (SIP_REQUEST_SEND's, with its address and the virtual's Via)", v, want)
	}
	if got := s1.got("i-1"); len(got) != 0 {
		t.Fatalf("the member got the INFO SIP_REQUEST_SEND discarded: %v", got)
	}
	// The request's done event runs once its write returned, which may be
	// after the member's answer came back and ran its own events.
	waitFor(t, "the request's and the response's done events", func() bool {
		ev := rule.events()
		return strings.Contains(ev, "REQUEST_DONE OPTIONS o-1") && strings.Contains(ev, "RESPONSE_DONE 200 o-1")
	})
	got := rule.events()
	// Each message's events in order; the two messages' may interleave.
	for _, w := range [][]string{{"REQUEST_SEND INFO i-1", "REQUEST_SEND OPTIONS o-1", "REQUEST_DONE OPTIONS o-1"}, {"RESPONSE_SEND 200 o-1", "RESPONSE_DONE 200 o-1"}} {
		rest := got
		for _, ev := range w {
			i := strings.Index(rest, ev)
			if i < 0 {
				t.Fatalf("events\n%s\nwant in order\n%s", got, strings.Join(w, "\n"))
			}
			rest = rest[i+len(ev):]
		}
	}
	if strings.Contains(got, "REQUEST_DONE INFO") {
		t.Fatalf("a done event for the discarded INFO:\n%s", got)
	}
}

// byeDoneRule holds SIP_RESPONSE_DONE of a BYE's final answer, which
// runs after the answer reached the client and before terminate-on-bye
// ends the member's connection: the client's next request arrives in
// that window.
type byeDoneRule struct{ hold time.Duration }

func (byeDoneRule) OnSIPRequest(*SIPEvent) error  { return nil }
func (byeDoneRule) OnSIPResponse(*SIPEvent) error { return nil }
func (byeDoneRule) SIPSends() (bool, bool)        { return false, true }

func (r byeDoneRule) OnSIPSend(x *SIPEvent, request, done bool) error {
	if m, err := ParseSIP(x.Message()); err == nil && done && !request && byeDone(&m) {
		time.Sleep(r.hold)
	}
	return nil
}

// TestSIPTerminateOnByeNextRequest: with terminate-on-bye, a request the
// client sends as soon as it has the BYE's answer opens a connection of
// its own to the member instead of going down the one being ended, whose
// answers would never come back.
func TestSIPTerminateOnByeNextRequest(t *testing.T) {
	s1 := startSIPMember(t, "127.83.24.1:0", "S1")
	cfg := sipConfig(newTestPoolAddrs(s1), false)
	cfg.Request.SIP.TerminateOnBye = true
	vs := startVS(t, "127.83.24.10:0", cfg, func(c net.Conn) ClientOptions {
		return ClientOptions{Tag: c.RemoteAddr().String(), SIPRule: byeDoneRule{hold: 300 * time.Millisecond}}
	})
	c := dialSIP(t, vs)
	for d := 0; d < 2; d++ {
		cid := fmt.Sprintf("bye-%d@127.83.24.9", d)
		c.send(sipRequest("INVITE", cid, "z9hG4bKi"+cid, 1, ""))
		if trying, ok := c.recv(), c.recv(); trying.Code != 100 || ok.Code != 200 {
			t.Fatalf("dialog %d: INVITE answered %d %d, want 100 and 200", d, trying.Code, ok.Code)
		}
		c.send(sipRequest("ACK", cid, "z9hG4bKa"+cid, 1, ""))
		c.send(sipRequest("BYE", cid, "z9hG4bKb"+cid, 2, ""))
		if bye := c.recv(); bye.Code != 200 {
			t.Fatalf("dialog %d: BYE answered %d", d, bye.Code)
		}
	}
}
