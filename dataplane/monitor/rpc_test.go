package monitor

import (
	"encoding/binary"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// rpcServe answers ONC RPC calls on a loopback socket of network (tcp:
// one call per connection, in a record; udp: one datagram each, up to
// 32). handle gets the call as XDR words (xid, CALL, 2, program,
// version, procedure, AUTH_NONE credentials and verifier, arguments)
// and returns the reply's words, or nil for no reply (over tcp the
// connection is then held open a second).
func rpcServe(t *testing.T, network string, handle func(w []uint32) []uint32) netip.AddrPort {
	t.Helper()
	words := func(b []byte) []uint32 {
		var w []uint32
		for ; len(b) >= 4; b = b[4:] {
			w = append(w, binary.BigEndian.Uint32(b))
		}
		return w
	}
	bytesOf := func(w []uint32) []byte {
		var b []byte
		for _, v := range w {
			b = binary.BigEndian.AppendUint32(b, v)
		}
		return b
	}
	if network == "udp" {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pc.Close() })
		go func() {
			buf := make([]byte, 1<<10)
			for i := 0; i < 32; i++ {
				n, from, err := pc.ReadFrom(buf)
				if err != nil {
					return
				}
				if w := words(buf[:n]); len(w) >= 10 {
					if r := handle(w); r != nil {
						pc.WriteTo(bytesOf(r), from)
					}
				}
			}
		}()
		return netip.MustParseAddrPort(pc.LocalAddr().String())
	}
	target, err := echoServer(t, "127.0.0.1:0", func(c net.Conn) {
		call, err := readRecord(c)
		if w := words(call); err == nil && len(w) >= 10 {
			if r := handle(w); r != nil {
				b := bytesOf(r)
				c.Write(append(binary.BigEndian.AppendUint32(nil, rpcLastFrag|uint32(len(b))), b...))
				time.Sleep(50 * time.Millisecond) // let the reply go before the close
				return
			}
		}
		time.Sleep(time.Second) // no reply: hung, not closed
	})
	if err != nil {
		t.Fatal(err)
	}
	return target
}

// accepted is an accepted reply to xid with accept_stat stat.
func accepted(xid, stat uint32, results ...uint32) []uint32 {
	return append([]uint32{xid, 1, 0, 0, 0, stat}, results...)
}

// The fake programs: 100003 serves version 3; 200000 denies every call
// (AUTH_ERROR); 300000 is registered on a port nothing answers on;
// 400000 on one nothing listens on.
const (
	progServed = 100003
	progDenied = 200000
	progHung   = 300000
	progGone   = 400000
)

func rpcPrograms(w []uint32) []uint32 {
	xid, prog, vers := w[0], w[3], w[4]
	switch {
	case prog == progDenied:
		return []uint32{xid, 1, 1, 1, 1}
	case prog != progServed:
		return accepted(xid, rpcProgUnavail)
	case vers != 3:
		return accepted(xid, rpcProgMisver, 3, 3)
	}
	return accepted(xid, 0)
}

// portmapper answers GETPORT from ports, keyed by program, version and
// protocol; version 0 finds any version, as rpcbind does.
func portmapper(ports map[[3]uint32]uint16) func(w []uint32) []uint32 {
	return func(w []uint32) []uint32 {
		if w[3] != pmapProgram || w[4] != pmapVersion || w[5] != pmapGetPort || len(w) < 14 {
			return accepted(w[0], rpcProgUnavail)
		}
		prog, vers, prot := w[10], w[11], w[12]
		port := ports[[3]uint32{prog, vers, prot}]
		for k, p := range ports {
			if vers == 0 && k[0] == prog && k[2] == prot {
				port = p
			}
		}
		return accepted(w[0], 0, uint32(port))
	}
}

