package rules

import (
	"crypto/sha1"
	"crypto/x509"
	"encoding/binary"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/openltm/openltm/rules/tcl"
)

// SSLInfo is what the SSL:: commands read of one side's TLS connection,
// filled in by the dataplane once the handshake is done.
type SSLInfo struct {
	// Version is the protocol as BIG-IP names it (TLSv1.2, TLSv1.3).
	Version string
	// Cipher is the suite's OpenSSL name; Bits its key length.
	Cipher string
	Bits   int
	// SessionID is the session ID of the side's connection, the one its
	// ServerHello carried (empty when it carried none: a TLS 1.2 full
	// handshake by a server without a session ID cache, which Go's is).
	// DesiredSessionID is the one the ClientHello offered to resume.
	SessionID        []byte
	DesiredSessionID []byte
	// ServerName is the SNI the client sent.
	ServerName string
	// PeerCerts is the peer's chain as it sent it, leaf first (the client's
	// certificate on the client side, the member's on the server side).
	PeerCerts []*x509.Certificate
	// Profile is the full name of the side's client-ssl or server-ssl
	// profile (PROFILE::clientssl name).
	Profile string
	// ClientRandom is the random of the side's ClientHello (SSL::clientrandom),
	// nil when it was not seen.
	ClientRandom []byte
	// ALPN is the application protocol the handshake agreed on (SSL::alpn),
	// "" when none.
	ALPN string
	// SNIRequired is the side's profile's sni-require (SSL::sni required).
	SNIRequired bool
	// Secret is the connection's key material by its NSS key-log label
	// (CLIENT_RANDOM for the TLS 1.2 master secret, the TLS 1.3 traffic
	// secrets by theirs); nil, or a nil answer, when it was not kept:
	// crypto/tls gives it out only to a key-log writer set before the
	// handshake, which the dataplane sets when the program's rules read
	// it (Program.KeepsSecrets).
	Secret func(label string) []byte
	// Extensions is the extensions block of the hello the running event
	// is about (CLIENTSSL_SERVERHELLO_SEND, SERVERSSL_SERVERHELLO: the
	// ServerHello's), type, length and data of each; nil elsewhere, where
	// SSL::extensions rebuilds the client's server_name from ServerName.
	Extensions []byte
	// VerifyResult checks PeerCerts as the side's profile would, giving
	// OpenSSL's verification result (0: verified, or no certificate); nil
	// means 0. It runs only when a rule asks (SSL::verify_result).
	VerifyResult func() int
}

// SSLConn is implemented by a Conn whose sides may speak TLS (a virtual
// with a client-ssl or server-ssl profile), found by type assertion as
// HTTPConn is; SSL:: commands on a Conn without it are Tcl errors.
type SSLConn interface {
	// SSL is a side's TLS state; ok is false when the side has no TLS or
	// its handshake is not done.
	SSL(s Side) (info *SSLInfo, ok bool)
	// SSLDisable turns TLS off for a side whose handshake has not started
	// (SSL::disable in CLIENT_ACCEPTED): its bytes then pass in clear.
	SSLDisable(s Side) error
	// SSLEnable undoes SSLDisable while the side's handshake has still
	// not started (SSL::enable): a rule that sends some requests in clear
	// and others over TLS turns it back on per request.
	SSLEnable(s Side) error
}

// SSLProfileConn is implemented by a Conn whose TLS profiles a rule may
// switch (SSL::profile): the server-ssl profile chosen per pool or
// member, or a client-ssl profile before the client's handshake. The
// Conn finds the profile by name and so the side it is for; its error
// (no such profile, no profile of that side on the virtual, the side's
// handshake started) is the rule's.
type SSLProfileConn interface {
	SSLProfile(name string) error
}

