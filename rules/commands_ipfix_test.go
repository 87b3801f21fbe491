package rules

import (
	"fmt"
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/ipfix"
)

// ipfixFake keeps what IPFIX::destination send gives it, encoded.
type ipfixFake struct {
	tmpls *ipfix.Templates
	sent  []string
}

func (f *ipfixFake) Elements() *ipfix.Elements   { return ipfix.IANA() }
func (f *ipfixFake) Templates() *ipfix.Templates { return f.tmpls }
func (f *ipfixFake) OpenDestination(p string) (string, error) {
	if p != "/Common/ipfix_pub" {
		return "", fmt.Errorf("IPFIX::destination open: no such log publisher: %s", p)
	}
	return "dest:" + p, nil
}
func (f *ipfixFake) Send(h string, r *ipfix.Record) (bool, error) {
	if !strings.HasPrefix(h, "dest:") {
		return false, fmt.Errorf("IPFIX::destination send: invalid destination %q", h)
	}
	f.sent = append(f.sent, fmt.Sprintf("%d %x", r.Template().ID, r.AppendIPFIX(nil)))
	return true, nil
}

func ipfixEnvFake(logs *logSink) (*Env, *ipfixFake) {
	f := &ipfixFake{tmpls: ipfix.NewTemplates()}
	return &Env{IPFIX: f, Statics: NewStatics(), Log: logs.log}, f
}

// TestIPFIXCommands: F5's example, a message filled over two events and
// sent; -pos picks the second of a repeated element; a message ends
// with its connection.
func TestIPFIXCommands(t *testing.T) {
	r := mustCompile(t, "/Common/r", `
when CLIENT_ACCEPTED {
  set dest [IPFIX::destination open -publisher /Common/ipfix_pub]
  set tmpl [IPFIX::template create "sourceIPv4Address destinationTransportPort destinationTransportPort"]
  set msg [IPFIX::msg create $tmpl]
  IPFIX::msg set $msg sourceIPv4Address 10.1.2.3
  log local0. "$tmpl $msg"
}
when SERVER_CONNECTED {
  IPFIX::msg set $msg destinationTransportPort -pos 1 443
  IPFIX::msg set $msg destinationTransportPort 80
  log local0. [IPFIX::destination send $dest $msg]
  IPFIX::msg delete $msg
  log local0. [catch {IPFIX::msg set $msg destinationTransportPort 1} err]$err
  IPFIX::destination close $dest
}`)
	logs := &logSink{}
	env, f := ipfixEnvFake(logs)
	p := NewProgram(env, r)
	s := p.NewConnState(newFakeConn())
	for _, ev := range []Event{ClientAccepted, ServerConnected} {
		if err := s.Run(ev); err != nil {
			t.Fatal(err)
		}
	}
	s.Release()
	want := []string{"ipfix_template_256 ipfix_msg_0", "1", `1invalid IPFIX message "ipfix_msg_0"`}
	if len(logs.lines) != 3 {
		t.Fatalf("log %q", logs.lines)
	}
	for i, w := range want {
		if !strings.Contains(logs.lines[i], w) {
			t.Errorf("log line %d %q, want %q", i, logs.lines[i], w)
		}
	}
	if len(f.sent) != 1 || f.sent[0] != "256 0a010203005001bb" {
		t.Fatalf("sent %q", f.sent)
	}
	// The rule's counters, for show sys ipfix irules; a rule without
	// IPFIX:: commands has none.
	if st, ok := r.IPFIX(); !ok || st != (IPFIXStats{Templates: 1, Created: 1, Sent: 1}) {
		t.Errorf("IPFIX counters %+v, %v", st, ok)
	}
	r.ResetIPFIXStats()
	if st, _ := r.IPFIX(); st != (IPFIXStats{}) {
		t.Errorf("after reset: %+v", st)
	}
	if _, ok := mustCompile(t, "/Common/plain", `when CLIENT_ACCEPTED { log local0. hi }`).IPFIX(); ok {
		t.Error("a rule without IPFIX:: commands has IPFIX counters")
	}
	// The next connection's state starts without messages.
	s = p.NewConnState(newFakeConn())
	defer s.Release()
	if s.ipfix != nil {
		for _, m := range s.ipfix.msgs {
			if m.live {
				t.Fatal("a message outlived its connection")
			}
		}
	}
}

