package daemon

import (
	"fmt"
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/fwdproxy"
	"github.com/openltm/openltm/objects"
)

func TestParseExplicitProxy(t *testing.T) {
	for _, tc := range []struct {
		raw, want string
	}{
		{raw: "", want: "resolver= allow=false ipv6=false"},
		{raw: "{ dns-resolver r1 default-connect-handling allow ipv6 yes }", want: "resolver=/Common/r1 allow=true ipv6=true"},
		{raw: "{ dns-resolver none default-connect-handling deny }", want: "resolver= allow=false ipv6=false"},
		{raw: `{ dns-resolver /Common/r1 connect-error-message "no tunnels" dns-error-message none host-names { a.example b.example } route-domain 0 tunnel-name http-tunnel }`,
			want: "resolver=/Common/r1 allow=false ipv6=false connect=no tunnels hosts=[a.example b.example]"},
		{raw: `{ dns-resolver r1 host-names { Proxy.Example. } gateway-error-message "too slow" service-unavailable-message "no pool" }`,
			want: "resolver=/Common/r1 allow=false ipv6=false hosts=[proxy.example] gateway=too slow unavailable=no pool"},
		{raw: "{ bad-request-message none bad-response-message none connect-error-message none default-connect-handling deny dns-error-message none dns-resolver none gateway-error-message none host-names none ipv6 no route-domain none service-unavailable-message none tunnel-name none tunnel-on-any-request no }",
			want: "resolver= allow=false ipv6=false"}, // BIG-IP's all-properties listing
	} {
		c, resolver := parseExplicitProxy(blockValue(t, "ltm profile http", "explicit-proxy", tc.raw))
		got := fmt.Sprintf("resolver=%s allow=%v ipv6=%v", resolver, c.ConnectAllow, c.IPv6)
		if c.ConnectError != "" {
			got += " connect=" + c.ConnectError
		}
		if c.HostNames != nil {
			got += fmt.Sprintf(" hosts=%v", c.HostNames)
		}
		if c.GatewayError != "" {
			got += " gateway=" + c.GatewayError
		}
		if c.ServiceUnavailable != "" {
			got += " unavailable=" + c.ServiceUnavailable
		}
		if got != tc.want {
			t.Errorf("%s: %s, want %s", tc.raw, got, tc.want)
		}
	}
}

// TestForwardZones: a net dns-resolver's forward-zones, as tmsh and
// bigip.conf write them, give the resolver its zones; a zone without
// nameservers or with an address that is no ADDR:PORT is refused, and a
// block of another shape does not load.
func TestForwardZones(t *testing.T) {
	for _, tc := range []struct {
		raw, want, err string
	}{
		{raw: "", want: ""},
		{raw: "{ . { nameservers { 127.22.0.53:53 { } } } }", want: ".=127.22.0.53:53"},
		{raw: "{ . { nameservers { 127.22.0.53:5353 { } 127.22.0.54:domain { } } } }", want: ".=127.22.0.53:5353,127.22.0.54:53"},
		{raw: "{ Corp.Example { nameservers { 127.22.0.55 } } . { nameservers { 2001:db8::1.53 { } } } }", want: "corp.example.=127.22.0.55:53 .=[2001:db8::1]:53"},
		{raw: "{ . { nameservers { [::1]:5353 } } }", want: ".=[::1]:5353"},
		{raw: "{ . { nameservers { } } }", err: "forward-zones .: no nameservers"},
		{raw: "{ . }", err: "forward-zones .: no nameservers"},
		{raw: "{ . { servers { 127.0.0.1 } } }", err: "servers"},
		{raw: "{ . { nameservers { 127.22.0.53:99999 } } }", err: `nameserver "127.22.0.53:99999"`},
		{raw: "{ . { nameservers { dns.example:53 } } }", err: `nameserver "dns.example:53"`},
	} {
		text := "net dns-resolver x { }"
		if tc.raw != "" {
			text = "net dns-resolver x { forward-zones " + tc.raw + " }"
		}
		objs, err := objects.Default.ReadConfig("t.conf", []byte(text), nil)
		var zs []fwdproxy.Zone
		if err == nil {
			zs, err = forwardZones(dnsResolverZones.Get(objs[0]))
		}
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.raw, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.raw, err)
			continue
		}
		var parts []string
		for _, z := range zs {
			var ns []string
			for _, a := range z.Nameservers {
				ns = append(ns, a.String())
			}
			parts = append(parts, z.Name+"="+strings.Join(ns, ","))
		}
		if got := strings.Join(parts, " "); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.raw, got, tc.want)
		}
	}
}
