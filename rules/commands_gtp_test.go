package rules

import (
	"strconv"
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/gtpmsg"
)

// TestGTPCommands: the GTP:: commands read a GTPv2 Create Session
// Request's header and IEs, edit it, build answers, discard and clone,
// and refuse what is wrong with a clear error.
func TestGTPCommands(t *testing.T) {
	imsi, _ := gtpmsg.EncodeTBCD("208010123456789")
	raw := (&gtpmsg.Message{Header: gtpmsg.Header{Version: 2, Type: gtpmsg.CreateSessionRequest, HasTEID: true, TEID: 77, Seq: 5},
		IEs: []gtpmsg.IE{{Type: gtpmsg.IEv2IMSI, Value: imsi}, {Type: gtpmsg.IEv2APN, Value: gtpmsg.EncodeAPN("ims.mnc001")}}}).Append(nil)
	for _, c := range []struct {
		name, ev, body, log, err string
		noMsg                    bool
		check                    func(t *testing.T, o GTPOutcome)
	}{
		{name: "header", ev: "GTP_SIGNALLING_INGRESS", body: `log local0. "[GTP::header version] [GTP::header type] [GTP::header teid] [GTP::header seq] [GTP::length]"`, log: "2 32 77 5 " + strconv.Itoa(len(raw))},
		{name: "ies", ev: "GTP_SIGNALLING_INGRESS", body: `log local0. "[GTP::ie count] [GTP::ie get value 1] [GTP::ie get value 71] [GTP::ie get exists 3] [GTP::ie get list]"`, log: "2 208010123456789 ims.mnc001 0 1:0 71:0"},
		{name: "edit", ev: "GTP_SIGNALLING_EGRESS", body: `GTP::ie set 71 internet; GTP::ie insert 3 9; GTP::ie remove 1; log local0. [GTP::ie get list]`, log: "3:0 71:0",
			check: func(t *testing.T, o GTPOutcome) {
				m, err := gtpmsg.Parse(o.Raw)
				if err != nil || !o.Edited {
					t.Fatalf("edited %v: %v", o.Edited, err)
				}
				if ie, _ := m.Find(gtpmsg.IEv2APN, 0, 0); gtpmsg.APN(ie.Value) != "internet" || m.Count(gtpmsg.IEv2IMSI) != 0 {
					t.Fatalf("IEs %+v", m.IEs)
				}
			}},
		{name: "respond and discard", ev: "GTP_SIGNALLING_INGRESS", body: `set r [GTP::new 2 33]; GTP::header -message $r seq [GTP::header seq]; GTP::ie -message $r insert 2 16; GTP::respond $r; GTP::discard; log local0. [GTP::header -message $r type]`, log: "33",
			check: func(t *testing.T, o GTPOutcome) {
				if !o.Discard || len(o.Respond) != 1 {
					t.Fatalf("outcome %+v", o)
				}
				m, err := gtpmsg.Parse(o.Respond[0])
				if err != nil || m.Type != 33 || m.Seq != 5 {
					t.Fatalf("answer %+v %v", m, err)
				}
			}},
		{name: "clone", ev: "GTP_SIGNALLING_INGRESS", body: `GTP::clone 127.0.0.1 2123; set c [GTP::clone]; GTP::forward $c; log local0. [GTP::header -message $c type]`, log: "32",
			check: func(t *testing.T, o GTPOutcome) {
				if len(o.Clones) != 1 || o.Clones[0].To.Port() != 2123 || len(o.Forward) != 1 {
					t.Fatalf("outcome %+v", o)
				}
			}},
		{name: "parse", ev: "GTP_SIGNALLING_INGRESS", body: `set m [GTP::parse [GTP::message]]; log local0. [GTP::ie -message $m count]`, log: "2"},
		{name: "no message", ev: "CLIENT_ACCEPTED", body: `GTP::header type`, noMsg: true, err: "no GTP message in CLIENT_ACCEPTED"},
		{name: "bad field", ev: "GTP_SIGNALLING_INGRESS", body: `GTP::header colour`, err: `unknown field "colour"`},
		{name: "bad path", ev: "GTP_SIGNALLING_INGRESS", body: `GTP::ie get value imsi`, err: `"imsi" is not an IE path`},
		{name: "bad handle", ev: "GTP_SIGNALLING_INGRESS", body: `GTP::respond nope`, err: `"nope" is not a GTP message of this event`},
		{name: "bad parse", ev: "GTP_SIGNALLING_INGRESS", body: `GTP::parse abc`, err: `GTP::parse:`},
		{name: "bad digits", ev: "GTP_SIGNALLING_INGRESS", body: `GTP::ie set 1 12ab`, err: `"12ab" is not digits`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := mustCompile(t, "gtp", "when "+c.ev+" { "+c.body+" }")
			if u := r.Unsupported(); len(u) > 0 {
				t.Fatalf("refused as not implemented: %v", u)
			}
			var logged []string
			p := NewProgram(&Env{Log: func(_, l string) { logged = append(logged, l) }}, r)
			s := p.NewConnState(newFakeConn())
			defer s.Release()
			if !c.noMsg {
				if err := s.BeginGTP(append([]byte(nil), raw...)); err != nil {
					t.Fatal(err)
				}
			}
			ev, _ := ParseEvent(c.ev)
			err := s.Run(ev)
			o := s.EndGTP()
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(logged) == 0 || !strings.HasSuffix(logged[len(logged)-1], ">: "+c.log) {
				t.Fatalf("logged %q, want %q", logged, c.log)
			}
			if c.check != nil {
				c.check(t, o)
			}
		})
	}
}
