// Package pktfilter is BIG-IP's packet filters (`net packet-filter`,
// `net packet-filter-trusted` and the sys db keys `packetfilter` and
// `packetfilter.defaultaction`) for the traffic openltm serves: each new
// client connection (TCP) or new flow (UDP) that reaches a virtual server
// is matched against the filters in their order, the first match's action
// deciding (continue goes on to the next), the default action when none
// matches.
//
// A filter's rule is the tcpdump (pcap-filter) expression BIG-IP takes.
// Compile reads the subset this package acts on (host, net, port,
// portrange with their src/dst qualifiers, tcp, udp, icmp, ip, ip6, proto,
// and/or/not and parentheses) into a flat tree that Match walks without
// allocating. A syntax error is an *Error with the line and column inside
// the rule string; a valid pcap expression outside the subset (byte
// offsets, ether, vlan, arp, ...) is an *Unsupported error, which the
// daemon keeps with a warning: such a filter does not act at all, never
// on half of its expression.
//
// Source: BIG-IP TMOS Routing Administration, Packet Filters,
// https://techdocs.f5.com/en-us/bigip-14-1-0/big-ip-tmos-routing-administration-14-1-0/packet-filters.html
// and pcap-filter(7) for the expression syntax.
package pktfilter

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// IP protocol numbers the expressions name.
const (
	ProtoICMP   = 1
	ProtoTCP    = 6
	ProtoUDP    = 17
	ProtoICMPv6 = 58
)

// Packet is what a filter sees of a new connection or flow: its protocol
// and the client's and virtual's addresses and ports, as the first packet
// carries them. Addresses are unmapped (an IPv4 client is IPv4).
type Packet struct {
	Proto    uint8
	Src, Dst netip.AddrPort
	// If is the index of the interface it arrived on, the VLAN a
	// filter's vlan and the trusted vlans name; 0 when not known (read
	// only while a filter in force needs it: Holder.Arrival).
	If int
}

// Error is a rule expression BIG-IP would refuse: where (Line, Col inside
// the rule string, from 1) and what would be valid, so that a create or
// load points at the offending word.
type Error struct {
	Line, Col int
	Msg       string
}

func (e *Error) Error() string { return fmt.Sprintf("%d:%d: %s", e.Line, e.Col, e.Msg) }

// Unsupported is a valid pcap expression this package does not act on
// (byte offsets, link-layer qualifiers): the filter is kept, not used.
type Unsupported struct {
	Line, Col int
	What      string
}

func (e *Unsupported) Error() string {
	return fmt.Sprintf("%d:%d: %s is outside the expressions openltm acts on (host, net, port, portrange, tcp, udp, icmp, ip, ip6, proto, and, or, not)", e.Line, e.Col, e.What)
}

// Expr is a compiled rule expression; Match is safe for concurrent use.
type Expr struct {
	src   string
	nodes []node
	root  int32
}

// String is the expression as written.
func (e *Expr) String() string { return e.src }

type opKind uint8

const (
	opTrue opKind = iota
	opAnd
	opOr
	opNot
	opProto // a = protocol number
	opIP4
	opIP6
	opHost  // addr
	opNet   // pfx
	opPort  // a..b, b2 = protocol restriction (0: tcp or udp)
	opFalse // never (link-layer primitives openltm does not see never reach here)
)

type dir uint8

const (
	dirEither dir = iota // src or dst
	dirSrc
	dirDst
	dirBoth // src and dst
)

type node struct {
	op    opKind
	dir   dir
	proto uint8
	l, r  int32
	lo    uint16
	hi    uint16
	addr  netip.Addr
	pfx   netip.Prefix
}

// Match reports whether p matches the expression. It allocates nothing.
func (e *Expr) Match(p *Packet) bool {
	if e == nil {
		return false
	}
	return e.eval(e.root, p)
}

