package rules

import (
	"net/netip"
	"strings"
	"testing"
	"time"
)

// listenFake is a connection that opens pretend listeners: it records
// each spec and answers a port of its own.
type listenFake struct {
	*fakeConn
	specs []ListenSpec
}

func (f *listenFake) Listen(s ListenSpec) (netip.AddrPort, error) {
	f.specs = append(f.specs, s)
	a := s.Bind.Addr()
	if !a.IsValid() {
		a = f.addrs[EndVirtual].Addr()
	}
	p := s.Bind.Port()
	if p == 0 {
		p = 30000 + uint16(len(f.specs))
	}
	return netip.AddrPortFrom(a, p), nil
}

func TestListenCommand(t *testing.T) {
	cases := []struct {
		name, body string
		ret        string // the command's answer
		spec       ListenSpec
		err        string
	}{
		{"F5's example form", `listen {
			proto [IP::protocol]
			timeout 30
			bind 4093 [IP::local_addr] 4444
			server [LB::server addr] 7
			allow [IP::client_addr]
		}`, "127.0.0.43 4444", ListenSpec{Proto: 6, Timeout: 30 * time.Second, VLAN: "4093",
			Bind: netip.MustParseAddrPort("127.0.0.43:4444"), Server: netip.MustParseAddrPort("127.0.0.34:7"),
			Allow: netip.MustParseAddr("127.0.0.9")}, ""},
		{"one line, ephemeral port on the virtual's address", `listen { proto 6; server 10.1.2.3 2121; allow 10.9.9.9 5000 }`,
			"127.0.0.43 30001", ListenSpec{Proto: 6, Timeout: listenTimeout, Server: netip.MustParseAddrPort("10.1.2.3:2121"),
				Allow: netip.MustParseAddr("10.9.9.9"), AllowPort: 5000}, ""},
		{"bind without a vlan, long timeout capped", `listen { timeout 999999; bind 127.0.0.50 0; server 10.1.2.3 21 }`,
			"127.0.0.50 30001", ListenSpec{Proto: 6, Timeout: listenTimeoutMax, Bind: netip.MustParseAddrPort("127.0.0.50:0"),
				Server: netip.MustParseAddrPort("10.1.2.3:21")}, ""},
		{"no server", `listen { proto 6; timeout 5 }`, "", ListenSpec{}, "listen: no server"},
		{"udp", `listen { proto 17; server 10.1.2.3 53 }`, "127.0.0.43 30001", ListenSpec{Proto: 17, Timeout: listenTimeout,
			Server: netip.MustParseAddrPort("10.1.2.3:53")}, ""},
		{"bad proto", `listen { proto 1; server 10.1.2.3 53 }`, "", ListenSpec{}, `bad proto "1"`},
		{"bad clause", `listen { server 10.1.2.3 53; backlog 5 }`, "", ListenSpec{}, `bad clause "backlog"`},
		{"bad timeout", `listen { server 10.1.2.3 53; timeout soon }`, "", ListenSpec{}, `bad timeout "soon"`},
		{"bad server", `listen { server nowhere 53 }`, "", ListenSpec{}, `bad server address "nowhere"`},
		{"twice", `listen { server 10.1.2.3 53; server 10.1.2.4 53 }`, "", ListenSpec{}, "server given twice"},
		{"arguments", `listen -proto TCP`, "", ListenSpec{}, "wrong # args"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := mustCompile(t, "l", "when CLIENT_ACCEPTED {\nset ::ret [catch {"+c.body+"} ::out]\n}")
			f := &listenFake{fakeConn: newFakeConn()}
			s := NewProgram(&Env{}, r).NewConnState(f)
			if err := s.Run(ClientAccepted); err != nil {
				t.Fatal(err)
			}
			ret, _ := s.Var("ret")
			out, _ := s.Var("out")
			if c.err != "" {
				if ret != "1" || !strings.Contains(out, c.err) {
					t.Errorf("got %s %q, want an error with %q", ret, out, c.err)
				}
				if len(f.specs) != 0 {
					t.Errorf("a listener was opened: %+v", f.specs)
				}
				s.Release()
				return
			}
			if ret != "0" || out != c.ret {
				t.Fatalf("got %s %q, want %q", ret, out, c.ret)
			}
			if len(f.specs) != 1 || f.specs[0] != c.spec {
				t.Errorf("spec %+v\nwant %+v", f.specs, c.spec)
			}
			s.Release()
		})
	}
}

func TestListenBound(t *testing.T) {
	r := mustCompile(t, "l", `when CLIENT_ACCEPTED {
		for {set i 0} {$i < 20} {incr i} {
			if {[catch {listen { server 10.1.2.3 21 }} ::err]} { break }
		}
		set ::n $i
	}`)
	f := &listenFake{fakeConn: newFakeConn()}
	s := NewProgram(&Env{}, r).NewConnState(f)
	if err := s.Run(ClientAccepted); err != nil {
		t.Fatal(err)
	}
	n, _ := s.Var("n")
	e, _ := s.Var("err")
	if n != "16" || !strings.Contains(e, "16 listeners this connection opened are waiting already") {
		t.Errorf("opened %s, error %q", n, e)
	}
	s.Release()
}

func TestListenWithoutListener(t *testing.T) {
	r := mustCompile(t, "l", "when CLIENT_ACCEPTED {\nset ::ret [catch {listen { server 10.1.2.3 21 }} ::out]\n}")
	s := NewProgram(&Env{}, r).NewConnState(newFakeConn())
	defer s.Release()
	if err := s.Run(ClientAccepted); err != nil {
		t.Fatal(err)
	}
	if out, _ := s.Var("out"); !strings.Contains(out, "cannot open related listeners") {
		t.Errorf("got %q", out)
	}
}
