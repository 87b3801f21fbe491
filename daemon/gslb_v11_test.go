package daemon

import (
	"os"
	"path/filepath"
	"testing"
)

// A BIG-IP 11 bigip_gtm.conf loads converted (gtm pool a, gtm wideip a,
// one warning per object) and answers from the converted pool; tmsh
// create without a type is refused, as BIG-IP 12+ refuses it; the LDNS
// and path tables are shown, filtered and deleted.
func TestGTMv11AndLDNSTables(t *testing.T) {
	e, g := openWithGSLB(t)
	s := e.NewSession("admin").(*Session)
	conf := filepath.Join(t.TempDir(), "bigip_gtm.conf")
	v11 := `gtm datacenter /Common/dc1 { }
gtm server /Common/lc1 {
    datacenter /Common/dc1
    addresses { 127.194.20.1 { device-name lc1 } }
    virtual-servers {
        vs1 { destination 127.194.20.11:80 }
        vs2 { destination 127.194.20.12:80 }
    }
}
gtm pool /Common/p1 {
    load-balancing-mode global-availability
    fallback-ipv4 127.194.20.99
    members {
        /Common/lc1:vs1 { order 1 }
        /Common/lc1:vs2 { order 0 }
    }
}
gtm wideip /Common/www.v11.test {
    pools { /Common/p1 { order 0 } }
}
`
	if err := os.WriteFile(conf, []byte(v11), 0o600); err != nil {
		t.Fatal(err)
	}
	steps := []gtmStep{
		{cmd: "load sys config merge file " + conf, out: "gtm pool /Common/p1 is a BIG-IP 11 untyped pool: read as gtm pool a /Common/p1", ldns: "127.194.21.5", answer: "127.194.20.12"},
		{cmd: "list gtm pool a p1", out: "lc1:vs1 {\n            member-order 1"},
		{cmd: "list gtm pool a p1 fallback-ip", out: "fallback-ip 127.194.20.99"},
		{cmd: "list gtm wideip a www.v11.test", out: "gtm wideip a www.v11.test {"},
		{cmd: "create gtm pool p2", err: `"p2" unknown type in "gtm pool"`},
		{cmd: "create gtm wideip w2.v11.test", err: `"w2.v11.test" unknown type in "gtm wideip"`},
		{cmd: "show gtm ldns", out: "127.194.21.0/24"},
		{cmd: "show gtm ldns 127.194.22.1", out: "Total records returned: 0"},
		{cmd: "show gtm ldns 127.194.21.9", out: "Total records returned: 1"},
		{cmd: "show gtm ldns nope", err: `"nope" is not an IP address`},
		{cmd: "show gtm path", out: "Gtm::Path\nTotal records returned: 0\n"},
		{cmd: "delete gtm path all"},
		{cmd: "delete gtm path 127.194.21.5"},
		{cmd: "show gtm ldns", out: "127.194.21.0/24"},
		{cmd: "delete gtm ldns 127.194.22.5"},
		{cmd: "show gtm ldns", out: "Total records returned: 1"},
		{cmd: "delete gtm ldns 127.194.21.5 nope", err: `"nope" is not an IP address`},
		{cmd: "show gtm ldns", out: "Total records returned: 1"},
		{cmd: "delete gtm ldns 127.194.21.7", ldns: "127.194.23.5", answer: "127.194.20.12"},
		{cmd: "show gtm ldns", out: "127.194.23.0/24"},
		{cmd: "delete gtm ldns"},
		{cmd: "show gtm ldns", out: "Gtm::LDNS\nTotal records returned: 0\n"},
	}
	runGTMSteps(t, s, g, "www.v11.test", steps)
}
