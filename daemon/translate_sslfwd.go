package daemon

import (
	"fmt"
	"net/netip"
	"strconv"
	"time"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/sslfwd"
	"github.com/openltm/openltm/dataplane/tlsprof"
	"github.com/openltm/openltm/objects"
)

// The SSL forward proxy's settings (client-ssl and server-ssl).
var (
	sslFwdProxy       = common("ssl-forward-proxy", sslProfiles...)
	sslFwdBypass      = common("ssl-forward-proxy-bypass", sslProfiles...)
	sslFwdDefault     = profileClientSSL.MustProp("forward-proxy-bypass-default-action")
	sslFwdCACert      = profileClientSSL.MustProp("proxy-ca-cert")
	sslFwdCAKey       = profileClientSSL.MustProp("proxy-ca-key")
	sslFwdCAPass      = profileClientSSL.MustProp("proxy-ca-passphrase")
	sslFwdLifespan    = profileClientSSL.MustProp("cert-lifespan")
	sslFwdCALifespan  = profileClientSSL.MustProp("proxy-ca-lifespan")
	sslFwdExtensions  = profileClientSSL.MustProp("cert-extension-includes")
	sslFwdLookupAddr  = profileClientSSL.MustProp("cert-lookup-by-ipaddr-port")
	sslFwdOnAlert     = profileServerSSL.MustProp("bypass-on-handshake-alert")
	sslFwdOnCertFail  = common("bypass-on-client-cert-fail", sslProfiles...)
	sslFwdDstIntercep = profileClientSSL.MustProp("destination-ip-blacklist")
	sslFwdDstBypass   = profileClientSSL.MustProp("destination-ip-whitelist")
	sslFwdSrcIntercep = profileClientSSL.MustProp("source-ip-blacklist")
	sslFwdSrcBypass   = profileClientSSL.MustProp("source-ip-whitelist")
	sslFwdHostInterc  = profileClientSSL.MustProp("hostname-blacklist")
	sslFwdHostBypass  = profileClientSSL.MustProp("hostname-whitelist")
)

// maxProxyCALifespan bounds proxy-ca-lifespan, in days [M: ten years;
// the forged certificate ends with the proxy CA anyway].
const maxProxyCALifespan = 3650

// sslForgers keep the forward proxies' forged keys and certificates
// across commits: a commit that leaves a CA and its forging settings as
// they were does not make clients' connections forge again.
var sslForgers = &sslfwd.Forgers{}

