package daemon

import (
	"fmt"
	"strings"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/recursor"
	"github.com/openltm/openltm/dataplane/rpz"
	"github.com/openltm/openltm/objects"
)

// cacheRPZ reads an ltm dns cache's response-policy-zones: each names an
// ltm dns zone with response-policy yes (the DNS Express zone holding the
// triggers), and action walled-garden names one of the cache's
// local-zones (rc's, nil when it has none) whose apex records answer a
// hit. Refused otherwise, with what is wrong. nil for none.
func cacheRPZ(cfg *objects.Config, s *objects.Schema, c *objects.Object, rc *recursor.Config) ([]rpz.Zone, error) {
	v := c.Kind.MustProp("response-policy-zones").Get(c)
	if v == nil {
		return nil, nil
	}
	var out []rpz.Zone
	for _, it := range v.Items {
		o := cfg.Lookup(s, []string{dnsZone.Key()}, objects.FullPath("/Common", it.Name))
		if o == nil {
			return nil, fmt.Errorf("response-policy-zones %s: ltm dns zone %s does not exist", it.Name, it.Name)
		}
		if dnsZone.MustProp("response-policy").Effective(cfg, o) != "yes" {
			return nil, fmt.Errorf("response-policy-zones %s: ltm dns zone %s is not a response policy zone (response-policy no)", it.Name, it.Name)
		}
		base := o.Name[strings.LastIndexByte(o.Name, '/')+1:]
		z := rpz.Zone{Name: strings.ToLower(dns.Fqdn(base)), Action: rpz.ActionNXDOMAIN}
		if a := it.Props["action"]; a != nil && a.Str != "" {
			z.Action = a.Str
		}
		wg := ""
		if w := it.Props["walled-garden"]; w != nil && w.Str != "none" {
			wg = w.Str
		}
		if z.Action == rpz.ActionWalledGarden {
			if wg == "" {
				return nil, fmt.Errorf("response-policy-zones %s: action walled-garden needs a walled-garden (one of the cache's local-zones)", it.Name)
			}
			name := strings.ToLower(dns.Fqdn(wg))
			found := false
			if rc != nil {
				for _, lz := range rc.LocalZones {
					if lz.Name != name {
						continue
					}
					found = true
					for _, rr := range lz.Records {
						if strings.EqualFold(rr.Header().Name, name) && rr.Header().Rrtype != dns.TypeSOA && rr.Header().Rrtype != dns.TypeNS {
							z.Garden = append(z.Garden, rr)
						}
					}
				}
			}
			if !found {
				return nil, fmt.Errorf("response-policy-zones %s: walled-garden %s is not one of the cache's local-zones", it.Name, wg)
			}
			z.GardenName = name
		}
		out = append(out, z)
	}
	return out, nil
}