func registerSSL(t *tcl.Commands) {
	t.Register("SSL::profile", cmdSSLProfile)
	t.Register("SSL::cipher", cmdSSLCipher)
	t.Register("SSL::cert", cmdSSLCert)
	t.Register("SSL::sessionid", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		desired := len(args) == 2 && args[1].String() == "desired"
		if len(args) != 1 && !desired {
			return tcl.Empty, tcl.WrongArgs("SSL::sessionid ?desired?")
		}
		info, err := sslInfo(in, "SSL::sessionid")
		if err != nil {
			return tcl.Empty, err
		}
		if desired {
			return tcl.Str(hex.EncodeToString(info.DesiredSessionID)), nil
		}
		return tcl.Str(hex.EncodeToString(info.SessionID)), nil
	})
	t.Register("SSL::extensions", cmdSSLExtensions)
	t.Register("SSL::clientrandom", cmdSSLClientRandom)
	t.Register("SSL::sessionsecret", cmdSSLSessionSecret)
	t.Register("SSL::tls13_secret", cmdSSLTLS13Secret)
	t.Register("SSL::sni", cmdSSLSNI)
	t.Register("SSL::c3d", cmdSSLC3D)
	t.Register("SSL::alpn", cmdSSLALPN).Compile = alpnHook
	t.Register("SSL::nextproto", cmdSSLNextProto)
	t.Register("PROFILE::clientssl", cmdProfileSSL("PROFILE::clientssl", ClientSide))
	t.Register("PROFILE::serverssl", cmdProfileSSL("PROFILE::serverssl", ServerSide))
	// SSL::verify_result: OpenSSL's verification result for the side's
	// peer certificate (0 when it verified, or when there was none), as
	// BIG-IP reports SSL_get_verify_result(); with peer-cert-mode request
	// every client is let in and rules decide by it.
	t.Register("SSL::verify_result", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 1 {
			return tcl.Empty, tcl.WrongArgs("SSL::verify_result")
		}
		info, err := sslInfo(in, "SSL::verify_result")
		if err != nil || info.VerifyResult == nil {
			return tcl.Int(0), err
		}
		return tcl.Int(int64(info.VerifyResult())), nil
	})
	t.Register("SSL::disable", sslSwitch("SSL::disable", SSLConn.SSLDisable))
	t.Register("SSL::enable", sslSwitch("SSL::enable", SSLConn.SSLEnable))
	for name, fn := range map[string]func(*x509.Certificate) string{
		"X509::subject":             func(c *x509.Certificate) string { return c.Subject.String() },
		"X509::issuer":              func(c *x509.Certificate) string { return c.Issuer.String() },
		"X509::serial_number":       func(c *x509.Certificate) string { return colonHex(c.SerialNumber.Bytes()) },
		"X509::not_valid_after":     func(c *x509.Certificate) string { return asn1Time(c.NotAfter) },
		"X509::not_valid_before":    func(c *x509.Certificate) string { return asn1Time(c.NotBefore) },
		"X509::version":             func(c *x509.Certificate) string { return strconv.Itoa(c.Version) },
		"X509::signature_algorithm": func(c *x509.Certificate) string { return c.SignatureAlgorithm.String() },
		"X509::hash":                func(c *x509.Certificate) string { h := sha1.Sum(c.Raw); return colonHex(h[:]) },
		"X509::whole":               whole,
	} {
		t.Register(name, x509Getter(name, fn))
	}
}

// cmdProfileSSL is PROFILE::clientssl ATTR and PROFILE::serverssl ATTR:
// name is the full name of the profile that side's handshake used (with
// several client-ssl profiles, the one SNI chose), which rules log and
// label metrics with; another setting is that profile's, as
// PROFILE::<type> reads them (commands_profile.go).
func cmdProfileSSL(cmd string, side Side) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 2 {
			return tcl.Empty, tcl.WrongArgs(cmd + " attribute")
		}
		info, err := sslInfoOf(in, cmd, &side)
		if err != nil {
			return tcl.Empty, err
		}
		if args[1].String() == "name" {
			return tcl.Str(info.Profile), nil
		}
		_, refs, err := virtualProfiles(in, cmd)
		if err != nil {
			return tcl.Empty, err
		}
		p := namedProfile(refs, info.Profile)
		if p == nil {
			return tcl.Empty, tcl.Errorf("%s: profile %s is not listed on the virtual server", cmd, info.Profile)
		}
		return profileAttr(cmd, p, args[1].String())
	}
}

