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
