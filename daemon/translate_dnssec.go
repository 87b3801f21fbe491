package daemon

import (
	"fmt"
	"strconv"
	"time"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/dnssec"
	"github.com/openltm/openltm/dataplane/gslb"
	"github.com/openltm/openltm/dataplane/tlsprof"
	"github.com/openltm/openltm/objects"
)

var (
	dnssecKeyKind  = schema.MustKind("ltm dns dnssec key")
	dnssecZoneKind = schema.MustKind("ltm dns dnssec zone")
	dnssecZoneKeys = dnssecZoneKind.MustProp("keys")
	dnssecZoneOn   = dnssecZoneKind.MustProp("enabled")
	dnssecKeyOn    = dnssecKeyKind.MustProp("enabled")
	dnssecKeyProps = func() map[string]*objects.Prop {
		out := map[string]*objects.Prop{}
		for _, n := range []string{"algorithm", "bit-width", "certificate-file", "expiration-period", "key-file", "key-management",
			"key-type", "rollover-period", "signature-publication-period", "signature-validity-period", "ttl"} {
			out[n] = dnssecKeyKind.MustProp(n)
		}
		return out
	}()
	specDNSSECKey = []string{"ltm dns dnssec key"}
)

var dnssecAlgorithms = map[string]uint8{
	"rsasha1": dns.RSASHA1, "rsasha256": dns.RSASHA256, "rsasha512": dns.RSASHA512,
	"ecdsap256sha256": dns.ECDSAP256SHA256, "ecdsap384sha384": dns.ECDSAP384SHA384,
}

// dnssecZones reads the enabled ltm dns dnssec zones and their enabled
// keys, refusing what BIG-IP refuses (a manual key without its key-file,
// a rollover period not shorter than the expiration period, a
// signature published as long as it is valid) and a key-file whose key
// does not fit the algorithm or the certificate-file.
func dnssecZones(t *translator) ([]dnssec.ZoneConfig, []*dnssec.KeyConfig, error) {
	var out []dnssec.ZoneConfig
	var all []*dnssec.KeyConfig
	keys := map[string]*dnssec.KeyConfig{}
	// Every key is checked, used by a zone or not, as BIG-IP checks it
	// when it is created.
	for _, o := range t.cfg.Of(dnssecKeyKind) {
		kc, err := dnssecKey(t, o)
		if err != nil {
			return nil, nil, err
		}
		keys[o.Name] = kc
		all = append(all, kc)
	}
	for _, z := range t.cfg.Of(dnssecZoneKind) {
		if dnssecZoneOn.Effective(t.cfg, z) == "disabled" {
			continue
		}
		zc := dnssec.ZoneConfig{Name: gslb.DNSName(z.Name)}
		if v := dnssecZoneKeys.Get(z); v != nil {
			for _, name := range v.List {
				o := t.cfg.Lookup(t.s, specDNSSECKey, objects.FullPath(folderOf(z.Name), name))
				if o == nil {
					return nil, nil, fmt.Errorf("ltm dns dnssec zone %s: key %s was not found", z.Name, name)
				}
				if dnssecKeyOn.Effective(t.cfg, o) == "disabled" {
					continue
				}
				zc.Keys = append(zc.Keys, keys[o.Name])
			}
		}
		out = append(out, zc)
	}
	return out, all, nil
}

func dnssecKey(t *translator, o *objects.Object) (*dnssec.KeyConfig, error) {
	e := func(n string) string { return dnssecKeyProps[n].Effective(t.cfg, o) }
	secs := func(n string) (time.Duration, error) {
		v, err := strconv.ParseUint(e(n), 10, 32)
		if err != nil {
			return 0, fmt.Errorf("ltm dns dnssec key %s: %s %q is not a number of seconds", o.Name, n, e(n))
		}
		return time.Duration(v) * time.Second, nil
	}
	c := &dnssec.KeyConfig{Name: o.Name, KSK: e("key-type") == "ksk", Algorithm: dnssecAlgorithms[e("algorithm")],
		Manual: e("key-management") == "manual"}
	bits, err := strconv.Atoi(e("bit-width"))
	if err != nil || bits < 1024 || bits > 4096 {
		return nil, fmt.Errorf("ltm dns dnssec key %s: bit-width %s is out of range (1024 to 4096)", o.Name, e("bit-width"))
	}
	c.Bits = bits
	ttl, err := secs("ttl")
	if err != nil {
		return nil, err
	}
	c.TTL = uint32(ttl / time.Second)
	for _, f := range []struct {
		name string
		to   *time.Duration
	}{{"rollover-period", &c.Rollover}, {"expiration-period", &c.Expiration},
		{"signature-validity-period", &c.Validity}, {"signature-publication-period", &c.Publication}} {
		if *f.to, err = secs(f.name); err != nil {
			return nil, err
		}
	}
	if c.Validity == 0 {
		return nil, fmt.Errorf("ltm dns dnssec key %s: signature-validity-period must be above 0", o.Name)
	}
	if c.Publication >= c.Validity {
		return nil, fmt.Errorf("ltm dns dnssec key %s: signature-publication-period (%d) must be shorter than signature-validity-period (%d)",
			o.Name, c.Publication/time.Second, c.Validity/time.Second)
	}
	if !c.Manual && c.Rollover > 0 && c.Expiration > 0 && c.Rollover >= c.Expiration {
		return nil, fmt.Errorf("ltm dns dnssec key %s: rollover-period (%d) must be shorter than expiration-period (%d)",
			o.Name, c.Rollover/time.Second, c.Expiration/time.Second)
	}
	if !c.Manual {
		return c, nil
	}
	keyName, certName := noneEmpty(e("key-file")), noneEmpty(e("certificate-file"))
	if keyName == "" {
		return nil, fmt.Errorf("ltm dns dnssec key %s: key-management manual needs a key-file (sys file ssl-key)", o.Name)
	}
	ko := t.cfg.Lookup(t.s, specSSLKey, objects.FullPath(folderOf(o.Name), keyName))
	if ko == nil {
		return nil, fmt.Errorf("ltm dns dnssec key %s: sys file ssl-key %s was not found", o.Name, keyName)
	}
	path, err := t.sslFilePath(ko)
	if err != nil {
		return nil, err
	}
	k, err := tlsCache.key(ko.Name, path, noneEmpty(sslKeyPassphrase.Str(ko)))
	if err != nil {
		return nil, err
	}
	if certName != "" {
		co := t.cfg.Lookup(t.s, specSSLCert, objects.FullPath(folderOf(o.Name), certName))
		if co == nil {
			return nil, fmt.Errorf("ltm dns dnssec key %s: sys file ssl-cert %s was not found", o.Name, certName)
		}
		cpath, err := t.sslFilePath(co)
		if err != nil {
			return nil, err
		}
		cert, err := tlsCache.cert(co.Name, cpath)
		if err != nil {
			return nil, err
		}
		if _, err := tlsprof.Pair(o.Name, cert, k, nil); err != nil {
			return nil, fmt.Errorf("ltm dns dnssec key %s: certificate-file %s and key-file %s are not one pair", o.Name, certName, keyName)
		}
	}
	c.Private = k.Signer
	return c, nil
}