// TestIPFIXCommandErrors: what the commands refuse, as Tcl errors a rule
// can catch.
func TestIPFIXCommandErrors(t *testing.T) {
	for _, c := range []struct{ script, want string }{
		{`IPFIX::destination open -publisher nosuch`, `no such log publisher: nosuch`},
		{`IPFIX::destination open nosuch`, `wrong # args`},
		{`IPFIX::destination flush x`, `bad option "flush"`},
		{`IPFIX::destination send nodest [IPFIX::msg create [IPFIX::template create octetDeltaCount]]`, `invalid destination "nodest"`},
		{`IPFIX::template create "sourceIPv4Address noSuchElement"`, `unknown IPFIX element "noSuchElement"`},
		{`IPFIX::template create ""`, `names no elements`},
		{`IPFIX::template delete ipfix_template_9999`, `was deleted`},
		{`IPFIX::template delete bogus`, `invalid IPFIX template "bogus"`},
		{`IPFIX::msg create bogus`, `invalid IPFIX template`},
		{`IPFIX::msg set ipfix_msg_3 octetDeltaCount 1`, `invalid IPFIX message "ipfix_msg_3"`},
		{`IPFIX::msg set [IPFIX::msg create [IPFIX::template create octetDeltaCount]] octetDeltaCount lots`, `not an unsigned integer`},
		{`IPFIX::msg set [IPFIX::msg create [IPFIX::template create octetDeltaCount]] packetDeltaCount 1`, `no element packetDeltaCount`},
		{`IPFIX::msg set [IPFIX::msg create [IPFIX::template create octetDeltaCount]] octetDeltaCount -pos x 1`, `-pos "x"`},
		{`IPFIX::msg set [IPFIX::msg create [IPFIX::template create octetDeltaCount]] octetDeltaCount -at 0 1`, `wrong # args`},
		{`set t [IPFIX::template create octetDeltaCount]; IPFIX::template delete $t; IPFIX::msg create $t`, `was deleted`},
	} {
		t.Run(c.script, func(t *testing.T) {
			r := mustCompile(t, "/Common/r", "when CLIENT_ACCEPTED {\n set rc [catch {"+c.script+"} err]\n log local0. \"$rc $err\"\n}")
			logs := &logSink{}
			env, _ := ipfixEnvFake(logs)
			s := NewProgram(env, r).NewConnState(newFakeConn())
			defer s.Release()
			if err := s.Run(ClientAccepted); err != nil {
				t.Fatal(err)
			}
			if len(logs.lines) != 1 || !strings.Contains(logs.lines[0], ": 1 ") || !strings.Contains(logs.lines[0], c.want) {
				t.Errorf("log %q; want a caught error containing %q", logs.lines, c.want)
			}
		})
	}
	// Without IPFIX (a check, a test engine) the commands are errors.
	r := mustCompile(t, "/Common/r", "when CLIENT_ACCEPTED { IPFIX::template create octetDeltaCount }")
	s := NewProgram(&Env{}, r).NewConnState(newFakeConn())
	defer s.Release()
	if err := s.Run(ClientAccepted); err == nil || !strings.Contains(err.Error(), "IPFIX is not available") {
		t.Fatalf("err %v", err)
	}
}

// BenchmarkIPFIXPerConnection is one connection's record: create, five
// fields set, send, and the state released; after the first connection
// it allocates only what the interpreter does for the values.
func BenchmarkIPFIXPerConnection(b *testing.B) {
	r := mustCompile(b, "/Common/r", `when CLIENT_ACCEPTED {
  set msg [IPFIX::msg create $static::t]
  IPFIX::msg set $msg sourceIPv4Address 10.1.2.3
  IPFIX::msg set $msg sourceTransportPort 40000
  IPFIX::msg set $msg destinationIPv4Address 10.9.9.9
  IPFIX::msg set $msg destinationTransportPort 443
  IPFIX::msg set $msg octetDeltaCount 1234
  IPFIX::destination send $static::d $msg
}`)
	logs := &logSink{}
	env, _ := ipfixEnvFake(logs)
	sink := &ipfixSink{ipfixFake: env.IPFIX.(*ipfixFake)}
	env.IPFIX = sink
	tm, _ := sink.tmpls.Create(ipfix.IANA(), "sourceIPv4Address sourceTransportPort destinationIPv4Address destinationTransportPort octetDeltaCount")
	env.Statics.Set("static::t", tclStr(fmt.Sprint("ipfix_template_", tm.ID)))
	env.Statics.Set("static::d", tclStr("dest:/Common/ipfix_pub"))
	p := NewProgram(env, r)
	conn := newFakeConn()
	b.ReportAllocs()
	for b.Loop() {
		s := p.NewConnState(conn)
		if err := s.Run(ClientAccepted); err != nil {
			b.Fatal(err)
		}
		s.Release()
	}
}

// ipfixSink encodes into one buffer, as an exporter's pooled ones.
type ipfixSink struct {
	*ipfixFake
	buf []byte
}

func (f *ipfixSink) Send(h string, r *ipfix.Record) (bool, error) {
	f.buf = r.AppendIPFIX(f.buf[:0])
	return true, nil
}