func (e *Expr) eval(i int32, p *Packet) bool {
	n := &e.nodes[i]
	switch n.op {
	case opTrue:
		return true
	case opFalse:
		return false
	case opAnd:
		return e.eval(n.l, p) && e.eval(n.r, p)
	case opOr:
		return e.eval(n.l, p) || e.eval(n.r, p)
	case opNot:
		return !e.eval(n.l, p)
	case opProto:
		if n.proto == ProtoICMP && p.Src.Addr().Is6() {
			return false
		}
		return p.Proto == n.proto
	case opIP4:
		return p.Src.Addr().Is4()
	case opIP6:
		return p.Src.Addr().Is6()
	case opHost:
		return sides(n.dir, p.Src.Addr() == n.addr, p.Dst.Addr() == n.addr)
	case opNet:
		return sides(n.dir, n.pfx.Contains(p.Src.Addr()), n.pfx.Contains(p.Dst.Addr()))
	case opPort:
		if n.proto != 0 && p.Proto != n.proto {
			return false
		}
		if p.Proto != ProtoTCP && p.Proto != ProtoUDP {
			return false
		}
		s, d := p.Src.Port(), p.Dst.Port()
		return sides(n.dir, s >= n.lo && s <= n.hi, d >= n.lo && d <= n.hi)
	}
	return false
}

func sides(d dir, src, dst bool) bool {
	switch d {
	case dirSrc:
		return src
	case dirDst:
		return dst
	case dirBoth:
		return src && dst
	}
	return src || dst
}

// token is one word or operator of an expression, with its byte offset.
type token struct {
	s   string
	off int
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == ':' || c == '/' || c == '-' || c == '_'
}

// lex splits src into words and the operators ( ) ! && ||; any other
// character is returned as a one-character token, for the parser to
// judge (pcap's arithmetic, [ ] & | < > =, is outside the subset).
func lex(src string) []token {
	var out []token
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case isWordByte(c):
			j := i
			for j < len(src) && isWordByte(src[j]) {
				j++
			}
			out = append(out, token{src[i:j], i})
			i = j
		case (c == '&' || c == '|') && i+1 < len(src) && src[i+1] == c:
			out = append(out, token{src[i : i+2], i})
			i += 2
		case c == '!' && i+1 < len(src) && src[i+1] == '=':
			out = append(out, token{"!=", i})
			i += 2
		default:
			out = append(out, token{src[i : i+1], i})
			i++
		}
	}
	return out
}

// pcap's words this package does not act on: valid on BIG-IP, kept with
// a warning.
var unsupportedWords = map[string]bool{
	"ether": true, "vlan": true, "mpls": true, "arp": true, "rarp": true, "fddi": true, "tr": true, "wlan": true,
	"link": true, "ppp": true, "slip": true, "decnet": true, "atalk": true, "aarp": true, "iso": true, "stp": true,
	"ipx": true, "netbeui": true, "sctp": true, "gateway": true, "broadcast": true, "multicast": true,
	"less": true, "greater": true, "len": true, "inbound": true, "outbound": true, "ifname": true, "on": true,
	"rnr": true, "rulenum": true, "reason": true, "rset": true, "ruleset": true, "srnr": true, "subrulenum": true,
	"action": true, "type": true, "subtype": true, "dir": true, "protochain": true, "pppoed": true, "pppoes": true,
	"geneve": true, "icmp6": true, "igmp": true, "igrp": true, "pim": true, "ah": true, "esp": true, "vrrp": true,
	"carp": true, "ra": true, "ta": true, "addr1": true, "addr2": true, "addr3": true, "addr4": true, "llc": true,
	"lat": true, "moprc": true, "mopdl": true, "clnp": true, "esis": true, "isis": true,
}

// service names a port may be written as (pcap reads /etc/services;
// openltm knows these, as they are in every services file) [M].
var services = map[string]uint16{
	"ftp-data": 20, "ftp": 21, "ssh": 22, "telnet": 23, "smtp": 25, "domain": 53, "bootps": 67, "bootpc": 68,
	"tftp": 69, "http": 80, "www": 80, "pop3": 110, "ntp": 123, "imap": 143, "snmp": 161, "snmptrap": 162,
	"ldap": 389, "https": 443, "syslog": 514, "ldaps": 636, "imaps": 993, "pop3s": 995, "radius": 1812,
	"radius-acct": 1813, "mysql": 3306, "sip": 5060, "cslistener": 9000,
}

