package rules

import (
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/aaa"
	"github.com/openltm/openltm/dataplane/radius"
)

// fakeRADIUS answers every request on a loopback UDP port: Access-Accept
// for User-Name alice, Access-Reject for anyone else, Accounting-Response
// to accounting.
func fakeRADIUS(t *testing.T, addr, secret string) netip.AddrPort {
	t.Helper()
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, radius.MaxLen)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			req := buf[:n]
			u, _ := radius.Attr(req, radius.AttrID{Type: radius.AttrUserName}, 0)
			code := byte(radius.AccessReject)
			switch {
			case radius.Code(req) == radius.AccountingRequest:
				code = radius.AccountingResponse
			case string(u) == "alice":
				code = radius.AccessAccept
			}
			resp := []byte{code, radius.ID(req), 0, 20}
			resp = append(resp, make([]byte, 16)...)
			radius.SignResponse(resp, radius.Authenticator(req), []byte(secret))
			pc.WriteTo(resp, from)
		}
	}()
	return netip.MustParseAddrPort(addr)
}

// TestAAACommands runs AAA::auth_send, AAA::acct_send and their results
// against a RADIUS server through a service whose rules run the
// RADIUS_AAA_* events (RunAAA): the request is edited there, the answer
// read.
func TestAAACommands(t *testing.T) {
	server := fakeRADIUS(t, "127.166.2.1:18121", "sec")
	var logs []string
	env := &Env{Log: func(_, line string) { logs = append(logs, line) }}
	ivs := NewProgram(env, mustCompile(t, "ivs", `when RADIUS_AAA_AUTH_REQUEST {
    if { [RADIUS::avp User-Name] eq "al" } { RADIUS::avp replace User-Name alice }
    if { [RADIUS::avp User-Name] eq "mallory" } { drop }
}
when RADIUS_AAA_AUTH_RESPONSE { log local0. "answer [RADIUS::code] [IP::server_addr]" }
when RADIUS_AAA_ACCT_REQUEST { log local0. "acct [RADIUS::avp Acct-Session-Id] [RADIUS::avp Acct-Status-Type] [RADIUS::avp Framed-IP-Address]" }`))
	svc := &aaa.Service{Name: "/Common/ivs", Secret: []byte("sec"), Retransmit: time.Second, Transaction: 3 * time.Second,
		Pick:  func() (netip.AddrPort, bool) { return server, true },
		Hooks: hooksOf(ivs)}
	env.AAA = func(name string) (*aaa.Service, bool) { return svc, name == "ivs" || name == "/Common/ivs" }
	for _, c := range []struct {
		name, script string
		want         []string
	}{
		{"accepted", `when CLIENT_ACCEPTED { log local0. "r [AAA::auth_result [AAA::auth_send ivs alice pw]]" }`,
			[]string{"answer 2 127.166.2.1", "r OK"}},
		{"rejected", `when CLIENT_ACCEPTED { log local0. "r [AAA::auth_result [AAA::auth_send /Common/ivs bob pw]]" }`,
			[]string{"answer 3 127.166.2.1", "r FAIL"}},
		{"edited", `when CLIENT_ACCEPTED { log local0. "r [AAA::auth_result [AAA::auth_send ivs al]]" }`,
			[]string{"answer 2 127.166.2.1", "r OK"}},
		{"ended by the rules", `when CLIENT_ACCEPTED { log local0. "r [AAA::auth_result [AAA::auth_send ivs mallory pw]]" }`,
			[]string{"r ERROR"}},
		{"accounting", `when CLIENT_ACCEPTED {
    set id [AAA::acct_send ivs user-name alice acct-session-id s9 acct-status-type 1 framed-ip-address 10.1.2.3 3gpp-imsi 001010123456789]
    log local0. "r [AAA::acct_result $id]"
}`, []string{"acct s9 1 10.1.2.3", "r OK"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			logs = nil
			p := NewProgram(env, mustCompile(t, "r", c.script))
			s := p.NewConnState(blockInfoConn{infoConn{newFakeConn()}})
			defer s.Release()
			if err := s.Run(ClientAccepted); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range logs {
				if _, msg, ok := strings.Cut(l, ">: "); ok {
					got = append(got, msg)
				}
			}
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// blockInfoConn is a connection of a virtual server whose events may
// wait (Blocker).
type blockInfoConn struct{ infoConn }

func (blockInfoConn) MayBlock() bool { return true }

// hooksOf runs p's RADIUS_AAA_* events, as the daemon's aaaRules does.
func hooksOf(p *Program) aaa.Hooks { return progHooks{p} }

type progHooks struct{ p *Program }

func (h progHooks) Request(acct bool, pkt []byte) ([]byte, error) {
	ev := RADIUSAAAAuthRequest
	if acct {
		ev = RADIUSAAAAcctRequest
	}
	m := AAAMessage{Packet: pkt}
	err := h.p.RunAAA(ev, &m)
	return m.Packet, err
}

func (h progHooks) Response(acct bool, pkt []byte, server netip.AddrPort) ([]byte, error) {
	ev := RADIUSAAAAuthResponse
	if acct {
		ev = RADIUSAAAAcctResponse
	}
	m := AAAMessage{Packet: pkt, Server: server}
	err := h.p.RunAAA(ev, &m)
	return m.Packet, err
}

// TestAAAErrors: what the AAA:: commands refuse; a result the event
// cannot wait for is INPROGRESS.
func TestAAAErrors(t *testing.T) {
	silent, err := net.ListenPacket("udp", "127.166.2.2:18121")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	svc := &aaa.Service{Name: "/Common/ivs", Secret: []byte("sec"), Transaction: 2 * time.Second,
		Pick: func() (netip.AddrPort, bool) { return netip.MustParseAddrPort("127.166.2.2:18121"), true }}
	env := &Env{AAA: func(name string) (*aaa.Service, bool) { return svc, name == "ivs" }}
	for _, c := range []struct{ expr, want string }{
		{"AAA::auth_send web u p", `"web" is not an internal virtual server with a radius-aaa profile`},
		{"AAA::auth_send ivs", "wrong # args"},
		{"AAA::acct_send ivs user-name", "wrong # args"},
		{"AAA::acct_send ivs colour blue", `unknown attribute "colour"`},
		{"AAA::acct_send ivs acct-status-type start", `acct-status-type "start"`},
		{"AAA::acct_send ivs framed-ipv6-prefix 10.0.0.0/8", "IPv6 prefix"},
		{"AAA::auth_result 9", `"9" is not the id of an AAA::auth_send request`},
		{"AAA::acct_result [AAA::auth_send ivs u p]", "is not the id of an AAA::acct_send request"},
	} {
		_, err := evalIn(t, infoConn{newFakeConn()}, env, ClientAccepted, c.expr)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.expr, err, c.want)
		}
	}
	// On a connection whose events may not wait, the answer not yet in
	// is INPROGRESS.
	v, err := evalIn(t, infoConn{newFakeConn()}, env, ClientAccepted, "AAA::auth_result [AAA::auth_send ivs u p]")
	if err != nil || v != "INPROGRESS" {
		t.Errorf("auth_result without waiting: %q, %v", v, err)
	}
}