// sslForward gives the virtual's TLS its SSL forward proxy when its
// client-ssl profile has ssl-forward-proxy enabled; BIG-IP's pairing
// rules are checked (both profiles enabled, or neither). It returns
// false when the virtual was left out (t.skip says why).
func (t *translator) sslForward(o *objects.Object, v *dataplane.Virtual, clients []*objects.Object, built []*tlsprof.Built, server *objects.Object, tc *dataplane.TLS) bool {
	var fp *objects.Object
	for _, p := range clients {
		if sslFwdProxy.Effective(t.cfg, p) == "enabled" {
			fp = p
		}
	}
	serverOn := server != nil && sslFwdProxy.Effective(t.cfg, server) == "enabled"
	switch {
	case fp == nil && !serverOn:
		return true
	case fp == nil:
		t.skip(o, "server-ssl profile %s has ssl-forward-proxy enabled; the virtual server needs a client-ssl profile with ssl-forward-proxy enabled too", server.Name)
		return false
	case !serverOn:
		t.skip(o, "client-ssl profile %s has ssl-forward-proxy enabled; the virtual server needs a server-ssl profile with ssl-forward-proxy enabled too", fp.Name)
		return false
	case len(clients) > 1:
		t.skip(o, "client-ssl profile %s has ssl-forward-proxy enabled; such a virtual server takes one client-ssl profile [openltm]", fp.Name)
		return false
	}
	if sslFwdBypass.Effective(t.cfg, fp) != sslFwdBypass.Effective(t.cfg, server) {
		t.skip(o, "ssl-forward-proxy-bypass is %s on client-ssl profile %s and %s on server-ssl profile %s; it must be the same on both",
			sslFwdBypass.Effective(t.cfg, fp), fp.Name, sslFwdBypass.Effective(t.cfg, server), server.Name)
		return false
	}
	switch {
	case v.MBLB != nil && v.MBLB.ExplicitProxy == nil && v.MBLB.Request.Mode != mblb.HTTP:
		t.skip(o, "SSL forward proxy on a message-based virtual server other than HTTP is not supported by openltm")
		return false
	case v.MBLB == nil && t.hasRules(v):
		t.skip(o, "SSL forward proxy with iRules on a standard virtual server is not supported by openltm")
		return false
	}
	e := func(pr *objects.Prop) string { return pr.Effective(t.cfg, fp) }
	caName, keyName, pass := noneEmpty(e(sslFwdCACert)), noneEmpty(e(sslFwdCAKey)), noneEmpty(e(sslFwdCAPass))
	if caName == "" && keyName == "" {
		// BIG-IP's other form: a cert-key-chain entry with usage CA,
		// the profile's own or its parent's (inherit-ca-certkeychain).
		cas, err := t.caKeyChain(fp)
		if err != nil {
			t.skip(o, "%v", err)
			return false
		}
		if len(cas) > 0 {
			caName, keyName = cas[0].cert, cas[0].key
			pass = firstNonEmpty(cas[0].passphrase, noneEmpty(e(sslPassphrase)))
		}
	}
	if caName == "" || keyName == "" {
		t.skip(o, "client-ssl profile %s: ssl-forward-proxy enabled needs proxy-ca-cert and proxy-ca-key (or a cert-key-chain entry with usage CA)", fp.Name)
		return false
	}
	ca, err := t.loadCert(fp, caName)
	if err != nil {
		t.skip(o, "%v", err)
		return false
	}
	key, err := t.loadKey(fp, keyName, pass)
	if err != nil {
		t.skip(o, "%v", err)
		return false
	}
	c := sslfwd.Config{Name: fp.Name, CA: ca.Certs[0], CAChain: ca.Certs, CAKey: key.Signer,
		Client:        built[0].Config,
		BypassOnAlert: sslFwdOnAlert.Effective(t.cfg, server) == "enabled",
		// Enabled on either profile [M]: BIG-IP shows it on both.
		BypassOnCertRequest: sslFwdOnCertFail.Effective(t.cfg, server) == "enabled" || e(sslFwdOnCertFail) == "enabled",
		Shared:              sslForgers,
		LookupByAddr:        e(sslFwdLookupAddr) == "enabled",
	}
	if days := atoi(e(sslFwdLifespan)); days > 0 {
		c.Lifespan = time.Duration(days) * 24 * time.Hour
	}
	// proxy-ca-lifespan, where the profile or a parent sets it, is the
	// forged certificates' lifespan in days instead [M: BIG-IP shows both
	// properties for the forward proxy; the one a user set wins, and
	// cert-lifespan, the older, rules when neither parent nor profile
	// sets proxy-ca-lifespan, so its default of 365 changes nothing].
	if fp.Props[sslFwdCALifespan.Name] != nil || objects.Inherited(fp, sslFwdCALifespan.Name, t.cfg.Get) != nil {
		v := e(sslFwdCALifespan)
		days, err := strconv.Atoi(v)
		if err != nil || days < 1 || days > maxProxyCALifespan {
			t.skip(o, "client-ssl profile %s: proxy-ca-lifespan %s: days from 1 to %d", fp.Name, v, maxProxyCALifespan)
			return false
		}
		c.Lifespan = time.Duration(days) * 24 * time.Hour
	}
	// Unset (the schema's empty list) is BIG-IP's default, { basic-constraints
	// subject-alternative-name }; `none` leaves every extension out.
	if v := t.cfg.Effective(fp, sslFwdExtensions.Name); v != nil && len(v.List) > 0 {
		c.Extensions = []string{}
		for _, w := range v.List {
			if w != "none" {
				c.Extensions = append(c.Extensions, w)
			}
		}
	}
	if e(sslFwdBypass) == "enabled" {
		b := &sslfwd.Bypass{Default: e(sslFwdDefault) == "bypass"}
		for _, l := range []struct {
			prop *objects.Prop
			nets *[]netip.Prefix
			host *[]string
		}{
			{sslFwdDstIntercep, &b.DstIntercept, nil}, {sslFwdDstBypass, &b.DstBypass, nil},
			{sslFwdSrcIntercep, &b.SrcIntercept, nil}, {sslFwdSrcBypass, &b.SrcBypass, nil},
			{sslFwdHostInterc, nil, &b.HostIntercept}, {sslFwdHostBypass, nil, &b.HostBypass},
		} {
			if err := t.bypassList(fp, l.prop, l.nets, l.host); err != nil {
				t.skip(o, "%v", err)
				return false
			}
		}
		c.Bypass = b
	}
	p, err := sslfwd.New(c)
	if err != nil {
		t.skip(o, "%v", err)
		return false
	}
	tc.Forward = p
	return true
}

// hasRules reports whether v has rules (attached or pending).
func (t *translator) hasRules(v *dataplane.Virtual) bool {
	if dataplane.Program(v.Rules) != nil {
		return true
	}
	return t.rules != nil && len(t.rules.pending[v].list) > 0
}

// bypassList reads the data group a bypass list property names: an
// address one (type ip) for the IP lists, a string one for the hostname
// lists.
func (t *translator) bypassList(p *objects.Object, prop *objects.Prop, nets *[]netip.Prefix, hosts *[]string) error {
	name := noneEmpty(prop.Effective(t.cfg, p))
	if name == "" {
		return nil
	}
	dg := t.cfg.Lookup(t.s, specDataGroup, objects.FullPath(folderOf(p.Name), name))
	if dg == nil {
		return fmt.Errorf("profile client-ssl %s: %s: ltm data-group internal %s was not found", p.Name, prop.Name, name)
	}
	typ := dataGroupType.Effective(t.cfg, dg)
	want := "string"
	if nets != nil {
		want = "ip"
	}
	if typ != want {
		return fmt.Errorf("profile client-ssl %s: %s: data group %s is of type %s; this list takes a data group of type %s", p.Name, prop.Name, dg.Name, typ, want)
	}
	recs := dataGroupRecords.Get(dg)
	if recs == nil {
		return nil
	}
	for _, it := range recs.Items {
		if hosts != nil {
			*hosts = append(*hosts, sslfwd.NormalHost(it.Name))
			continue
		}
		n, err := netip.ParsePrefix(it.Name)
		if err != nil {
			a, aerr := netip.ParseAddr(it.Name)
			if aerr != nil {
				return fmt.Errorf("profile client-ssl %s: %s: data group %s: %q is not an address or network", p.Name, prop.Name, dg.Name, it.Name)
			}
			n = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())
		}
		*nets = append(*nets, n.Masked())
	}
	return nil
}
