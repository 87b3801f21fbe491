package objects

// The TLS kinds openltm runs: `sys file ssl-cert`, `ssl-key` and
// `ssl-crl` (the certificates, keys and revocation lists a BIG-IP keeps
// in its file store) and the `ltm profile client-ssl` and `server-ssl`
// profiles that use them. Their rows are F5's; the settings the dataplane applies are listed in
// tlsActed, the others stay kept-only (a warning when set).

// sslFileRows are the rows the two file kinds share. source-path is where
// the file was read from (file:/path, as tmsh writes it); cache-path and
// revision are written by the system when it stores its copy.
const sslFileRows = `
source-path str none
cache-path ro -
revision ro -
checksum ro -
create-time ro -
created-by ro -
last-update-time ro -
updated-by ro -
mode ro -
size ro -
system-path ro -
`

// sslInfoRows are what BIG-IP reads from a certificate or key and may
// write beside it (system-set: accepted from files, refused in commands).
const sslInfoRows = `
certificate-key-size ro -
certificate-key-curve-name ro -
expiration-date ro -
expiration-string ro -
fingerprint ro -
issuer ro -
key-size ro -
key-type ro -
curve-name ro -
public-key-type ro -
serial-number ro -
subject ro -
subject-alternative-name ro -
version ro -
is-bundle ro -
bundle-certificates ro -
`

// tlsActed are the settings of the TLS kinds the dataplane applies.
var tlsActed = map[string]bool{
	"defaults-from": true, "description": true, "app-service": true, "metadata": true,
	"source-path": true, "cache-path": true, "revision": true, "checksum": true, "passphrase": true,
	"cert-key-chain": true, "cert": true, "key": true, "chain": true, "ca-file": true,
	"ciphers": true, "cipher-group": true, "options": true, "server-name": true,
	"sni-default": true, "sni-require": true, "renegotiation": true, "session-ticket": true,
	"peer-cert-mode": true, "authenticate": true, "authenticate-depth": true, "authenticate-name": true,
	"handshake-timeout": true, "alert-timeout": true, "cache-size": true, "mode": true,
	"inherit-certkeychain": true, "inherit-ca-certkeychain": true, "allow-dynamic-record-sizing": true,
	"cipher": true, "allow": true, "exclude": true, "require": true, "dh-groups": true, "ordering": true,
	"crl": true, "crl-file": true, "client-cert-ca": true, "allow-non-ssl": true,
	"retain-certificate": true, "allow-expired-crl": true, "cache-timeout": true, "session-ticket-timeout": true,
	"expire-cert-response-control": true, "untrusted-cert-response-control": true, "revoked-cert-status-response-control": true,
	"cert-validators": true, "cert-validation-options": true, "issuer-cert": true, "ocsp-stapling": true,
	"ocsp": true, "unknown-cert-status-response-control": true, "max-active-handshakes": true,
	// SSL forward proxy (dataplane/sslfwd)
	"ssl-forward-proxy": true, "ssl-forward-proxy-bypass": true, "forward-proxy-bypass-default-action": true,
	"proxy-ca-cert": true, "proxy-ca-key": true, "proxy-ca-passphrase": true, "proxy-ca-lifespan": true, "cert-lifespan": true, "cert-extension-includes": true,
	"destination-ip-blacklist": true, "destination-ip-whitelist": true, "source-ip-blacklist": true, "source-ip-whitelist": true,
	"hostname-blacklist": true, "hostname-whitelist": true, "bypass-on-handshake-alert": true,
	"bypass-on-client-cert-fail": true, "ssl-forward-proxy-verified-handshake": true, "cert-lookup-by-ipaddr-port": true,
	"unclean-shutdown": true, "strict-resume": true, "ssl-sign-hash": true, "maximum-record-size": true, "log-publisher": true,
	"notify-cert-status-to-virtual-server": true,
	// client certificate constrained delegation (dataplane/sslfwd, c3d.go)
	"ssl-c3d": true, "c3d-ca-cert": true, "c3d-ca-key": true, "c3d-ca-passphrase": true, "c3d-cert-lifespan": true,
	"c3d-cert-extension-includes": true, "c3d-cert-extension-custom-oids": true, "c3d-client-fallback-cert": true,
	"c3d-ocsp": true, "c3d-drop-unknown-ocsp-status": true,
}