// sslInfo is the TLS state of the running event's side.
func sslInfo(in *tcl.Interp, cmd string) (*SSLInfo, error) { return sslInfoOf(in, cmd, nil) }

// sslInfoOf is the TLS state of a side: side, or the running event's
// when nil.
func sslInfoOf(in *tcl.Interp, cmd string, side *Side) (*SSLInfo, error) {
	s, c, err := sess(in, cmd)
	if err != nil {
		return nil, err
	}
	sd := s.side
	if side != nil {
		sd = *side
	}
	sc, ok := c.(SSLConn)
	if !ok {
		return nil, tcl.Errorf("%s: the virtual server has no client-ssl or server-ssl profile", cmd)
	}
	info, ok := sc.SSL(sd)
	if !ok {
		return nil, tcl.Errorf("%s: no TLS on the %s of this connection", cmd, sd)
	}
	return info, nil
}

// SSL::clientrandom: the client random of the side's handshake in hex, the
// second field of the NSS key-log lines a rule writes for decrypting a
// capture.
func cmdSSLClientRandom(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs("SSL::clientrandom")
	}
	info, err := sslInfo(in, "SSL::clientrandom")
	if err != nil {
		return tcl.Empty, err
	}
	return tcl.Str(hex.EncodeToString(info.ClientRandom)), nil
}

// SSL::sessionsecret: the TLS 1.2 (and earlier) master secret in hex, the
// third field of the key-log line CLIENT_RANDOM; empty on a TLS 1.3
// connection, whose secrets SSL::tls13_secret gives, and before the
// handshake is done.
func cmdSSLSessionSecret(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs("SSL::sessionsecret")
	}
	info, err := sslInfo(in, "SSL::sessionsecret")
	if err != nil || info.Secret == nil {
		return tcl.Empty, err
	}
	return tcl.Str(hex.EncodeToString(info.Secret("CLIENT_RANDOM"))), nil
}

// tls13Labels maps SSL::tls13_secret's names to the key-log labels of the
// secrets: BIG-IP's "client|server hs|app" pairs, the same joined by an
// underscore, and the labels themselves.
var tls13Labels = map[string]string{
	"client hs":  "CLIENT_HANDSHAKE_TRAFFIC_SECRET",
	"server hs":  "SERVER_HANDSHAKE_TRAFFIC_SECRET",
	"client app": "CLIENT_TRAFFIC_SECRET_0",
	"server app": "SERVER_TRAFFIC_SECRET_0",
}

// tls13Unkept are secrets BIG-IP names that crypto/tls never gives out:
// they read as empty, as a secret the handshake did not make does.
var tls13Unkept = map[string]bool{"early": true, "exporter": true, "CLIENT_EARLY_TRAFFIC_SECRET": true, "EXPORTER_SECRET": true}

// SSL::tls13_secret client|server hs|app: a TLS 1.3 connection's handshake
// or first application traffic secret in hex, for the key-log lines
// CLIENT_HANDSHAKE_TRAFFIC_SECRET, SERVER_HANDSHAKE_TRAFFIC_SECRET,
// CLIENT_TRAFFIC_SECRET_0 and SERVER_TRAFFIC_SECRET_0; empty on a TLS
// 1.2 connection.
func cmdSSLTLS13Secret(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	var name string
	switch len(args) {
	case 2:
		name = args[1].String()
	case 3:
		name = args[1].String() + " " + args[2].String()
	default:
		return tcl.Empty, tcl.WrongArgs("SSL::tls13_secret client|server hs|app")
	}
	label := tls13Label(name)
	if label == "" && !tls13Unkept[name] {
		return tcl.Empty, tcl.Errorf("SSL::tls13_secret: bad secret %q: must be client hs, server hs, client app or server app", name)
	}
	info, err := sslInfo(in, "SSL::tls13_secret")
	if err != nil || info.Secret == nil || label == "" {
		return tcl.Empty, err
	}
	return tcl.Str(hex.EncodeToString(info.Secret(label))), nil
}