func TestProbeRPC(t *testing.T) {
	for _, network := range []string{"tcp", "udp"} {
		udp := network == "udp"
		prot := uint32(ipprotoTCP)
		if udp {
			prot = ipprotoUDP
		}
		progs := rpcServe(t, network, rpcPrograms)
		hung := rpcServe(t, network, func([]uint32) []uint32 { return nil })
		gone := closedPort(t, "127.0.0.1:0")
		if udp {
			pc, err := net.ListenPacket("udp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			gone = netip.MustParseAddrPort(pc.LocalAddr().String())
			pc.Close()
		}
		pm := rpcServe(t, network, portmapper(map[[3]uint32]uint16{
			{progServed, 3, prot}: progs.Port(), {progServed, 4, prot}: progs.Port(),
			{progDenied, 1, prot}: progs.Port(), {progHung, 1, prot}: hung.Port(), {progGone, 1, prot}: gone.Port(),
		}))
		for _, c := range []struct {
			name     string
			check    RPCCheck
			pmPort   uint16 // 0: the fake portmapper's
			deadline time.Duration
			up       bool
			errSub   string
			errIs    error
		}{
			{name: "served", check: RPCCheck{Program: progServed, Version: 3}, up: true},
			{name: "any version", check: RPCCheck{Program: progServed, AnyVersion: true}, up: true},
			{name: "version not served", check: RPCCheck{Program: progServed, Version: 4},
				errSub: "program version mismatch (serves 3 to 3)"},
			{name: "not registered", check: RPCCheck{Program: 100005, Version: 1},
				errSub: "Program 100005 version 1 is not registered for " + network},
			{name: "denied", check: RPCCheck{Program: progDenied, Version: 1}, errSub: "call denied: authentication error 1"},
			{name: "hung", check: RPCCheck{Program: progHung, Version: 1}, deadline: 300 * time.Millisecond, errIs: ErrNoResponse},
			{name: "gone", check: RPCCheck{Program: progGone, Version: 1}, errSub: "refused"},
			{name: "no portmapper", check: RPCCheck{Program: progServed, Version: 3}, pmPort: gone.Port(), errSub: "Portmapper: Unable to"},
		} {
			t.Run(network+"/"+c.name, func(t *testing.T) {
				chk := c.check
				chk.UDP, chk.PortmapPort = udp, pm.Port()
				if c.pmPort != 0 {
					chk.PortmapPort = c.pmPort
				}
				d := c.deadline
				if d == 0 {
					d = 5 * time.Second
				}
				// The member's own port plays no part.
				o, err := probe(t, &Spec{Type: RPC, RPC: &chk}, netip.AddrPortFrom(pm.Addr(), 1), d)
				wantVerdict(t, o, err, c.up, c.errSub, c.errIs)
			})
		}
	}
}

func TestRPCReply(t *testing.T) {
	b := func(w ...uint32) []byte {
		var out []byte
		for _, v := range w {
			out = binary.BigEndian.AppendUint32(out, v)
		}
		return out
	}
	for _, c := range []struct {
		name  string
		reply []byte
		err   string
	}{
		{"success with a verifier body", append(b(7, 1, 0, 1, 5), append([]byte("abcde\x00\x00\x00"), b(0, 42)...)...), ""},
		{"another call", b(8, 1, 0, 0, 0, 0), "reply to another call"},
		{"a call, not a reply", b(7, 0, 2, 100000), "not an RPC reply"},
		{"short", b(7, 1), "too short"},
		{"verifier overruns", b(7, 1, 0, 0, 400, 0), "too short"},
		{"RPC version mismatch", b(7, 1, 1, 0, 2, 2), "RPC version mismatch (serves 2 to 2)"},
		{"procedure unavailable", b(7, 1, 0, 0, 0, 3), "procedure unavailable"},
	} {
		res, err := rpcReply(c.reply, 7)
		switch {
		case c.err == "" && (err != nil || len(res) != 4 || binary.BigEndian.Uint32(res) != 42):
			t.Errorf("%s: %v %v", c.name, res, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want %q", c.name, err, c.err)
		}
	}
	if err := (*RPCCheck)(nil).check(); err == nil || !strings.Contains(err.Error(), "needs program-number") {
		t.Errorf("nil check: %v", err)
	}
}