// ocspValidatorActed are the settings of `sys crypto cert-validator ocsp`
// that stapling and server-ssl's ocsp use.
var ocspValidatorActed = []string{"responder-url", "timeout", "cache-timeout", "cache-error-timeout",
	"clock-skew", "sign-hash", "trusted-responders", "status-age", "strict-resp-cert-check", "concurrent-connections-limit", "dns-resolver",
	"signer-cert", "signer-key", "signer-key-passphrase", "proxy-server-pool"}

// runTLS marks a TLS kind as one openltm acts on.
func runTLS(k *Kind, help string) *Kind {
	acting(k, help, func(n string) bool { return tlsActed[n] })
	for _, p := range k.Props {
		if p.ReadOnly {
			p.Passive = true // shown, never set
		}
	}
	return k
}

// clientSSL0RTT marks client-ssl's data-0rtt acted on: HTTP/3 virtuals
// take their clients' 0-RTT by it (dataplane/http3), and the daemon
// warns where a profile that enables it serves TLS over TCP, whose
// clients get no early data. server-ssl's stays kept-only: openltm's
// connections to members send none.
func clientSSL0RTT(k *Kind) *Kind {
	for _, p := range k.Props {
		if p.Name == "data-0rtt" {
			p.Passive = false
		}
	}
	return k
}

func sslFileKinds() []*Kind {
	cert := pk("sys file ssl-cert", "Certificate", "", tmshRef("sys file ssl-cert"), sslFileRows+sslInfoRows+`
cert-validation-options list
cert-validators list
issuer-cert str none
`)
	cert.Lower = "certificate"
	key := pk("sys file ssl-key", "Key", "", tmshRef("sys file ssl-key"), sslFileRows+sslInfoRows+`
passphrase str none
security-type enum normal normal|password|fips
`)
	key.Lower = "key"
	crl := pk("sys file ssl-crl", "CRL", "", tmshRef("sys file ssl-crl"), sslFileRows)
	crl.Lower = "CRL"
	ocsp := pk("sys crypto cert-validator ocsp", "OCSP Cert-Validator", "", tmshRef("sys crypto cert-validator ocsp"), `
cache-error-timeout int 3600
cache-timeout int indefinite
clock-skew int 300
concurrent-connections-limit int 50
dns-resolver str none
proxy-server-pool ref ltm+pool none
responder-url str none
route-domain str none
sign-hash enum sha256 sha1|sha256
signer-cert ref sys+file+ssl-cert none
signer-key ref sys+file+ssl-key none
signer-key-passphrase str none
status-age int 0
strict-resp-cert-check ed disabled
timeout int 8
trusted-responders ref sys+file+ssl-cert none
`)
	ocsp.Lower = "cert-validator"
	ext := pk("sys file external-monitor", "External Monitor", "", tmshRef("sys file external-monitor"), sslFileRows)
	ext.Lower = "external monitor"
	return []*Kind{
		runTLS(ext, "A program an external monitor runs (install sys file external-monitor: create ... source-path file:PATH stores a copy)"),
		runTLS(cert, "A certificate or bundle (PEM) for TLS profiles; `install sys crypto cert NAME from-local-file PATH` stores a copy"),
		runTLS(key, "A private key (PEM) for TLS profiles; `install sys crypto key NAME from-local-file PATH` stores a copy"),
		actOn(ocsp, "An OCSP responder and how its answers are kept: a certificate's cert-validators name it, for client-ssl's ocsp-stapling and server-ssl's ocsp", ocspValidatorActed...),
		runTLS(crl, "A certificate revocation list (PEM or DER) for TLS profiles' crl-file; `install sys crypto crl NAME from-local-file PATH` stores a copy"),
	}
}

// runNameServers marks sys dns as acted on for its name-servers, which
// resolve FQDN nodes, and the search list and number-of-dots that
// complete their names; include stays kept-only.
func runNameServers(k *Kind) *Kind {
	k.Passive = false
	for _, p := range k.Props {
		switch p.Name {
		case "name-servers", "search", "number-of-dots", "description":
			p.Passive = false
		default:
			p.Passive = true
		}
	}
	return k
}

// pairs marks prop of k as written in repeated NAME VALUE pairs.
func pairs(k *Kind, prop string) *Kind {
	k.row(prop).Pairs = true
	return k
}
