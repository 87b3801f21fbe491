package rules

import (
	"bufio"
	"io"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// lineServer answers each connection's first line with two lines, then
// closes; what it read after that (until the client closes) goes to
// rest.
func lineServer(t *testing.T) (string, chan string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	rest := make(chan string, 8)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				br := bufio.NewReader(c)
				l, err := br.ReadString('\n')
				if err != nil {
					rest <- "error " + err.Error()
					return
				}
				if strings.HasPrefix(l, "hold") {
					// Answer nothing; report when the client goes.
					b, _ := io.ReadAll(br)
					rest <- "closed " + string(b)
					return
				}
				io.WriteString(c, "hello "+l+"second line\n")
			}()
		}
	}()
	return ln.Addr().String(), rest
}

// runRule runs body in CLIENT_ACCEPTED and returns the session (released
// by the test's end) to read its variables.
func runRule(t *testing.T, env *Env, body string) *ConnState {
	t.Helper()
	r := mustCompile(t, "sb", "when CLIENT_ACCEPTED {\n"+body+"\n}")
	env.Timeout = 10 * time.Second
	s := NewProgram(env, r).NewConnState(newFakeConn())
	t.Cleanup(s.Release)
	if err := s.Run(ClientAccepted); err != nil {
		t.Fatalf("rule: %v", err)
	}
	return s
}

func vars(s *ConnState, names ...string) string {
	var out []string
	for _, n := range names {
		v, _ := s.Var(n)
		out = append(out, n+"="+v)
	}
	return strings.Join(out, " ")
}

func TestSidebandTCP(t *testing.T) {
	addr, _ := lineServer(t)
	s := runRule(t, &Env{}, `
set ::c [connect -timeout 2000 -status ::cst `+addr+`]
set ::sent [send -timeout 1000 -status ::sst $::c "world\n"]
set ::l1 [recv -eol -timeout 2000 -status ::r1 $::c]
set ::peek [recv -peek -timeout 2000 6 $::c]
set ::n [recv -timeout 2000 -status ::r2 100 $::c ::l2]
set ::info [connect info -protocol -status $::c]
close $::c
`)
	want := "cst=connected sst=sent sent=6 l1=hello world\n peek=second r1=received n=12 l2=second line\n r2=closed info=TCP connected"
	if got := vars(s, "cst", "sst", "sent", "l1", "peek", "r1", "n", "l2", "r2", "info"); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if c, _ := s.Var("c"); !strings.HasPrefix(c, "sideband") {
		t.Errorf("connection id %q", c)
	}
}

func TestSidebandTimeoutsAndFailures(t *testing.T) {
	addr, rest := lineServer(t)
	// Nothing to read: an immediate timeout answers nothing.
	s := runRule(t, &Env{}, `
set ::c [connect `+addr+`]
send $::c "hold\n"
set ::got [recv -status ::st $::c]
set ::got2 [recv -timeout 50 -status ::st2 $::c]
`)
	if got := vars(s, "got", "st", "got2", "st2"); got != "got= st=timeout got2= st2=timeout" {
		t.Errorf("recv without data: %s", got)
	}
	// The client connection's end closes its sideband connections.
	s.Release()
	select {
	case r := <-rest:
		if r != "closed " {
			t.Errorf("server saw %q", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the sideband connection was not closed with the client connection")
	}

	// A refused connection: an empty id and status failed.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := ln.Addr().String()
	ln.Close()
	s = runRule(t, &Env{}, `set ::c [connect -status ::st `+dead+`]`)
	if got := vars(s, "c", "st"); got != "c= st=failed" {
		t.Errorf("refused connect: %s", got)
	}
	for _, c := range []struct{ body, err string }{
		{"send nosuch data", `"nosuch" is not an open sideband connection`},
		{"connect -protocol SCTP 127.0.0.1:1", `-protocol "SCTP" is not TCP or UDP`},
		{"connect nowhere_vs", `"nowhere_vs" is neither ADDRESS:PORT nor a virtual server`},
		{"connect -timeout soon 127.0.0.1:1", "-timeout expects milliseconds"},
		{"recv", "wrong # args"},
	} {
		r := mustCompile(t, "sb", "when CLIENT_ACCEPTED { "+c.body+" }")
		st := NewProgram(&Env{}, r).NewConnState(newFakeConn())
		err := st.Run(ClientAccepted)
		st.Release()
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: %v, want %q", c.body, err, c.err)
		}
	}
}

func TestSidebandUDPAndVirtualName(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		b := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(b)
			if err != nil {
				return
			}
			pc.WriteTo(append([]byte("echo "), b[:n]...), from)
		}
	}()
	ap := netip.MustParseAddrPort(pc.LocalAddr().String())
	env := &Env{VirtualAddr: func(name string) (netip.AddrPort, bool) { return ap, name == "/Common/log_vs" }}
	s := runRule(t, env, `
set ::c [connect -protocol UDP log_vs]
send $::c "ping"
set ::got [recv -timeout 2000 $::c]
`)
	if got := vars(s, "got"); got != "got=echo ping" {
		t.Errorf("udp through a virtual's name: %s", got)
	}
}
