package rules

import (
	"cmp"
	"net/netip"
	"slices"

	"github.com/openltm/openltm/rules/tcl"
)

// TrafficClass is one `ltm traffic-class` a virtual names in its
// traffic-classes: the connection's addresses (each a prefix; the zero
// prefix is any), ports (0: any) and protocol (0: any) it matches, and
// the classification a match gives (LB::class).
type TrafficClass struct {
	Name           string // the class's full path, for a stable order
	Classification string
	Src, Dst       netip.Prefix
	SrcPort        uint16
	DstPort        uint16
	Proto          int
}

// Matches reports whether a connection from src to dst (the virtual's
// address and port) over proto is in the class.
func (c *TrafficClass) Matches(src, dst netip.AddrPort, proto int) bool {
	return (!c.Src.IsValid() || c.Src.Contains(src.Addr().Unmap())) &&
		(!c.Dst.IsValid() || c.Dst.Contains(dst.Addr().Unmap())) &&
		(c.SrcPort == 0 || c.SrcPort == src.Port()) &&
		(c.DstPort == 0 || c.DstPort == dst.Port()) &&
		(c.Proto == 0 || c.Proto == proto)
}

// specificity ranks classes as BIG-IP picks "the most specific match
// possible" [M: F5 does not publish the order]: the longer destination
// prefix, then source prefix, then a destination port, a source port and
// a protocol given over any.
func (c *TrafficClass) specificity() [5]int {
	b := func(p netip.Prefix) int {
		if !p.IsValid() {
			return -1
		}
		return p.Bits()
	}
	set := func(x int) int {
		if x != 0 {
			return 1
		}
		return 0
	}
	return [5]int{b(c.Dst), b(c.Src), set(int(c.DstPort)), set(int(c.SrcPort)), set(c.Proto)}
}

// Classify lists the classifications of the classes a connection
// matches, the most specific first (ties by class name), each once.
func Classify(classes []TrafficClass, src, dst netip.AddrPort, proto int) []string {
	var hit []*TrafficClass
	for i := range classes {
		if classes[i].Matches(src, dst, proto) {
			hit = append(hit, &classes[i])
		}
	}
	slices.SortFunc(hit, func(a, b *TrafficClass) int {
		sa, sb := a.specificity(), b.specificity()
		for i := range sa {
			if c := cmp.Compare(sb[i], sa[i]); c != 0 {
				return c
			}
		}
		return cmp.Compare(a.Name, b.Name)
	})
	var out []string
	for _, c := range hit {
		if !slices.Contains(out, c.Classification) {
			out = append(out, c.Classification)
		}
	}
	return out
}

// registerLBClass adds LB::class.
func registerLBClass(t *tcl.Commands) {
	t.Register("LB::class", cmdLBClass)
}

// cmdLBClass is LB::class: the classification of the most specific
// traffic class (of the virtual's traffic-classes) the connection
// matches, "" when none does; `LB::class a` lists every matching
// classification, most specific first [M: F5's reference names the
// command without publishing its arguments]. The classes come from
// Env.TrafficClasses by the connection's virtual, so nothing is
// classified on connections whose rules do not ask.
func cmdLBClass(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	all := len(args) == 2 && args[1].String() == "a"
	if len(args) > 2 || (len(args) == 2 && !all) {
		return tcl.Empty, tcl.WrongArgs("LB::class ?a?")
	}
	s, c, err := sess(in, "LB::class")
	if err != nil {
		return tcl.Empty, err
	}
	var classes []TrafficClass
	if li, ok := c.(LBInfo); ok && s.prog.env.TrafficClasses != nil {
		classes = s.prog.env.TrafficClasses(li.VirtualName())
	}
	got := Classify(classes, c.Addr(EndClient), c.Addr(EndVirtual), c.Protocol())
	if all {
		vs := make([]tcl.Value, len(got))
		for i, g := range got {
			vs[i] = tcl.Str(g)
		}
		return tcl.List(vs...), nil
	}
	if len(got) == 0 {
		return tcl.Empty, nil
	}
	return tcl.Str(got[0]), nil
}
