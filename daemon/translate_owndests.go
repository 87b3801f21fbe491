package daemon

import (
	"cmp"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/authn"
)

// ownDests gives the plane the destinations this process connects to
// that its configuration does not name otherwise (dataplane
// Config.OwnDests), so that a virtual on every port or a network virtual
// (a wildcard above all, which takes every address of the namespace)
// passes them over where they are addresses of the namespace: sys
// syslog's remote servers, every net dns-resolver's forward-zones
// nameservers (rules, OCSP validators and proxies ask them), and the
// servers of the auth profiles the virtuals use (ldap, radius, tacacs,
// ssl-cc-ldap, ssl-crldp's crldp servers, ssl-ocsp's responders whose
// url names an address), and the destinations an ltm rule names as
// literals (ruleLiteralDests). An auth server named by a host name goes
// to Config.OwnDestNames: the plane resolves it, at the commit and
// again as its answer changes, and passes its addresses over
// (dataplane/fqdnowndests.go). Log destinations through
// remote-high-speed-log (and the syslog, splunk and other formats over
// them) are pool members, which the plane passes over already. Called
// once the virtuals are translated (their auth profiles read).
func (t *translator) ownDests() {
	seen := map[netip.AddrPort]bool{}
	add := func(d netip.AddrPort) {
		if d.Addr().IsValid() && !seen[d] {
			seen[d] = true
			t.dc.OwnDests = append(t.dc.OwnDests, d)
		}
	}
	if rs, _, err := remoteServers(t.cfg, func(string, string) bool { return true }); err == nil { // translate_syslog.go
		for _, r := range rs {
			add(r.Addr)
		}
	}
	for _, o := range t.cfg.Of(dnsResolver) {
		zones, err := forwardZones(dnsResolverZones.Get(o)) // translate_fwdproxy.go
		if err != nil {
			continue // refused where the resolver is used
		}
		for _, z := range zones {
			for _, d := range z.Nameservers {
				add(d)
			}
		}
	}
	for _, o := range t.cfg.Of(ltmRule) {
		for _, d := range ruleLiteralDests(ruleDefinition.Str(o)) {
			add(d)
		}
	}
	if t.rules != nil {
		named := map[dataplane.NamedDest]bool{}
		for _, spec := range t.rules.auth.byName {
			dests, names := authDests(spec.backend)
			for _, d := range dests {
				add(d)
			}
			for _, n := range names {
				if !named[n] {
					named[n] = true
					t.dc.OwnDestNames = append(t.dc.OwnDestNames, n)
				}
			}
		}
		slices.SortFunc(t.dc.OwnDestNames, func(a, b dataplane.NamedDest) int {
			return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Port, b.Port))
		})
	}
}

// authDests are the destinations an auth back end connects to: those
// written as addresses, and those written as host names (names), each
// at its port.
func authDests(b authn.Backend) (out []netip.AddrPort, names []dataplane.NamedDest) {
	hostPort := func(s string, port int) {
		if d, err := netip.ParseAddrPort(s); err == nil {
			out = append(out, d)
			return
		}
		if a, err := netip.ParseAddr(s); err == nil {
			if port > 0 {
				out = append(out, netip.AddrPortFrom(a, uint16(port)))
			}
			return
		}
		host := s
		if h, p, err := net.SplitHostPort(s); err == nil {
			n, err := strconv.ParseUint(p, 10, 16)
			if err != nil {
				return
			}
			host, port = h, int(n)
		}
		if host != "" && port > 0 && port < 65536 {
			names = append(names, dataplane.NamedDest{Name: host, Port: uint16(port)})
		}
	}
	switch b := b.(type) {
	case *authn.LDAP:
		port := b.Port
		if port == 0 {
			port = 389 // as authn.LDAP dials
		}
		for _, s := range b.Servers {
			hostPort(s, port)
		}
	case *authn.RADIUS:
		for _, s := range b.Servers {
			hostPort(s.Addr, 0)
		}
	case *authn.TACACS:
		for _, s := range b.Servers {
			hostPort(s, 49)
		}
	case *authn.SSLCCLDAP:
		for _, s := range b.Servers {
			hostPort(s, 0)
		}
	case *authn.SSLCRLDP:
		for _, s := range b.Servers {
			hostPort(s.Addr, 0)
		}
	case *authn.SSLOCSP:
		for _, r := range b.Responders {
			u, err := url.Parse(r.URL)
			if err != nil || u.Host == "" {
				continue
			}
			port := 80
			if u.Scheme == "https" {
				port = 443
			}
			if p := u.Port(); p != "" {
				port, _ = strconv.Atoi(p)
			}
			hostPort(u.Hostname(), port)
		}
	}
	return out, names
}

// ruleLiteralDests are the destinations a rule's text names as literal
// addresses: `node ADDR PORT`, `node ADDR:PORT`, `node ADDR` (its every
// port: the client's port goes on) and sideband's `connect [-option
// value ...] ADDR:PORT`. A destination a rule computes at run time (a
// variable, a command's result) cannot be known at commit and is not
// passed over [M]. The scan is of words, not of parsed commands: a
// literal that is not such a command's argument (in a string or a
// comment after those words) is passed over too, which costs an entry
// and nothing else.
func ruleLiteralDests(src string) []netip.AddrPort {
	words := strings.FieldsFunc(src, func(r rune) bool {
		switch r {
		case ' ', '\t', '\n', '\r', '{', '}', '[', ']', ';', '"':
			return true
		}
		return false
	})
	addr := func(w string) (netip.Addr, bool) {
		if i := strings.IndexByte(w, '%'); i > 0 { // a route domain
			w = w[:i]
		}
		a, err := netip.ParseAddr(w)
		return a, err == nil
	}
	var out []netip.AddrPort
	for i, w := range words {
		switch w {
		case "node":
			if i+1 >= len(words) {
				continue
			}
			if d, err := netip.ParseAddrPort(words[i+1]); err == nil {
				out = append(out, d)
				continue
			}
			a, ok := addr(words[i+1])
			if !ok {
				continue
			}
			port := uint64(0)
			if i+2 < len(words) {
				if p, err := strconv.ParseUint(words[i+2], 10, 16); err == nil {
					port = p
				}
			}
			out = append(out, netip.AddrPortFrom(a, uint16(port)))
		case "connect":
			for j := i + 1; j < len(words) && j <= i+12; j++ {
				if d, err := netip.ParseAddrPort(words[j]); err == nil {
					out = append(out, d)
					break
				}
				if !strings.HasPrefix(words[j], "-") && (j == i+1 || !strings.HasPrefix(words[j-1], "-")) {
					break // the destination is not a literal
				}
			}
		}
	}
	return out
}