// tls13Label is the key-log label of a secret SSL::tls13_secret names
// ("client hs", "client_hs" or the label itself), "" for no such secret.
func tls13Label(name string) string {
	if l, ok := tls13Labels[name]; ok {
		return l
	}
	if l, ok := tls13Labels[strings.Replace(name, "_", " ", 1)]; ok {
		return l
	}
	for _, l := range tls13Labels {
		if l == name {
			return l
		}
	}
	return ""
}

// SSL::sni name|required: the server name of the side's handshake (on the
// client side the one the client asked for, on the server side the one
// sent to the member; empty without SNI), or whether the side's profile
// requires SNI (sni-require).
func cmdSSLSNI(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 2 {
		return tcl.Empty, tcl.WrongArgs("SSL::sni name|required")
	}
	info, err := sslInfo(in, "SSL::sni")
	if err != nil {
		return tcl.Empty, err
	}
	switch args[1].String() {
	case "name":
		return tcl.Str(info.ServerName), nil
	case "required":
		return tcl.Bool(info.SNIRequired), nil
	}
	return tcl.Empty, tcl.Errorf("SSL::sni: bad option %q: must be name or required", args[1].String())
}

// SSL::alpn: the application protocol the side's handshake agreed on
// (h2, http/1.1), empty when the client offered none the virtual takes.
func cmdSSLALPN(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs("SSL::alpn")
	}
	info, err := sslInfo(in, "SSL::alpn")
	if err != nil {
		return tcl.Empty, err
	}
	return tcl.Str(info.ALPN), nil
}

// alpnHook keeps, not runs, a rule that sets the protocols offered
// (SSL::alpn PROTOCOLS): crypto/tls fixes them in the configuration
// before the hello is read.
func alpnHook(c *tcl.Compiler) error {
	if r, ok := c.Context().(*Rule); ok && c.NumWords() > 1 {
		line, col := c.Pos(0)
		r.unsupported = append(r.unsupported, Unsupported{Kind: "command", Name: "SSL::alpn PROTOCOLS", Line: line, Col: col})
	}
	return nil
}

// readsSecrets reports whether a rule's text names a command that reads
// key material, whether in a when block, a proc or a string it evaluates:
// the dataplane keeps a connection's secrets only for such rules.
func readsSecrets(body string) bool {
	return strings.Contains(body, "SSL::sessionsecret") || strings.Contains(body, "SSL::tls13_secret")
}

// SSL::nextproto is the protocol NPN (Next Protocol Negotiation, the
// draft ALPN replaced) agreed on: always empty, since crypto/tls has no
// NPN and never negotiates it [M: BIG-IP answers "" when the client used
// none]; a rule that switches on it takes its no-NPN branch. Setting the
// protocols to advertise (SSL::nextproto PROTOCOLS) is a Tcl error that
// says why and points at ALPN.
func cmdSSLNextProto(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) > 1 {
		return tcl.Empty, tcl.Errorf("SSL::nextproto: NPN is not supported (crypto/tls has no Next Protocol Negotiation; ALPN, SSL::alpn, replaced it), so no protocols can be advertised")
	}
	_, err := sslInfo(in, "SSL::nextproto")
	return tcl.Empty, err
}