// what the parser accepts where a primitive may start.
const validPrimitive = "host ADDR, net ADDR/LEN, net ADDR mask MASK, port N, portrange N-M (each after src, dst, src or dst, src and dst), tcp, udp, icmp, ip, ip6, proto N, not, or ("

type parser struct {
	src   string
	toks  []token
	pos   int
	nodes []node
	// last is the previous primitive, for pcap's abbreviation: in
	// `port 80 or 443` the bare 443 is another `port`.
	last    *node
	lastSet bool
}

// Compile reads a rule expression. The empty expression matches every
// packet, as BIG-IP's does.
func Compile(src string) (*Expr, error) {
	p := &parser{src: src, toks: lex(src)}
	if len(p.toks) == 0 {
		return &Expr{src: src, nodes: []node{{op: opTrue}}}, nil
	}
	root, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.pos < len(p.toks) {
		t := p.toks[p.pos]
		if t.s == ")" {
			return nil, p.errAt(t.off, "unbalanced ): no ( opens it")
		}
		if err := p.unsupportedTok(t); err != nil {
			return nil, err
		}
		return nil, p.errAt(t.off, fmt.Sprintf("unexpected %q: expected and, or, or the end of the rule", t.s))
	}
	return &Expr{src: src, nodes: p.nodes, root: root}, nil
}

