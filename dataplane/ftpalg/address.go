package ftpalg

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// ErrSyntax is a PORT, EPRT, 227 or 229 argument that does not parse:
// the gateway refuses it rather than pass on an address it cannot read.
var ErrSyntax = errors.New("ftpalg: malformed address argument")

// ErrProtocol is an EPRT network protocol other than 1 (IPv4) or 2
// (IPv6), which RFC 2428 answers with 522.
var ErrProtocol = errors.New("ftpalg: unsupported network protocol")

// ParseHostPort reads RFC 959's h1,h2,h3,h4,p1,p2, the argument of PORT
// and the address in a 227 answer: the six decimal bytes of an IPv4
// address and a port, which the gateway replaces with its own.
func ParseHostPort(s string) (netip.AddrPort, error) {
	parts := strings.Split(strings.TrimSpace(s), ",")
	if len(parts) != 6 {
		return netip.AddrPort{}, ErrSyntax
	}
	var b [6]byte
	for i, p := range parts {
		n, err := strconv.ParseUint(strings.TrimSpace(p), 10, 8)
		if err != nil {
			return netip.AddrPort{}, ErrSyntax
		}
		b[i] = byte(n)
	}
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{b[0], b[1], b[2], b[3]}), uint16(b[4])<<8|uint16(b[5])), nil
}

// FormatHostPort writes ap as h1,h2,h3,h4,p1,p2 (ap must be IPv4: PORT
// and 227 carry no other family).
func FormatHostPort(ap netip.AddrPort) string {
	a := ap.Addr().Unmap().As4()
	p := ap.Port()
	return fmt.Sprintf("%d,%d,%d,%d,%d,%d", a[0], a[1], a[2], a[3], p>>8, p&0xff)
}

// ParseEPRT reads RFC 2428's EPRT argument, <d>proto<d>addr<d>port<d>,
// where d is any printable character the client chose: the address the
// client listens on for an active data connection.
func ParseEPRT(s string) (netip.AddrPort, error) {
	s = strings.TrimSpace(s)
	if len(s) < 7 || s[0] < 33 || s[0] > 126 {
		return netip.AddrPort{}, ErrSyntax
	}
	f := strings.Split(s, s[:1])
	if len(f) != 5 || f[0] != "" || f[4] != "" {
		return netip.AddrPort{}, ErrSyntax
	}
	if f[1] != "1" && f[1] != "2" {
		return netip.AddrPort{}, ErrProtocol
	}
	a, err := netip.ParseAddr(f[2])
	if err != nil || a.Is4() != (f[1] == "1") || a.Zone() != "" {
		return netip.AddrPort{}, ErrSyntax
	}
	p, err := strconv.ParseUint(f[3], 10, 16)
	if err != nil || p == 0 {
		return netip.AddrPort{}, ErrSyntax
	}
	return netip.AddrPortFrom(a, uint16(p)), nil
}

// FormatEPRT writes ap as an EPRT argument with | as the delimiter, the
// protocol following ap's family.
func FormatEPRT(ap netip.AddrPort) string {
	a := ap.Addr().Unmap()
	proto := "2"
	if a.Is4() {
		proto = "1"
	}
	return fmt.Sprintf("|%s|%s|%d|", proto, a, ap.Port())
}

// Parse227 finds the address in a 227 answer's text. RFC 959 does not
// fix the text around it (most servers write "(h1,...,p2)", some leave
// the parentheses out), so the first run of six comma-separated numbers
// is taken, as RFC 1123 4.1.2.6 advises clients to do.
func Parse227(text string) (netip.AddrPort, error) {
	for i := 0; i < len(text); i++ {
		if !isDigit(text[i]) || i > 0 && isDigit(text[i-1]) {
			continue
		}
		j := i
		for j < len(text) && (isDigit(text[j]) || text[j] == ',' || text[j] == ' ') {
			j++
		}
		if ap, err := ParseHostPort(strings.TrimRight(text[i:j], ", ")); err == nil {
			return ap, nil
		}
	}
	return netip.AddrPort{}, ErrSyntax
}

// Parse229 reads the port of a 229 answer, "(<d><d><d>port<d>)": EPSV
// names no address, the data connection goes to the control
// connection's peer.
func Parse229(text string) (uint16, error) {
	i := strings.IndexByte(text, '(')
	if i < 0 || len(text) < i+6 {
		return 0, ErrSyntax
	}
	d := text[i+1]
	rest := text[i+1:]
	if rest[1] != d || rest[2] != d {
		return 0, ErrSyntax
	}
	end := strings.IndexByte(rest[3:], d)
	if end < 0 || len(rest) < 3+end+2 || rest[3+end+1] != ')' {
		return 0, ErrSyntax
	}
	p, err := strconv.ParseUint(rest[3:3+end], 10, 16)
	if err != nil || p == 0 {
		return 0, ErrSyntax
	}
	return uint16(p), nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