// SSL::cipher name|version|bits
func cmdSSLCipher(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 2 {
		return tcl.Empty, tcl.WrongArgs("SSL::cipher name|version|bits")
	}
	info, err := sslInfo(in, "SSL::cipher")
	if err != nil {
		return tcl.Empty, err
	}
	switch args[1].String() {
	case "name":
		return tcl.Str(info.Cipher), nil
	case "version":
		return tcl.Str(info.Version), nil
	case "bits":
		return tcl.Int(int64(info.Bits)), nil
	}
	return tcl.Empty, tcl.Errorf("SSL::cipher: bad option %q: must be name, version or bits", args[1].String())
}

// SSL::cert count | SSL::cert INDEX: the peer's chain; a certificate is
// its PEM text, which the X509:: commands read.
func cmdSSLCert(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 2 {
		return tcl.Empty, tcl.WrongArgs("SSL::cert count|index")
	}
	info, err := sslInfo(in, "SSL::cert")
	if err != nil {
		return tcl.Empty, err
	}
	if args[1].String() == "count" {
		return tcl.Int(int64(len(info.PeerCerts))), nil
	}
	i, err := args[1].Int64()
	if err != nil || i < 0 {
		return tcl.Empty, tcl.Errorf("SSL::cert: bad index %q: expected count or a certificate index", args[1].String())
	}
	if int(i) >= len(info.PeerCerts) {
		return tcl.Empty, nil // no such certificate: empty, as on BIG-IP
	}
	return tcl.Str(string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: info.PeerCerts[i].Raw}))), nil
}

// SSL::extensions [count | exists -type T | -type T]: the ClientHello's
// server_name extension (type 0), rebuilt from the SNI the handshake
// read, which is what rules read SNI from; other extensions are not kept.
func cmdSSLExtensions(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	info, err := sslInfo(in, "SSL::extensions")
	if err != nil {
		return tcl.Empty, err
	}
	all := info.Extensions != nil // a ServerHello's, every type kept
	var ext []byte
	if all {
		ext = info.Extensions
	} else if n := info.ServerName; n != "" {
		name := []byte(n)
		ext = binary.BigEndian.AppendUint16(nil, 0) // server_name
		ext = binary.BigEndian.AppendUint16(ext, uint16(len(name)+5))
		ext = binary.BigEndian.AppendUint16(ext, uint16(len(name)+3))
		ext = append(ext, 0) // host_name
		ext = binary.BigEndian.AppendUint16(ext, uint16(len(name)))
		ext = append(ext, name...)
	}
	ws := make([]string, len(args)-1)
	for i, a := range args[1:] {
		ws[i] = a.String()
	}
	typeArg := func(ws []string) (int64, error) {
		if len(ws) != 2 || ws[0] != "-type" {
			return 0, tcl.WrongArgs("SSL::extensions ?count? ?exists -type TYPE? ?-type TYPE?")
		}
		t, err := strconv.ParseInt(ws[1], 0, 32)
		if err != nil || t < 0 || t > 0xffff {
			return 0, tcl.Errorf("SSL::extensions: bad type %q: expected an integer from 0 to 65535", ws[1])
		}
		if t != 0 && !all {
			return 0, tcl.Errorf("SSL::extensions: extension type %d is not kept; only server_name (-type 0) is", t)
		}
		return t, nil
	}
	// byType is the whole extension of type t (type, length, data).
	byType := func(t int64) []byte {
		for b := ext; len(b) >= 4; {
			l := 4 + int(binary.BigEndian.Uint16(b[2:]))
			if l > len(b) {
				return nil
			}
			if int64(binary.BigEndian.Uint16(b)) == t {
				return b[:l]
			}
			b = b[l:]
		}
		return nil
	}
	switch {
	case len(ws) == 0:
		return tcl.Bytes(ext), nil
	case len(ws) == 1 && ws[0] == "count":
		n := 0
		for b := ext; len(b) >= 4; n++ {
			l := 4 + int(binary.BigEndian.Uint16(b[2:]))
			if l > len(b) {
				break
			}
			b = b[l:]
		}
		return tcl.Int(int64(n)), nil
	case len(ws) >= 1 && ws[0] == "exists":
		t, err := typeArg(ws[1:])
		if err != nil {
			return tcl.Empty, err
		}
		return tcl.Bool(byType(t) != nil), nil
	default:
		t, err := typeArg(ws)
		if err != nil {
			return tcl.Empty, err
		}
		return tcl.Bytes(byType(t)), nil
	}
}