func (p *parser) pos2lc(off int) (int, int) {
	line, col := 1, 1
	for i := 0; i < off && i < len(p.src); i++ {
		if p.src[i] == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}

func (p *parser) errAt(off int, msg string) error {
	l, c := p.pos2lc(off)
	return &Error{Line: l, Col: c, Msg: msg}
}

func (p *parser) unsupportedAt(off int, what string) error {
	l, c := p.pos2lc(off)
	return &Unsupported{Line: l, Col: c, What: what}
}

// unsupportedTok returns an *Unsupported for pcap's operators and words
// outside the subset, nil for anything else.
func (p *parser) unsupportedTok(t token) error {
	switch t.s {
	case "[", "]", "&", "|", "<", ">", "=", "!=", "+", "*", "%", "^":
		return p.unsupportedAt(t.off, fmt.Sprintf("the operator %q (pcap's byte offsets and arithmetic)", t.s))
	}
	if unsupportedWords[strings.ToLower(t.s)] {
		return p.unsupportedAt(t.off, fmt.Sprintf("%q", t.s))
	}
	return nil
}

func (p *parser) peek() (token, bool) {
	if p.pos < len(p.toks) {
		return p.toks[p.pos], true
	}
	return token{off: len(p.src)}, false
}

func (p *parser) add(n node) int32 {
	p.nodes = append(p.nodes, n)
	return int32(len(p.nodes) - 1)
}

// or reads a chain of primitives joined by and and or, which pcap gives
// the same precedence, left to right: `a or b and c` is `(a or b) and c`
// (pcap-filter(7)), so a rule means here what it means on BIG-IP.
func (p *parser) or() (int32, error) {
	l, err := p.not()
	if err != nil {
		return 0, err
	}
	for {
		t, ok := p.peek()
		if !ok {
			return l, nil
		}
		op := opAnd
		switch t.s {
		case "and", "&&":
		case "or", "||":
			op = opOr
		default:
			return l, nil
		}
		p.pos++
		r, err := p.not()
		if err != nil {
			return 0, err
		}
		l = p.add(node{op: op, l: l, r: r})
	}
}

func (p *parser) not() (int32, error) {
	t, ok := p.peek()
	if ok && (t.s == "not" || t.s == "!") {
		p.pos++
		x, err := p.not()
		if err != nil {
			return 0, err
		}
		return p.add(node{op: opNot, l: x}), nil
	}
	return p.primary()
}

func (p *parser) primary() (int32, error) {
	t, ok := p.peek()
	if !ok {
		return 0, p.errAt(t.off, "the rule ends where a primitive is expected: "+validPrimitive)
	}
	if t.s == "(" {
		p.pos++
		x, err := p.or()
		if err != nil {
			return 0, err
		}
		c, ok := p.peek()
		if !ok || c.s != ")" {
			if ok {
				if err := p.unsupportedTok(c); err != nil {
					return 0, err
				}
			}
			return 0, p.errAt(c.off, fmt.Sprintf("unbalanced (: the one at column %d is not closed", t.off+1))
		}
		p.pos++
		return x, nil
	}
	return p.primitive()
}

// primitive reads [proto] [dir] [type] ID, or a protocol alone.
func (p *parser) primitive() (int32, error) {
	t, _ := p.peek()
	if err := p.unsupportedTok(t); err != nil {
		return 0, err
	}
	w := strings.ToLower(t.s)
	var n node
	n.dir = dirEither
	switch w {
	case "tcp", "udp", "icmp", "ip", "ip6":
		p.pos++
		nt, ok := p.peek()
		nw := strings.ToLower(nt.s)
		if ok && (w == "tcp" || w == "udp") && isDirOrPort(nw) {
			n.proto = protoNum(w)
			break
		}
		if ok && (w == "ip" || w == "ip6") && (isDir(nw) || nw == "host" || nw == "net") {
			q := node{op: opIP4}
			if w == "ip6" {
				q.op = opIP6
			}
			x, err := p.afterQualifier(n)
			if err != nil {
				return 0, err
			}
			return p.add(node{op: opAnd, l: p.add(q), r: x}), nil
		}
		if ok && (w == "ip" || w == "ip6") && nw == "proto" {
			// `ip proto N`: the protocol, over IPv4 (or IPv6)
			q := node{op: opIP4}
			if w == "ip6" {
				q.op = opIP6
			}
			x, err := p.primitive()
			if err != nil {
				return 0, err
			}
			return p.add(node{op: opAnd, l: p.add(q), r: x}), nil
		}
		if ok && nt.s == "[" {
			return 0, p.unsupportedAt(nt.off, fmt.Sprintf("%s[...] (pcap's byte offsets)", w))
		}
		p.lastSet = false
		switch w {
		case "ip":
			return p.add(node{op: opIP4}), nil
		case "ip6":
			return p.add(node{op: opIP6}), nil
		}
		return p.add(node{op: opProto, proto: protoNum(w)}), nil
	case "proto":
		p.pos++
		v, ok := p.peek()
		if !ok {
			return 0, p.errAt(v.off, "proto needs a protocol: a number from 0 to 255, tcp, udp or icmp")
		}
		p.pos++
		var num int
		switch strings.ToLower(v.s) {
		case "tcp", "udp", "icmp":
			num = int(protoNum(strings.ToLower(v.s)))
		default:
			x, err := strconv.ParseUint(v.s, 0, 8)
			if err != nil {
				return 0, p.errAt(v.off, fmt.Sprintf("proto %q: expected a number from 0 to 255, tcp, udp or icmp", v.s))
			}
			num = int(x)
		}
		p.lastSet = false
		return p.add(node{op: opProto, proto: uint8(num)}), nil
	}
	return p.afterQualifier(n)
}

func isDir(w string) bool { return w == "src" || w == "dst" }

func isDirOrPort(w string) bool { return isDir(w) || w == "port" || w == "portrange" }

func protoNum(w string) uint8 {
	switch w {
	case "tcp":
		return ProtoTCP
	case "udp":
		return ProtoUDP
	}
	return ProtoICMP
}

// afterQualifier reads [dir] [host|net|port|portrange] ID, n holding the
// protocol qualifier read so far.
func (p *parser) afterQualifier(n node) (int32, error) {
	t, _ := p.peek()
	w := strings.ToLower(t.s)
	if isDir(w) {
		p.pos++
		n.dir = dirSrc
		if w == "dst" {
			n.dir = dirDst
		}
		// `src or dst host X`, `src and dst port N`
		if c, ok := p.peek(); ok && (c.s == "or" || c.s == "and") && p.pos+1 < len(p.toks) && isDir(strings.ToLower(p.toks[p.pos+1].s)) && strings.ToLower(p.toks[p.pos+1].s) != w {
			if c.s == "or" {
				n.dir = dirEither
			} else {
				n.dir = dirBoth
			}
			p.pos += 2
		}
		t, _ = p.peek()
		w = strings.ToLower(t.s)
	}
	if err := p.unsupportedTok(t); err != nil {
		return 0, err
	}
	switch w {
	case "host", "net", "port", "portrange":
		p.pos++
		return p.id(n, w)
	}
	if t.s == "" {
		return 0, p.errAt(t.off, "the rule ends where a primitive is expected: "+validPrimitive)
	}
	// An ID with no type: pcap's abbreviation repeats the last primitive's
	// qualifiers (`port 80 or 443`); otherwise an address is a host and a
	// prefix a net.
	_, addrErr := netip.ParseAddr(t.s)
	_, isPort := port(t.s)
	if addrErr != nil && !isPort && !strings.Contains(t.s, "/") {
		// not a value of any implied type: a misspelt keyword
		return 0, p.errAt(t.off, fmt.Sprintf("unknown word %q: expected %s", t.s, validPrimitive))
	}
	if p.lastSet && n.dir == dirEither && n.proto == 0 {
		l := *p.last
		k := kindWord(l)
		if k == "host" || k == "net" {
			k = "host"
			if strings.Contains(t.s, "/") {
				k = "net"
			}
		}
		return p.id(l, k)
	}
	if strings.Contains(t.s, "/") {
		return p.id(n, "net")
	}
	if addrErr == nil || n.proto == 0 && n.dir != dirEither {
		return p.id(n, "host")
	}
	if n.proto != 0 {
		return p.id(n, "port") // tcp 80 [M]
	}
	return 0, p.errAt(t.off, fmt.Sprintf("unknown word %q: expected %s", t.s, validPrimitive))
}

func kindWord(n node) string {
	switch n.op {
	case opNet:
		return "net"
	case opPort:
		if n.lo != n.hi {
			return "portrange"
		}
		return "port"
	}
	return "host"
}

// id reads the value of a host, net, port or portrange primitive.
func (p *parser) id(n node, kind string) (int32, error) {
	v, ok := p.peek()
	if !ok || v.s == "(" || v.s == ")" || v.s == "and" || v.s == "or" || v.s == "not" {
		return 0, p.errAt(v.off, fmt.Sprintf("%s needs a value: %s", kind, kindValid(kind)))
	}
	p.pos++
	switch kind {
	case "host":
		if n.proto != 0 {
			return 0, p.errAt(v.off, "tcp and udp qualify port and portrange, not host: write tcp and host ADDR")
		}
		a, err := netip.ParseAddr(v.s)
		if err != nil || a.Zone() != "" {
			return 0, p.errAt(v.off, fmt.Sprintf("host %q: expected an IPv4 or IPv6 address (openltm does not resolve names in a rule)", v.s))
		}
		n.op, n.addr = opHost, a.Unmap()
	case "net":
		if n.proto != 0 {
			return 0, p.errAt(v.off, "tcp and udp qualify port and portrange, not net: write tcp and net A/LEN")
		}
		pfx, err := p.net(v)
		if err != nil {
			return 0, err
		}
		n.op, n.pfx = opNet, pfx
	case "port":
		x, ok := port(v.s)
		if !ok {
			return 0, p.errAt(v.off, fmt.Sprintf("port %q: expected a number from 0 to 65535 or a service name (http, https, domain, ...)", v.s))
		}
		n.op, n.lo, n.hi = opPort, x, x
	case "portrange":
		a, b, found := strings.Cut(v.s, "-")
		lo, ok1 := port(a)
		hi, ok2 := port(b)
		if !found || !ok1 || !ok2 || lo > hi {
			return 0, p.errAt(v.off, fmt.Sprintf("portrange %q: expected LOW-HIGH, two ports from 0 to 65535, the low one first", v.s))
		}
		n.op, n.lo, n.hi = opPort, lo, hi
	}
	p.last, p.lastSet = &n, true
	return p.add(n), nil
}

func kindValid(kind string) string {
	switch kind {
	case "host":
		return "an IPv4 or IPv6 address"
	case "net":
		return "ADDR/LEN, ADDR mask MASK, or a dotted prefix (10.1)"
	case "port":
		return "a number from 0 to 65535 or a service name"
	}
	return "LOW-HIGH"
}

func port(s string) (uint16, bool) {
	if x, err := strconv.ParseUint(s, 10, 16); err == nil {
		return uint16(x), true
	}
	x, ok := services[strings.ToLower(s)]
	return x, ok
}

// net reads a net's value: A/LEN, A mask M, or pcap's abbreviated dotted
// prefix (10.1 is 10.1.0.0/16). Host bits set are refused, as pcap
// refuses them.
func (p *parser) net(v token) (netip.Prefix, error) {
	s := v.s
	if a, l, ok := strings.Cut(s, "/"); ok {
		addr, err := netip.ParseAddr(a)
		bits, err2 := strconv.Atoi(l)
		if err != nil || err2 != nil || bits < 0 || bits > addr.BitLen() {
			return netip.Prefix{}, p.errAt(v.off, fmt.Sprintf("net %q: expected ADDR/LEN, LEN from 0 to 32 (128 for IPv6)", s))
		}
		return p.masked(v, netip.PrefixFrom(addr.Unmap(), bits))
	}
	if m, ok := p.peek(); ok && strings.ToLower(m.s) == "mask" {
		p.pos++
		mv, ok := p.peek()
		addr, err := netip.ParseAddr(s)
		if !ok || err != nil || !addr.Is4() {
			return netip.Prefix{}, p.errAt(v.off, fmt.Sprintf("net %q mask: expected an IPv4 address before mask", s))
		}
		p.pos++
		mask, err := netip.ParseAddr(mv.s)
		if err != nil || !mask.Is4() {
			return netip.Prefix{}, p.errAt(mv.off, fmt.Sprintf("mask %q: expected an IPv4 mask such as 255.255.255.0", mv.s))
		}
		bits, ok := maskBits(mask.As4())
		if !ok {
			return netip.Prefix{}, p.errAt(mv.off, fmt.Sprintf("mask %q: expected contiguous ones (255.255.255.0, not 255.0.255.0)", mv.s))
		}
		return p.masked(v, netip.PrefixFrom(addr, bits))
	}
	if addr, err := netip.ParseAddr(s); err == nil {
		return netip.PrefixFrom(addr.Unmap(), addr.Unmap().BitLen()), nil
	}
	// 10, 10.1, 10.1.2: pcap's dotted prefixes of 8, 16 or 24 bits.
	parts := strings.Split(s, ".")
	if len(parts) >= 1 && len(parts) <= 3 {
		var b [4]byte
		ok := true
		for i, q := range parts {
			x, err := strconv.ParseUint(q, 10, 8)
			if err != nil {
				ok = false
				break
			}
			b[i] = byte(x)
		}
		if ok {
			return netip.PrefixFrom(netip.AddrFrom4(b), 8*len(parts)), nil
		}
	}
	return netip.Prefix{}, p.errAt(v.off, fmt.Sprintf("net %q: expected %s", s, kindValid("net")))
}

func (p *parser) masked(v token, pfx netip.Prefix) (netip.Prefix, error) {
	if pfx.Masked() != pfx {
		return netip.Prefix{}, p.errAt(v.off, fmt.Sprintf("net %q has host bits set: the network is %s", v.s, pfx.Masked()))
	}
	return pfx, nil
}

func maskBits(m [4]byte) (int, bool) {
	v := uint32(m[0])<<24 | uint32(m[1])<<16 | uint32(m[2])<<8 | uint32(m[3])
	n := 0
	for n < 32 && v&(1<<(31-n)) != 0 {
		n++
	}
	if n < 32 && v<<n != 0 {
		return 0, false
	}
	return n, true
}
