package daemon

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/recursor"
	"github.com/openltm/openltm/grammar"
	"github.com/openltm/openltm/objects"
)

// cacheResolver reads what an ltm dns cache answers itself: the
// local-zones and answer-default-zones of either kind and, for a
// resolver, how it recurses (root-hints, use-*, randomize-query-name-
// case, max-concurrent-udp/tcp, allowed-query-time, nameserver-cache-
// count, rrset-cache-size, rrset-rotate) and, for a validating-resolver,
// how it validates (trust-anchors, ignore-cd, key-cache-size). nil when a transparent cache
// has neither local zones nor default zones.
func cacheResolver(c *objects.Object, ce func(string) string, resolver bool) (*recursor.Config, bool, error) {
	rc := &recursor.Config{DefaultZones: ce("answer-default-zones") == "yes"}
	var err error
	if v := c.Kind.MustProp("local-zones").Get(c); v != nil && v.Str != "" && v.Str != "none" {
		if rc.LocalZones, err = parseLocalZones(v.Str); err != nil {
			return nil, false, err
		}
	}
	if !resolver {
		if !rc.DefaultZones && len(rc.LocalZones) == 0 {
			return nil, false, nil
		}
		return rc, false, nil
	}
	yes := func(p string) bool { return ce(p) != "no" }
	rc.IPv4, rc.IPv6, rc.UDP, rc.TCP = yes("use-ipv4"), yes("use-ipv6"), yes("use-udp"), yes("use-tcp")
	if !rc.UDP && !rc.TCP {
		return nil, false, fmt.Errorf("use-udp and use-tcp are both no: no query could be sent")
	}
	if !rc.IPv4 && !rc.IPv6 {
		return nil, false, fmt.Errorf("use-ipv4 and use-ipv6 are both no: no name server could be asked")
	}
	rc.Randomize = yes("randomize-query-name-case")
	rc.Rotate = ce("rrset-rotate") == "query-id"
	rc.MaxUDP, rc.MaxTCP = atoi(ce("max-concurrent-udp")), atoi(ce("max-concurrent-tcp"))
	rc.NSCount, rc.RRsetBytes = atoi(ce("nameserver-cache-count")), atoi(ce("rrset-cache-size"))
	rc.Wait = time.Duration(atoi(ce("allowed-query-time"))) * time.Millisecond
	if c.Kind == dnsCacheValidating {
		rc.Validate, rc.IgnoreCD, rc.PrefetchKey = true, ce("ignore-cd") == "yes", ce("prefetch-key") != "no"
		rc.KeyCacheBytes = atoi(ce("key-cache-size"))
		if v := c.Kind.MustProp("trust-anchors").Get(c); v != nil {
			if rc.TrustAnchors, err = recursor.ParseAnchors(v.List); err != nil {
				return nil, false, fmt.Errorf("trust-anchors: %v", err)
			}
		}
	}
	hinted := false
	if v := c.Kind.MustProp("root-hints").Get(c); v != nil {
		for _, h := range v.List {
			ap, err := parseNameserver(h) // translate_fwdproxy.go
			if err != nil {
				return nil, false, fmt.Errorf("root-hints: %v", err)
			}
			rc.RootHints = append(rc.RootHints, ap)
		}
		hinted = len(rc.RootHints) > 0
	}
	return rc, hinted, nil
}

// parseLocalZones reads local-zones, as BIG-IP saves it
// `{ { name Z type T records { "RR" ... } } ... }` or keyed by name
// `{ Z { type T records { ... } } }` [M].
func parseLocalZones(raw string) ([]recursor.LocalZone, error) {
	f, err := grammar.Parse("local-zones", []byte("x "+raw))
	if err != nil || len(f.Statements) != 1 || len(f.Statements[0].Items) != 2 {
		return nil, fmt.Errorf("local-zones is not a { { name ZONE type TYPE records { ... } } } block")
	}
	b, ok := f.Statements[0].Items[1].(*grammar.Block)
	if !ok {
		return nil, fmt.Errorf("local-zones is not a { } block")
	}
	var out []recursor.LocalZone
	name := ""
	for _, it := range b.Items {
		if w, ok := it.(*grammar.Word); ok {
			name = w.Text
			continue
		}
		body := it.(*grammar.Block)
		z := recursor.LocalZone{Name: name, Type: "transparent"}
		name = ""
		for i := 0; i+1 < len(body.Items); i += 2 {
			key, _ := body.Items[i].(*grammar.Word)
			if key == nil {
				return nil, fmt.Errorf("local-zones: a setting name must come before its value")
			}
			switch key.Text {
			case "name", "type":
				w, ok := body.Items[i+1].(*grammar.Word)
				if !ok {
					return nil, fmt.Errorf("local-zones: %s takes a word", key.Text)
				}
				if key.Text == "name" {
					z.Name = w.Text
				} else {
					z.Type = w.Text
				}
			case "records":
				rb, ok := body.Items[i+1].(*grammar.Block)
				if !ok {
					return nil, fmt.Errorf("local-zones: records takes a { } list")
				}
				for _, s := range rb.Words() {
					rr, err := dns.NewRR(s)
					if err != nil || rr == nil {
						return nil, fmt.Errorf("local-zones: record %q: %v", s, err)
					}
					z.Records = append(z.Records, rr)
				}
			default:
				return nil, fmt.Errorf("local-zones: unknown setting %q (name, type, records)", key.Text)
			}
		}
		if z.Name == "" {
			return nil, fmt.Errorf("local-zones: a zone needs a name")
		}
		z.Name = strings.ToLower(dns.Fqdn(z.Name))
		if _, ok := dns.IsDomainName(z.Name); !ok {
			return nil, fmt.Errorf("local-zones: %q is not a domain name", z.Name)
		}
		if !slices.Contains(recursor.LocalZoneTypes, z.Type) {
			return nil, fmt.Errorf("local-zones: zone %s: type %q is not one of %s", z.Name, z.Type, strings.Join(recursor.LocalZoneTypes, ", "))
		}
		for _, rr := range z.Records {
			if !dns.IsSubDomain(z.Name, strings.ToLower(rr.Header().Name)) {
				return nil, fmt.Errorf("local-zones: zone %s: record %s is not in the zone", z.Name, strconv.Quote(rr.String()))
			}
		}
		out = append(out, z)
	}
	return out, nil
}