// x509Getter is an X509:: command over a certificate in PEM (SSL::cert's
// result) or DER (certArg).
func x509Getter(name string, fn func(*x509.Certificate) string) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 2 {
			return tcl.Empty, tcl.WrongArgs(name + " certificate")
		}
		c, err := certArg(name, args[1])
		if err != nil {
			return tcl.Empty, err
		}
		return tcl.Str(fn(c)), nil
	}
}

func colonHex(b []byte) string {
	if len(b) == 0 {
		return "00"
	}
	var sb strings.Builder
	for i, x := range b {
		if i > 0 {
			sb.WriteByte(':')
		}
		fmt.Fprintf(&sb, "%02x", x)
	}
	return sb.String()
}

// asn1Time prints a time as OpenSSL's ASN1_TIME_print does, which BIG-IP
// returns: "Jun  2 09:21:23 2027 GMT".
func asn1Time(t time.Time) string { return t.UTC().Format("Jan _2 15:04:05 2006 GMT") }

// whole is the certificate in readable form, as X509::whole gives it: the
// main fields, then the PEM.
func whole(c *x509.Certificate) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "Certificate:\n    Data:\n        Version: %d\n        Serial Number: %s\n", c.Version, colonHex(c.SerialNumber.Bytes()))
	fmt.Fprintf(&sb, "        Signature Algorithm: %s\n        Issuer: %s\n        Validity\n", c.SignatureAlgorithm, c.Issuer)
	fmt.Fprintf(&sb, "            Not Before: %s\n            Not After : %s\n", asn1Time(c.NotBefore), asn1Time(c.NotAfter))
	fmt.Fprintf(&sb, "        Subject: %s\n        Subject Public Key Info:\n            Public Key Algorithm: %s\n", c.Subject, c.PublicKeyAlgorithm)
	if len(c.DNSNames) > 0 {
		fmt.Fprintf(&sb, "        X509v3 Subject Alternative Name:\n            DNS:%s\n", strings.Join(c.DNSNames, ", DNS:"))
	}
	sb.Write(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw}))
	return sb.String()
}

// sslSwitch is SSL::disable or SSL::enable (name): set, on the side the
// event runs on or the one named, through the connection's method do.
func sslSwitch(name string, do func(SSLConn, Side) error) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		s, c, err := sess(in, name)
		if err != nil {
			return tcl.Empty, err
		}
		side := s.side
		switch {
		case len(args) == 2 && args[1].String() == "clientside":
			side = ClientSide
		case len(args) == 2 && args[1].String() == "serverside":
			side = ServerSide
		case len(args) != 1:
			return tcl.Empty, tcl.WrongArgs(name + " ?clientside|serverside?")
		}
		sc, ok := c.(SSLConn)
		if !ok {
			return tcl.Empty, tcl.Errorf("%s: the virtual server has no client-ssl or server-ssl profile", name)
		}
		return tcl.Empty, tclErr(do(sc, side))
	}
}

// SSL::profile PROFILE: the connection's side that PROFILE is for
// (client-ssl or server-ssl) uses it for its handshake.
func cmdSSLProfile(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 2 {
		return tcl.Empty, tcl.WrongArgs("SSL::profile profile")
	}
	_, c, err := sess(in, "SSL::profile")
	if err != nil {
		return tcl.Empty, err
	}
	pc, ok := c.(SSLProfileConn)
	if !ok {
		return tcl.Empty, tcl.Errorf("SSL::profile: the virtual server has no client-ssl or server-ssl profile")
	}
	return tcl.Empty, tclErr(pc.SSLProfile(args[1].String()))
}
