package objects

import "strings"

// The TLS kinds of BIG-IP 11.6 to 13.0 configurations: `ltm profile
// ocsp-stapling-params`, which a client-ssl profile's cert-key-chain
// entries name for OCSP stapling before `sys crypto cert-validator ocsp`
// took its place (13.1), and `ltm profile certificate-authority`.

// ocspParamsKey is the kind a cert-key-chain entry's
// ocsp-stapling-params names.
const ocspParamsKey = "ltm profile ocsp-stapling-params"

// ocspParamsActed are the settings of ltm profile ocsp-stapling-params
// the stapling uses (all of F5's).
var ocspParamsActed = []string{"responder-url", "timeout", "cache-timeout", "cache-error-timeout", "clock-skew",
	"sign-hash", "trusted-ca", "trusted-responders", "status-age", "strict-resp-cert-check", "dns-resolver",
	"signer-cert", "signer-key", "signer-key-passphrase", "proxy-server-pool", "use-proxy-server"}

// certificateAuthorityWhy is why ltm profile certificate-authority is
// kept and not acted on, as its warning says.
const certificateAuthorityWhy = "kept: its ca-file, crl-file, authenticate-depth and update-crl authenticate no client, since F5 documents no virtual, profile or auth object that uses a certificate-authority profile; client-ssl's own ca-file, crl-file and authenticate-depth do"

func tlsOldKinds() []*Kind {
	src := "; rows and defaults: F5's iControl REST model of ltm/profile/"
	params := actOn(pk(ocspParamsKey, "OCSP Stapling Parameters", "", tmshRef(ocspParamsKey)+src+
		"ocsp-stapling-params (BIG-IP 11.6 and later); dns-resolver and proxy-server-pool exclusive, proxy-server-pool required with use-proxy-server enabled: F5's SDK", `
cache-error-timeout int 3600
cache-timeout int indefinite
clock-skew int 300
dns-resolver ref net+dns-resolver none
proxy-server-pool ref ltm+pool none
responder-url str none
sign-hash enum sha256 sha1|sha256
signer-cert ref sys+file+ssl-cert none
signer-key ref sys+file+ssl-key none
signer-key-passphrase str none
status-age int 86400
strict-resp-cert-check ed disabled
timeout int 8
trusted-ca ref sys+file+ssl-cert none
trusted-responders ref sys+file+ssl-cert none
use-proxy-server ed disabled
`), "F5 ltm profile ocsp-stapling-params (BIG-IP 11.6 to 13.0): how a client-ssl profile with ocsp-stapling asks the status of the certificate of each cert-key-chain entry that names it (responder-url, else the certificate's AIA), cached and renewed ahead",
		ocspParamsActed...)
	params.Lower = "OCSP stapling parameters"
	ca := pk("ltm profile certificate-authority", "Certificate Authority Profile", "/Common/certificateauthority",
		tmshRef("ltm profile certificate-authority")+src+"certificate-authority; defaults of the built-in certificateauthority", `
defaults-from ref ltm+profile+certificate-authority
authenticate-depth int 9
ca-file ref sys+file+ssl-cert none
crl-file ref sys+file+ssl-crl none
update-crl tf false
`)
	ca.Help = certificateAuthorityWhy
	// "profile", as BIG-IP names a profile in its messages; the kind
	// sorts first among ltm profile kinds, so a reference to any profile
	// that finds none names it by this.
	ca.Lower = "profile"
	return []*Kind{params, ca}
}

// keptKindWhy is the reason a kept kind gives in its warning, " (why)",
// from a help text "kept: why"; "" for the others.
func keptKindWhy(k *Kind) string {
	if why, ok := strings.CutPrefix(k.Help, "kept: "); ok {
		return " (" + why + ")"
	}
	return ""
}

// checkOCSPParams refuses what BIG-IP's model refuses of an
// ocsp-stapling-params object: use-proxy-server enabled without a
// proxy-server-pool, and a proxy-server-pool with a dns-resolver (one
// or the other reaches the responder) [M: the wording].
func checkOCSPParams(o *Object) error {
	if o.Kind == nil || o.Kind.Key() != ocspParamsKey {
		return nil
	}
	set := func(n string) bool { v := o.Str(n); return v != "" && v != "none" }
	if o.Str("use-proxy-server") == "enabled" && !set("proxy-server-pool") {
		return Invalid("The OCSP stapling parameters (%s): use-proxy-server enabled requires a proxy-server-pool.", o.Name)
	}
	if set("proxy-server-pool") && set("dns-resolver") {
		return Invalid("The OCSP stapling parameters (%s): dns-resolver and proxy-server-pool exclude each other (use-proxy-server chooses which reaches the responder).", o.Name)
	}
	if u := o.Str("responder-url"); u != "" && u != "none" && !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		return Invalid("The OCSP stapling parameters (%s): responder-url %q is not an http:// or https:// URL.", o.Name, u)
	}
	return nil
}
