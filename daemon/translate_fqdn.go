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
	"github.com/openltm/openltm/grammar"
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
func (t *translator) fqdnNode(o *objects.Object, raw string) {
	f, err := parseFQDN(raw)
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

// parseFQDN reads `{ name N address-family ipv4|ipv6 autopopulate
// enabled|disabled interval S|ttl down-interval S }` with BIG-IP's
// defaults (ipv4, disabled, 3600, 5).
func parseFQDN(raw string) (*dataplane.FQDN, error) {
	f := &dataplane.FQDN{Interval: time.Hour, DownInterval: fqdn.DefaultDownInterval}
	file, err := grammar.Parse("fqdn", []byte("x "+raw))
	if err != nil || len(file.Statements) != 1 || len(file.Statements[0].Items) != 2 {
		return nil, fmt.Errorf("fqdn is not a { name NAME ... } block")
	}
	b, ok := file.Statements[0].Items[1].(*grammar.Block)
	if !ok {
		return nil, fmt.Errorf("fqdn is not a { } block")
	}
	ws := grammar.Texts(b.Items)
	for i := 0; i < len(ws); i++ {
		k := ws[i]
		if i+1 >= len(ws) {
			return nil, fmt.Errorf("fqdn: %s needs a value", k)
		}
		v := ws[i+1]
		i++
		switch k {
		case "name", "tm-name":
			f.Name = strings.TrimSuffix(v, ".")
		case "address-family":
			if _, err := fqdn.ParseFamily(v); err != nil {
				return nil, fmt.Errorf("fqdn: %v", err)
			}
			f.Family = v
		case "autopopulate":
			if v != "enabled" && v != "disabled" {
				return nil, fmt.Errorf("fqdn: autopopulate %q is not valid (enabled, disabled)", v)
			}
			f.Autopopulate = v == "enabled"
		case "interval":
			if f.Interval, err = fqdn.ParseInterval(v); err != nil {
				return nil, fmt.Errorf("fqdn: %v", err)
			}
		case "down-interval":
			d, err := fqdn.ParseInterval(v)
			if err != nil || d == 0 {
				return nil, fmt.Errorf("fqdn: down-interval %q is not valid (seconds from 1)", v)
			}
			f.DownInterval = d
		default:
			return nil, fmt.Errorf("fqdn: %q unknown property (name, address-family, autopopulate, interval, down-interval)", k)
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
