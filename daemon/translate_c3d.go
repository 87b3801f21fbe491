package daemon

import (
	"time"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/sslfwd"
	"github.com/openltm/openltm/dataplane/tlsprof"
	"github.com/openltm/openltm/objects"
)

// Client certificate constrained delegation's settings (client-ssl and
// server-ssl).
var (
	sslC3D         = common("ssl-c3d", sslProfiles...)
	c3dCACert      = profileServerSSL.MustProp("c3d-ca-cert")
	c3dCAKey       = profileServerSSL.MustProp("c3d-ca-key")
	c3dCAPass      = profileServerSSL.MustProp("c3d-ca-passphrase")
	c3dLifespan    = profileServerSSL.MustProp("c3d-cert-lifespan")
	c3dExtensions  = profileServerSSL.MustProp("c3d-cert-extension-includes")
	c3dCustomOIDs  = profileServerSSL.MustProp("c3d-cert-extension-custom-oids")
	c3dFallback    = profileClientSSL.MustProp("c3d-client-fallback-cert")
	c3dOCSPProp    = profileClientSSL.MustProp("c3d-ocsp")
	c3dDropUnknown = profileClientSSL.MustProp("c3d-drop-unknown-ocsp-status")
	c3dMaxLifespan = 8760 // hours: a year [M]
)

// sslC3D gives the virtual's TLS its client certificate delegation when
// its profiles have ssl-c3d enabled: BIG-IP's pairing (both profiles
// enabled, or neither) and the CA are checked. It returns false when the
// virtual was left out (t.skip says why).
func (t *translator) sslC3D(o *objects.Object, clients []*objects.Object, server *objects.Object, tc *dataplane.TLS) bool {
	var cp *objects.Object
	for _, p := range clients {
		if sslC3D.Effective(t.cfg, p) == "enabled" && cp == nil {
			cp = p
		}
	}
	serverOn := server != nil && sslC3D.Effective(t.cfg, server) == "enabled"
	switch {
	case cp == nil && !serverOn:
		return true
	case cp == nil:
		t.skip(o, "server-ssl profile %s has ssl-c3d enabled; the virtual server needs a client-ssl profile with ssl-c3d enabled too", server.Name)
		return false
	case !serverOn:
		t.skip(o, "client-ssl profile %s has ssl-c3d enabled; the virtual server needs a server-ssl profile with ssl-c3d enabled too", cp.Name)
		return false
	case tc.Forward != nil:
		t.skip(o, "ssl-c3d and ssl-forward-proxy cannot both be enabled on a virtual server's SSL profiles")
		return false
	}
	e := func(pr *objects.Prop) string { return pr.Effective(t.cfg, server) }
	caName, keyName := noneEmpty(e(c3dCACert)), noneEmpty(e(c3dCAKey))
	if caName == "" || keyName == "" {
		t.skip(o, "server-ssl profile %s: ssl-c3d enabled needs c3d-ca-cert and c3d-ca-key", server.Name)
		return false
	}
	ca, err := t.loadCert(server, caName)
	if err != nil {
		t.skip(o, "%v", err)
		return false
	}
	key, err := t.loadKey(server, keyName, noneEmpty(e(c3dCAPass)))
	if err != nil {
		t.skip(o, "%v", err)
		return false
	}
	c := sslfwd.C3DConfig{Name: server.Name, CA: ca.Certs[0], CAChain: ca.Certs, CAKey: key.Signer, Shared: sslForgers}
	if s := e(c3dLifespan); s != "" {
		h := atoi(s)
		if h < 1 || h > c3dMaxLifespan {
			t.skip(o, "server-ssl profile %s: c3d-cert-lifespan %s: hours from 1 to %d", server.Name, s, c3dMaxLifespan)
			return false
		}
		c.Lifespan = time.Duration(h) * time.Hour
	}
	// Unset is BIG-IP's default list; `none` leaves every extension out.
	if v := t.cfg.Effective(server, c3dExtensions.Name); v != nil && len(v.List) > 0 {
		c.Extensions = []string{}
		for _, w := range v.List {
			if w != "none" {
				c.Extensions = append(c.Extensions, w)
			}
		}
	}
	if v := t.cfg.Effective(server, c3dCustomOIDs.Name); v != nil {
		for _, w := range v.List {
			if w == "none" {
				continue
			}
			oid, err := sslfwd.ParseOID(w)
			if err != nil {
				t.skip(o, "server-ssl profile %s: c3d-cert-extension-custom-oids: %v", server.Name, err)
				return false
			}
			c.CustomOIDs = append(c.CustomOIDs, oid)
		}
	}
	// The fallback of the first client-ssl profile with ssl-c3d enabled [M].
	if fb := noneEmpty(c3dFallback.Effective(t.cfg, cp)); fb != "" {
		crt, err := t.loadCert(cp, fb)
		if err != nil {
			t.skip(o, "%v", err)
			return false
		}
		c.Fallback = crt.Certs[0]
	}
	d, err := sslfwd.NewC3D(c)
	if err != nil {
		t.skip(o, "%v", err)
		return false
	}
	tc.C3D = d
	return true
}

// c3dOCSP is client-ssl's c3d-ocsp, read when the profile has ssl-c3d
// enabled (it checks the certificates C3D delegates [M]); nil without.
func (t *translator) c3dOCSP(p *objects.Object) (*tlsprof.C3DOCSP, error) {
	name := noneEmpty(c3dOCSPProp.Effective(t.cfg, p))
	if name == "" || sslC3D.Effective(t.cfg, p) != "enabled" {
		return nil, nil
	}
	o, err := t.ocspValidator(p, name)
	if err != nil {
		return nil, err
	}
	return &tlsprof.C3DOCSP{Validator: o, DropUnknown: c3dDropUnknown.Effective(t.cfg, p) != "ignore"}, nil
}
