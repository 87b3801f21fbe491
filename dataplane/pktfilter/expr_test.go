package pktfilter

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func pkt(proto uint8, src, dst string) *Packet {
	return &Packet{Proto: proto, Src: netip.MustParseAddrPort(src), Dst: netip.MustParseAddrPort(dst)}
}

// TestMatch: each expression of the subset against TCP and UDP packets.
func TestMatch(t *testing.T) {
	tcp := pkt(ProtoTCP, "127.182.1.5:40000", "127.182.0.1:30080")
	udp := pkt(ProtoUDP, "127.182.2.9:5353", "127.182.0.1:53")
	v6 := pkt(ProtoTCP, "[2001:db8::5]:40000", "[2001:db8::1]:443")
	for _, c := range []struct {
		expr string
		p    *Packet
		want bool
	}{
		{"", tcp, true},
		{"host 127.182.1.5", tcp, true},
		{"host 127.182.0.1", tcp, true},
		{"src host 127.182.0.1", tcp, false},
		{"dst host 127.182.0.1", tcp, true},
		{"src 127.182.1.5", tcp, true},
		{"127.182.1.5", tcp, true},
		{"src and dst host 127.182.1.5", tcp, false},
		{"src or dst host 127.182.0.1", tcp, true},
		{"net 127.182.1.0/24", tcp, true},
		{"src net 127.182.1.0/24", udp, false},
		{"net 127.182.0.0 mask 255.255.0.0", udp, true},
		{"net 127.182", udp, true},
		{"127.182.0.0/16", udp, true},
		{"port 30080", tcp, true},
		{"src port 30080", tcp, false},
		{"dst port 30080", tcp, true},
		{"tcp dst port 30080", tcp, true},
		{"udp dst port 30080", tcp, false},
		{"port domain", udp, true},
		{"portrange 30000-31000", tcp, true},
		{"dst portrange 1-1024", tcp, false},
		{"tcp", tcp, true},
		{"udp", tcp, false},
		{"icmp", tcp, false},
		{"ip", tcp, true},
		{"ip6", tcp, false},
		{"ip6", v6, true},
		{"proto 6", tcp, true},
		{"proto 17", tcp, false},
		{"ip proto 17", udp, true},
		{"proto tcp", tcp, true},
		{"ip host 127.182.1.5", tcp, true},
		{"ip6 host 2001:db8::5", v6, true},
		{"host 2001:db8::5", tcp, false},
		{"net 2001:db8::/32", v6, true},
		{"tcp and host 127.182.1.5", tcp, true},
		{"tcp && not host 127.182.1.5", tcp, false},
		{"!tcp", tcp, false},
		{"udp or src host 127.182.1.5", tcp, true},
		{"udp || src host 127.182.1.6", tcp, false},
		{"(udp or tcp) and (port 53 or port 30080)", tcp, true},
		{"not (port 53 or port 30080)", udp, false},
		{"port 80 or 30080", tcp, true},
		{"host 127.182.9.9 or 127.182.1.5", tcp, true},
		{"host 127.182.9.9 or 127.182.1.0/24", tcp, true},
		{"tcp and not port 22 and src net 127.182.1.0/24", tcp, true},
		{"not tcp or udp and port 53", udp, true},
		{"udp or tcp and port 1", udp, false}, // pcap: (udp or tcp) and port 1
		{"udp or (tcp and port 1)", udp, true},
		{"TCP and HOST 127.182.1.5", tcp, true},
	} {
		e, err := Compile(c.expr)
		if err != nil {
			t.Errorf("Compile(%q): %v", c.expr, err)
			continue
		}
		if got := e.Match(c.p); got != c.want {
			t.Errorf("%q on %v: %v, want %v", c.expr, *c.p, got, c.want)
		}
	}
}

