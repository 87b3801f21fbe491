// Package tlsprof turns BIG-IP's TLS objects into Go's crypto/tls
// configuration: `sys file ssl-cert` and `ssl-key` (LoadCert, LoadKey,
// Pair), F5 cipher strings and `ltm cipher rule` / `ltm cipher group`
// objects (ParseCiphers, CipherGroup), and the `ltm profile client-ssl` and
// `server-ssl` profiles (ClientSSL, ServerSSL). It holds no connections: the
// dataplane asks it for a *tls.Config once per commit and keeps that.
//
// How the dataplane uses it:
//
//	cert, err := tlsprof.LoadCert("/Common/site.crt", path)     // at sys file create
//	key, err := tlsprof.LoadKey("/Common/site.key", path, "")
//	b, err := (&tlsprof.ClientSSL{Name: "/Common/cs", CertKeyChain: []tlsprof.CertKeyChain{{Cert: cert, Key: key}},
//	        Ciphers: "ECDHE+AES-GCM:!SSLv3", Options: []string{"no-tlsv1.3"}}).Build()
//	// b.Warnings: category-2 notes for the commit's output
//	cfg, err := tlsprof.ForVirtual("/Common/vs", []*tlsprof.Built{b, ...}) // SNI choice
//	ln := tls.NewListener(rawListener, cfg)
//	sb, err := (&tlsprof.ServerSSL{Name: "/Common/ss", ServerName: "app.example"}).Build()
//	conn := tls.Client(memberConn, sb.Config)
//	conn = tls.Client(memberConn, sb.ForServerName(clientSNI)) // serverssl-use-sni
//
// Peers' certificates are checked at the handshake as the profiles say:
// server-ssl's expire-, untrusted-cert-response-control and
// revoked-cert-status-response-control (peerCheck), CRLs from `sys file
// ssl-crl` (LoadCRL), client-ssl's ca-file apart from client-cert-ca.
// Session lifetimes (session-ticket-timeout, cache-timeout) are kept with
// the tickets and the client session cache (sessions.go). OCSP (ocsp.go):
// a `sys crypto cert-validator ocsp` asked over HTTP, its answers stapled
// by client-ssl's ocsp-stapling and checked by server-ssl's ocsp, cached
// and renewed ahead of expiry; max-active-handshakes is a HandshakeGate
// the dataplane enters around each handshake. unclean-shutdown disabled
// and strict-resume (ends.go): the socket under a session is watched
// (WatchServer, WatchClient) for a peer's end without close_notify, which
// is counted and withdraws the session from resumption.
//
// Cipher strings are read as BIG-IP reads them: OpenSSL syntax over the
// suites BIG-IP knows, where each suite is selected per protocol version,
// so "!SSLv3" or "!TLSv1" take a protocol away. BIG-IP's keyword ECDHE
// names the RSA-signed ECDHE suites and ECDHE_ECDSA the ECDSA-signed ones;
// kECDHE names both. OpenSSL's keywords for families none of these suites
// belongs to (SSLv2, IDEA, SEED, PSK, SRP, ...) select nothing, as in
// OpenSSL, so BIG-IP's "!SSLv2:ALL:..." reads. DEFAULT here is the native list less export, single
// DES, RC4, MD5, anonymous and null suites and SSLv3. The suites Go cannot
// do (DHE, CAMELLIA, static ECDH, SHA384 CBC suites, RC4-MD5, SSLv3) are
// left out with a warning; a string that selects only such suites is
// refused with their names. Go always offers all three TLS 1.3 suites:
// naming some of them warns, naming none turns TLS 1.3 off.
//
// Limits of Go's crypto/tls, reported as warnings rather than hidden: no
// server-side renegotiation (renegotiation enabled on client-ssl), no
// session-ID cache on the server side (resumption needs session-ticket
// enabled), no gap in protocol versions (no-tlsv1.1 with TLSv1 and TLSv1.2
// on keeps TLSv1.2 and up).
package tlsprof
