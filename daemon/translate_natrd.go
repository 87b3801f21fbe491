package daemon

import (
	"fmt"
	"strings"

	"github.com/openltm/openltm/objects"
)

// Route domains on the NAT and SNAT objects: an address written
// ADDRESS%ID (10.1.1.1%2) as BIG-IP writes one in a route domain other
// than the default. openltm binds in one routing table, so the ID
// takes the address into no table of its own; it does what a virtual
// server's destination %ID does: it names the route domain the object
// is in, and a NAT or SNAT in route domain N translates only the
// clients of the virtual servers whose destination is in route domain
// N (route domain 0 for a destination without one), and a NAT's way in
// is in its route domain's flow-eviction context as such a virtual is.

// splitRD splits ADDRESS%ID into ADDRESS and ID (0 without one); why
// says what is wrong when ID is not a route domain id.
func splitRD(s string) (addr string, rd int, why string) {
	addr, rd, ok := objects.SplitRouteDomain(s)
	if !ok || rd > 65534 {
		return addr, 0, fmt.Sprintf("%s: route domain %q is not a route domain id (0 to 65534, as in 10.1.1.1%%2)", s, s[strings.IndexByte(s, '%')+1:])
	}
	return addr, rd, ""
}

// noRouteDomain says why the route domain id is refused: no net
// route-domain has it [M: BIG-IP refuses an address in a route domain
// that does not exist; the words are ours]. Route domain 0 always
// exists. "" when it exists.
func (t *translator) noRouteDomain(s string, id int) string {
	if id == 0 || t.routeDomainByID(id) != nil { // translate_timerpol.go
		return ""
	}
	return fmt.Sprintf("%s: route domain %d does not exist (create net route-domain NAME { id %d } first)", s, id, id)
}

// addrRD reads ADDRESS[%ID] where ID must name a route domain: the
// address part, its route domain, and why it is refused ("" when not).
func (t *translator) addrRD(s string) (string, int, string) {
	addr, rd, why := splitRD(s)
	if why == "" {
		why = t.noRouteDomain(s, rd)
	}
	return addr, rd, why
}

// snatPoolRouteDomains refuses a snatpool member written ADDRESS%ID
// whose route domain does not exist. The member's address is given
// out as written without the ID: the route domain a server connection
// leaves in is its virtual's (openltm has one routing table) [M].
func (t *translator) snatPoolRouteDomains(o *objects.Object) {
	v := snatPoolMembers.Get(o)
	if v == nil {
		return
	}
	for _, m := range v.List {
		if !strings.Contains(m, "%") {
			continue
		}
		if _, _, why := t.addrRD(m[strings.LastIndexByte(m, '/')+1:]); why != "" {
			t.refuse("%s", about(o, "member %s", why))
			return
		}
	}
}

// originRD reads one ltm snat origin, ADDRESS[%ID][/LEN] (BIG-IP
// writes the route domain after the address, before the prefix length:
// 10.1.0.0%2/16): the origin without the ID, its route domain, and why
// it is refused when the ID is not a route domain's.
func (t *translator) originRD(w string) (string, int, string) {
	i := strings.IndexByte(w, '%')
	if i < 0 {
		return w, 0, ""
	}
	id, plen := w[i+1:], ""
	if j := strings.IndexByte(id, '/'); j >= 0 {
		id, plen = id[:j], id[j:]
	}
	_, rd, why := t.addrRD(w[:i] + "%" + id)
	if why != "" {
		return w, 0, why
	}
	return w[:i] + plen, rd, ""
}

// xlatRouteDomain says why an ltm snat-translation written in a route
// domain (address ADDRESS%ID, or named so without an address) is
// refused: its route domain does not exist. "" when it is not.
func (t *translator) xlatRouteDomain(o *objects.Object) string {
	a := xlatAddress.Str(o)
	if a == "" {
		a = o.Name[strings.LastIndexByte(o.Name, '/')+1:]
	}
	if !strings.Contains(a, "%") {
		return ""
	}
	if _, _, why := t.addrRD(a); why != "" {
		return "address " + why
	}
	return ""
}

// destRouteDomain says why a virtual server's destination in route
// domain id is refused: id is past 65534 or no net route-domain has it,
// as for a NAT's or SNAT's address (noRouteDomain) [M: BIG-IP refuses a
// virtual in a route domain that does not exist; the words are ours].
// "" when it is not. The whole configuration is translated at once, so
// a loaded file may define the route domain before or after the
// virtual, and deleting a route domain a virtual is in is refused.
func (t *translator) destRouteDomain(dest string, id int) string {
	if id > 65534 {
		return fmt.Sprintf("%s: route domain %d is not a route domain id (0 to 65534, as in 10.1.1.1%%2:80)", dest, id)
	}
	return t.noRouteDomain(dest, id)
}

// virtualSourceRD reads a virtual server's source, ADDRESS[%ID]/LEN as
// BIG-IP writes one in a route domain (10.0.0.0%2/8): the source
// without the ID, and false (refused) when the ID is not a route
// domain's or is another than the destination's, rd [M: openltm's
// rule: a virtual's clients are in its destination's route domain].
func (t *translator) virtualSourceRD(o *objects.Object, src string, rd int) (string, bool) {
	if !strings.Contains(src, "%") {
		return src, true
	}
	w, srd, why := t.originRD(src)
	if why == "" && srd != rd {
		why = fmt.Sprintf("%s is in route domain %d, the destination in route domain %d; write both with the same %%ID", src, srd, rd)
	}
	if why != "" {
		t.refuse("%s", about(o, "source %s", why))
		return "", false
	}
	return w, true
}

// nodeRouteDomain says why a node whose address is ADDRESS%ID (as a
// pool member 10.1.1.1%2:80 makes one) is refused: its route domain
// does not exist, as for a NAT's address. "" when it is not.
func (t *translator) nodeRouteDomain(o *objects.Object) string {
	a := nodeAddress.Str(o)
	if !strings.Contains(a, "%") {
		return ""
	}
	_, _, why := t.addrRD(a)
	return why
}

// routeDomainReach is the ids of the route domains beyond route domain
// id whose NATs and SNATs its virtuals' clients may take when none of
// its own holds them (objects.RouteDomainReach: the parents a route
// domain with strict isolation disabled reaches, nearest first); nil
// for a strict route domain, or one that does not exist. Made once per
// commit per route domain: the dataplane does not walk parents per
// connection.
func (t *translator) routeDomainReach(id int) []int {
	if r, ok := t.rdReach[id]; ok {
		return r
	}
	var r []int
	if rd := t.routeDomainByID(id); rd != nil { // translate_timerpol.go
		for _, p := range objects.RouteDomainReach(t.cfg, t.s, rd) {
			r = append(r, atoi(rdID.Effective(t.cfg, p)))
		}
	}
	if t.rdReach == nil {
		t.rdReach = map[int][]int{}
	}
	t.rdReach[id] = r
	return r
}

// prefixWithoutRD is ADDRESS%ID/LEN (a virtual's source in a route
// domain) without its %ID, for the readers that take the prefix alone
// (the virtual itself refuses an ID that is no route domain's,
// virtualSourceRD); s as it is without one.
func prefixWithoutRD(s string) string {
	i := strings.IndexByte(s, '%')
	if i < 0 {
		return s
	}
	if j := strings.IndexByte(s[i:], '/'); j >= 0 {
		return s[:i] + s[i+j:]
	}
	return s[:i]
}
