package daemon

import (
	"fmt"
	"slices"

	"github.com/openltm/openltm/dataplane/tlsprof"
	"github.com/openltm/openltm/objects"
)

// ocspParams is the kind a cert-key-chain entry's ocsp-stapling-params
// names (BIG-IP 11.6 to 13.0: stapling before sys crypto cert-validator
// ocsp).
var ocspParams = schema.MustKind("ltm profile ocsp-stapling-params")

// paramsOCSP reads the ocsp-stapling-params a client-ssl profile's
// cert-key-chain entry names into entry: the stapling of the entry's
// certificate then asks as they say, in place of any cert-validator of
// the certificate [M: BIG-IP 13.1 and later turn the parameters into a
// validator on upgrade; a configuration with both is not documented, and
// the entry's own choice is taken]. trusted-ca (the CA that signs the
// responder's certificate) may sign the responder's certificate or the
// answers, as trusted-responders may; without the certificate's
// issuer-cert, the issuer is looked for in it too [M].
func (t *translator) paramsOCSP(p *objects.Object, ck ckEntry, entry *tlsprof.CertKeyChain) error {
	name := ck.params
	o := t.cfg.Lookup(t.s, []string{ocspParams.Key()}, objects.FullPath(folderOf(p.Name), name))
	if o == nil {
		return fmt.Errorf("profile %s: cert-key-chain entry %s: ltm profile ocsp-stapling-params %s was not found", p.Name, entry.Name, name)
	}
	v, err := t.ocspOf(ocspParams, o)
	if err != nil {
		return err
	}
	if ca := noneEmpty(ocspParams.MustProp("trusted-ca").Str(o)); ca != "" {
		if entry.TrustedCA, err = t.loadCert(o, ca); err != nil {
			return err
		}
		v.TrustedResponders = joinCerts(v.TrustedResponders, entry.TrustedCA)
	}
	entry.OCSP = v
	// The certificate's issuer-cert, when it has one, names the issuer.
	if c := t.cfg.Lookup(t.s, specSSLCert, objects.FullPath(folderOf(p.Name), ck.cert)); c != nil {
		if in := noneEmpty(certIssuer.Str(c)); in != "" {
			if entry.Issuer, err = t.loadCert(c, in); err != nil {
				return err
			}
		}
	}
	return nil
}

// joinCerts is a and b's certificates as one bundle (a's name); either
// may be nil.
func joinCerts(a, b *tlsprof.Cert) *tlsprof.Cert {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	j := *a
	j.Certs = slices.Concat(a.Certs, b.Certs)
	return &j
}