// TestCompileErrors: what BIG-IP refuses is an *Error at the column of
// the offending word; valid pcap outside the subset is *Unsupported.
func TestCompileErrors(t *testing.T) {
	for _, c := range []struct {
		expr        string
		unsupported bool
		line, col   int
		has         string
	}{
		{"src hots 1.2.3.4", false, 1, 5, `unknown word "hots"`},
		{"hots", false, 1, 1, "expected host"},
		{"host", false, 1, 5, "host needs a value"},
		{"host 1.2.3", false, 1, 6, "IPv4 or IPv6 address"},
		{"host www.example.com", false, 1, 6, "does not resolve names"},
		{"tcp and", false, 1, 8, "the rule ends"},
		{"(tcp or udp", false, 1, 12, "unbalanced ("},
		{"tcp)", false, 1, 4, "unbalanced )"},
		{"port 70000", false, 1, 6, "0 to 65535"},
		{"portrange 90-80", false, 1, 11, "LOW-HIGH"},
		{"net 10.0.0.1/8", false, 1, 5, "host bits set"},
		{"net 10.0.0.0/33", false, 1, 5, "LEN from 0 to 32"},
		{"net 10.0.0.0 mask 255.0.255.0", false, 1, 19, "contiguous"},
		{"proto 300", false, 1, 7, "0 to 255"},
		{"tcp host 1.2.3.4", false, 1, 5, "expected and, or"},
		{"tcp port 80\nand hots 1", false, 2, 5, `unknown word "hots"`},
		{"tcp[13] & 2 != 0", true, 1, 4, "byte offsets"},
		{"ether host 00:11:22:33:44:55", true, 1, 1, `"ether"`},
		{"vlan 10 and tcp", true, 1, 1, `"vlan"`},
		{"tcp and arp", true, 1, 9, `"arp"`},
		{"host 1.2.3.4 and (len > 100)", true, 1, 19, `"len"`},
	} {
		_, err := Compile(c.expr)
		var pe *Error
		var ue *Unsupported
		switch {
		case err == nil:
			t.Errorf("Compile(%q) accepted", c.expr)
			continue
		case c.unsupported && errors.As(err, &ue):
			if ue.Line != c.line || ue.Col != c.col {
				t.Errorf("Compile(%q): %v, want at %d:%d", c.expr, err, c.line, c.col)
			}
		case !c.unsupported && errors.As(err, &pe):
			if pe.Line != c.line || pe.Col != c.col {
				t.Errorf("Compile(%q): %v, want at %d:%d", c.expr, err, c.line, c.col)
			}
		default:
			t.Errorf("Compile(%q): %T %v, want unsupported %v", c.expr, err, err, c.unsupported)
			continue
		}
		if !strings.Contains(err.Error(), c.has) {
			t.Errorf("Compile(%q): %q does not say %q", c.expr, err, c.has)
		}
	}
}

// TestMatchAllocs: a match allocates nothing.
func TestMatchAllocs(t *testing.T) {
	e, err := Compile("(tcp or udp) and src net 127.182.0.0/16 and not (dst port 22 or portrange 6000-6100) or host 2001:db8::1")
	if err != nil {
		t.Fatal(err)
	}
	p := pkt(ProtoTCP, "127.182.1.5:40000", "127.182.0.1:30080")
	if n := testing.AllocsPerRun(100, func() { e.Match(p) }); n != 0 {
		t.Errorf("Match allocates %v times", n)
	}
	var h Holder
	h.Store(&Set{Filters: []*Filter{{Name: "a", Order: 1, Action: Continue, Expr: e}, {Name: "b", Order: 2, Action: Reject, Expr: e}}})
	if n := testing.AllocsPerRun(100, func() { h.Decide(p) }); n != 0 {
		t.Errorf("Decide allocates %v times", n)
	}
}

// FuzzCompile: Compile never panics, and what it accepts matches
// without panicking; errors carry a position inside the text.
func FuzzCompile(f *testing.F) {
	for _, s := range []string{"", "host 1.2.3.4", "src net 10.0.0.0/8 and not port 22", "(tcp or udp) && !(dst portrange 1-1024)",
		"net 10 mask 255.0.0.0", "port 80 or 443", "tcp[13] & 2 != 0", "ip6 host ::1", "src or dst host 1.1.1.1", "((("} {
		f.Add(s)
	}
	p := pkt(ProtoTCP, "10.1.2.3:1000", "10.0.0.1:80")
	f.Fuzz(func(t *testing.T, s string) {
		e, err := Compile(s)
		if err != nil {
			var pe *Error
			var ue *Unsupported
			if errors.As(err, &pe) {
				if pe.Line < 1 || pe.Col < 1 || pe.Line > strings.Count(s, "\n")+1 {
					t.Fatalf("%q: position %d:%d outside the text", s, pe.Line, pe.Col)
				}
			} else if !errors.As(err, &ue) {
				t.Fatalf("%q: error of type %T", s, err)
			}
			return
		}
		e.Match(p)
		if e.String() != s {
			t.Fatalf("String() = %q, want %q", e.String(), s)
		}
	})
}
