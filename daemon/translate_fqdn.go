package daemon

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/fqdn"
	"github.com/openltm/openltm/objects"
)

var (
	sysDNS            = schema.MustKind("sys dns")
	sysDNSNameServers = sysDNS.MustProp("name-servers")
	sysDNSSearch      = sysDNS.MustProp("search")
	sysDNSNDots       = sysDNS.MustProp("number-of-dots")
)

// maxNDots is the largest number-of-dots (resolv.conf caps ndots at 15).
const maxNDots = 15

// fqdnNode translates a node written with an fqdn block: the dataplane
// follows its name and runs its addresses as ephemeral nodes and members.
func (t *translator) fqdnNode(o *objects.Object, v *objects.Value) {
	f, err := parseFQDN(v)
	if err != nil {
		t.skip(o, "%v", err)
		return
	}
	if t.fqdn == nil {
		t.fqdn = map[string]bool{}
	}
	t.fqdn[o.Name] = true
	n := t.nodeSettings(o)
	n.FQDN = f
	t.dc.Nodes[o.Name] = n
}

// parseFQDN reads a node's fqdn block with BIG-IP's defaults (ipv4,
// disabled, 3600, 5); the enums were checked as typed, the name and the
// intervals are checked here.
func parseFQDN(v *objects.Value) (*dataplane.FQDN, error) {
	f := &dataplane.FQDN{Interval: time.Hour, DownInterval: fqdn.DefaultDownInterval}
	var err error
	for k, w := range subSettings(v) {
		switch k {
		case "name":
			f.Name = strings.TrimSuffix(w, ".")
		case "address-family":
			if _, err := fqdn.ParseFamily(w); err != nil {
				return nil, fmt.Errorf("fqdn: %v", err)
			}
			f.Family = w
		case "autopopulate":
			f.Autopopulate = w == "enabled"
		case "interval":
			if f.Interval, err = fqdn.ParseInterval(w); err != nil {
				return nil, fmt.Errorf("fqdn: %v", err)
			}
		case "down-interval":
			d, err := fqdn.ParseInterval(w)
			if err != nil || d == 0 {
				return nil, fmt.Errorf("fqdn: down-interval %q is not valid (seconds from 1)", w)
			}
			f.DownInterval = d
		}
	}
	if f.Name == "" {
		return nil, fmt.Errorf("fqdn: the block needs a name")
	}
	return f, nil
}

// fqdnMember is a pool member on an FQDN node: a template the dataplane
// turns into one ephemeral member per address.
func fqdnMember(node string, port int) dataplane.Member {
	return dataplane.Member{Node: node, Addr: netip.AddrPortFrom(netip.Addr{}, uint16(port))}
}

// nameServers are `sys dns name-servers`, which resolve FQDN nodes.
func (t *translator) nameServers() []string {
	d := t.cfg.Get(sysDNS, "")
	if d == nil {
		return nil
	}
	if v := sysDNSNameServers.Get(d); v != nil {
		return append([]string(nil), v.List...)
	}
	return nil
}

// dnsSearch reads `sys dns search` and `number-of-dots` into the
// configuration; a domain that is not a domain name, or a count out of
// 0-15, is refused.
func (t *translator) dnsSearch() {
	d := t.cfg.Get(sysDNS, "")
	if d == nil {
		return
	}
	if v := sysDNSSearch.Get(d); v != nil {
		for _, dom := range v.List {
			if _, ok := dns.IsDomainName(dom); !ok || strings.Trim(dom, ".") == "" || strings.ContainsAny(dom, " \t/:@") {
				t.refuse("sys dns: search domain %q is not a domain name", dom)
				return
			}
			t.dc.DNSSearch = append(t.dc.DNSSearch, strings.Trim(dom, "."))
		}
	}
	n, err := strconv.Atoi(sysDNSNDots.Effective(t.cfg, d))
	if err != nil || n < 0 || n > maxNDots {
		t.refuse("sys dns: number-of-dots %q is not valid (0 to %d)", sysDNSNDots.Effective(t.cfg, d), maxNDots)
		return
	}
	t.dc.DNSNDots = n
}
