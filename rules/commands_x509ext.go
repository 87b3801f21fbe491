package rules

import (
	//lint:ignore SA1019 DSA keys still appear in old client certificates
	"crypto/dsa"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/md5"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/openltm/openltm/rules/tcl"
)

func registerX509Ext(t *tcl.Commands) {
	t.Register("X509::cert_fields", cmdX509CertFields)
	t.Register("X509::extensions", x509Getter("X509::extensions", x509Extensions))
	t.Register("X509::pem2der", cmdX509Pem2der)
	t.Register("X509::subject_public_key", cmdX509SubjectPublicKey)
	t.Register("X509::subject_public_key_type", x509Getter("X509::subject_public_key_type", func(c *x509.Certificate) string {
		typ, _, _ := publicKeyFacts(c)
		return typ
	}))
	t.Register("X509::subject_public_key_RSA_bits", cmdX509RSABits)
	t.Register("X509::verify_cert_error_string", cmdX509VerifyString)
}

// certArg reads a certificate as the X509:: commands take it: the PEM
// text SSL::cert gives, or DER (X509::pem2der's result).
func certArg(name string, v tcl.Value) (*x509.Certificate, error) {
	s := v.String()
	var der []byte
	if strings.Contains(s, "-----BEGIN") {
		b, _ := pem.Decode([]byte(s))
		if b == nil || b.Type != "CERTIFICATE" {
			return nil, tcl.Errorf("%s: the argument is not a certificate (use [SSL::cert 0])", name)
		}
		der = b.Bytes
	} else {
		der = tcl.BytesOf(v)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, tcl.Errorf("%s: the argument is not a certificate: %v", name, err)
	}
	return c, nil
}

// cmdX509Pem2der is X509::pem2der CERT: the certificate's DER bytes, as
// rules hand certificates to commands that take binary (SSL::c3d cert).
func cmdX509Pem2der(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 2 {
		return tcl.Empty, tcl.WrongArgs("X509::pem2der cert_in_pem")
	}
	c, err := certArg("X509::pem2der", args[1])
	if err != nil {
		return tcl.Empty, err
	}
	return tcl.Bytes(c.Raw), nil
}

// publicKeyFacts is the subject key's type (RSA, DSA, EC, or unknown as
// F5 names what it does not know), its size in bits as OpenSSL counts
// them (EVP_PKEY_bits: 253 for Ed25519), and an EC key's curve by
// OpenSSL's name.
func publicKeyFacts(c *x509.Certificate) (typ string, bits int, curve string) {
	switch k := c.PublicKey.(type) {
	case *rsa.PublicKey:
		return "RSA", k.N.BitLen(), ""
	case *dsa.PublicKey:
		return "DSA", k.P.BitLen(), ""
	case *ecdsa.PublicKey:
		p := k.Curve.Params()
		return "EC", p.BitSize, opensslCurve[p.Name]
	case ed25519.PublicKey:
		return "unknown", 253, ""
	}
	return "unknown", 0, ""
}

var opensslCurve = map[string]string{"P-224": "secp224r1", "P-256": "prime256v1", "P-384": "secp384r1", "P-521": "secp521r1"}

// cmdX509SubjectPublicKey is X509::subject_public_key ?type|bits|curve_name?
// CERT: the subject key's type, size in bits or EC curve (empty for a key
// that is not EC); without a word, "TYPE BITS" as X509::cert_fields'
// subpubkey gives it ("RSA 2048") [M].
func cmdX509SubjectPublicKey(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const usage = "X509::subject_public_key ?type|bits|curve_name? certificate"
	if len(args) != 2 && len(args) != 3 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	c, err := certArg("X509::subject_public_key", args[len(args)-1])
	if err != nil {
		return tcl.Empty, err
	}
	typ, bits, curve := publicKeyFacts(c)
	if len(args) == 2 {
		return tcl.Str(typ + " " + strconv.Itoa(bits)), nil
	}
	switch args[1].String() {
	case "type":
		return tcl.Str(typ), nil
	case "bits":
		return tcl.Int(int64(bits)), nil
	case "curve_name":
		return tcl.Str(curve), nil
	}
	return tcl.Empty, tcl.WrongArgs(usage)
}

// cmdX509RSABits is X509::subject_public_key_RSA_bits CERT: an RSA key's
// modulus size; any other key is a Tcl error, as F5's page says.
func cmdX509RSABits(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const name = "X509::subject_public_key_RSA_bits"
	if len(args) != 2 {
		return tcl.Empty, tcl.WrongArgs(name + " certificate")
	}
	c, err := certArg(name, args[1])
	if err != nil {
		return tcl.Empty, err
	}
	k, ok := c.PublicKey.(*rsa.PublicKey)
	if !ok {
		return tcl.Empty, tcl.Errorf("%s: the certificate's key is not RSA", name)
	}
	return tcl.Int(int64(k.N.BitLen())), nil
}

// verifyErrors are OpenSSL's X509_verify_cert_error_string texts for the
// X509_V_ERR codes SSL::verify_result returns. 18 and 19 are spelled as
// F5's SSL::verify_result page and BIG-IP's OpenSSL 1.x spell them
// ("self signed"); OpenSSL 3 writes "self-signed".
var verifyErrors = [...]string{
	"ok", "unspecified certificate verification error", "unable to get issuer certificate",
	"unable to get certificate CRL", "unable to decrypt certificate's signature",
	"unable to decrypt CRL's signature", "unable to decode issuer public key",
	"certificate signature failure", "CRL signature failure", "certificate is not yet valid",
	"certificate has expired", "CRL is not yet valid", "CRL has expired",
	"format error in certificate's notBefore field", "format error in certificate's notAfter field",
	"format error in CRL's lastUpdate field", "format error in CRL's nextUpdate field",
	"out of memory", "self signed certificate", "self signed certificate in certificate chain",
	"unable to get local issuer certificate", "unable to verify the first certificate",
	"certificate chain too long", "certificate revoked", "issuer certificate doesn't have a public key",
	"path length constraint exceeded", "unsuitable certificate purpose", "certificate not trusted",
	"certificate rejected", "subject issuer mismatch", "authority and subject key identifier mismatch",
	"authority and issuer serial number mismatch", "key usage does not include certificate signing",
	"unable to get CRL issuer certificate", "unhandled critical extension",
	"key usage does not include CRL signing", "unhandled critical CRL extension",
	"invalid non-CA certificate (has CA markings)", "proxy path length constraint exceeded",
	"key usage does not include digital signature",
	"proxy certificates not allowed, please set the appropriate flag",
	"invalid or inconsistent certificate extension", "invalid or inconsistent certificate policy extension",
	"no explicit policy", "different CRL scope", "unsupported extension feature",
	"RFC 3779 resource not subset of parent's resources", "permitted subtree violation",
	"excluded subtree violation", "name constraints minimum and maximum not supported",
	"application verification failure", "unsupported name constraint type",
	"unsupported or invalid name constraint syntax", "unsupported or invalid name syntax",
	"CRL path validation error", "path loop", "Suite B: certificate version invalid",
	"Suite B: invalid public key algorithm", "Suite B: invalid ECC curve",
	"Suite B: invalid signature algorithm", "Suite B: curve not allowed for this LOS",
	"Suite B: cannot sign P-384 with P-256", "hostname mismatch", "email address mismatch",
	"IP address mismatch", "no matching DANE TLSA records", "EE certificate key too weak",
	"CA certificate key too weak", "CA signature digest algorithm too weak",
	"invalid certificate verification context", "issuer certificate lookup error",
	"Certificate Transparency required, but no valid SCTs found", "proxy subject name violation",
	"OCSP verification needed", "OCSP verification failed", "OCSP unknown cert",
	"Cannot find certificate signature algorithm",
	"subject signature algorithm and issuer public key algorithm mismatch",
	"cert info signature and signature algorithm mismatch", "invalid CA certificate",
	"Path length invalid for non-CA cert", "Path length given without key usage keyCertSign",
	"Key usage keyCertSign invalid for non-CA cert", "Issuer name empty", "Subject name empty",
	"Missing Authority Key Identifier", "Missing Subject Key Identifier",
	"Empty Subject Alternative Name extension", "Subject empty and Subject Alt Name extension not critical",
	"Basic Constraints of CA cert not marked critical", "Authority Key Identifier marked critical",
	"Subject Key Identifier marked critical", "CA cert does not include key usage extension",
	"Using cert extension requires at least X509v3", "Certificate public key has explicit ECC parameters",
}

func verifyErrorString(code int64) string {
	if code >= 0 && code < int64(len(verifyErrors)) {
		return verifyErrors[code]
	}
	return "unknown certificate verification error"
}

// cmdX509VerifyString is X509::verify_cert_error_string CODE: OpenSSL's
// text for an SSL::verify_result code, for logs and headers.
func cmdX509VerifyString(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 2 {
		return tcl.Empty, tcl.WrongArgs("X509::verify_cert_error_string error_code")
	}
	n, err := args[1].Int64()
	if err != nil {
		return tcl.Empty, err
	}
	return tcl.Str(verifyErrorString(n)), nil
}

// certFieldOrder is X509::cert_fields' options in the order of their
// headers, which is the order of F5's list (and of BIG-IP's output).
var certFieldOrder = []string{"hash", "issuer", "serial", "sigalg", "subject", "subpubkey", "validity", "versionnum", "whole"}

// cmdX509CertFields is X509::cert_fields CERT VERIFY_CODE ?OPTIONS?: the
// mod_ssl-style header names and values BIG-IP inserts for a client
// certificate, for `HTTP::header insert [X509::cert_fields ...]`:
// SSLClientCertStatus (OK for code 0, else OpenSSL's text for it [M];
// NoClientCert for an empty certificate), then for each option, in
// F5's order: SSLClientCertHash (the MD5 fingerprint, as BIG-IP's
// output shows it), SSLClientCertIssuer and SSLClientCertSubject (in
// OpenSSL's one-line form, "C=US, O=Ex, CN=www"), SSLClientCertSerialNumber,
// SSLClientCertSignatureAlgorithm (OpenSSL's name), SSLClientCertSubjectPublicKey
// ("RSA 2048"), SSLClientCertNotValidBefore and SSLClientCertNotValidAfter,
// SSLClientCertVersion and SSLClientCert (the PEM). The options come as
// words or as one list.
func cmdX509CertFields(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const name = "X509::cert_fields"
	if len(args) < 3 {
		return tcl.Empty, tcl.WrongArgs(name + " certificate verify_error_code ?options?")
	}
	code, err := args[2].Int64()
	if err != nil {
		return tcl.Empty, err
	}
	want := map[string]bool{}
	for _, a := range args[3:] {
		ws, err := tcl.AsList(a)
		if err != nil {
			return tcl.Empty, err
		}
		for _, w := range ws {
			o := w.String()
			if !contains(certFieldOrder, o) {
				return tcl.Empty, tcl.Errorf("%s: bad option %q: must be %s", name, o, strings.Join(certFieldOrder, ", "))
			}
			want[o] = true
		}
	}
	if strings.TrimSpace(args[1].String()) == "" {
		return tcl.List(tcl.Str("SSLClientCertStatus"), tcl.Str("NoClientCert")), nil
	}
	c, err := certArg(name, args[1])
	if err != nil {
		return tcl.Empty, err
	}
	status := "OK"
	if code != 0 {
		status = verifyErrorString(code)
	}
	out := []tcl.Value{tcl.Str("SSLClientCertStatus"), tcl.Str(status)}
	add := func(k, v string) { out = append(out, tcl.Str(k), tcl.Str(v)) }
	for _, o := range certFieldOrder {
		if !want[o] {
			continue
		}
		switch o {
		case "hash":
			h := md5.Sum(c.Raw)
			add("SSLClientCertHash", colonHex(h[:]))
		case "issuer":
			add("SSLClientCertIssuer", onelineName(c.RawIssuer))
		case "serial":
			add("SSLClientCertSerialNumber", colonHex(c.SerialNumber.Bytes()))
		case "sigalg":
			add("SSLClientCertSignatureAlgorithm", signatureAlgorithmName(c))
		case "subject":
			add("SSLClientCertSubject", onelineName(c.RawSubject))
		case "subpubkey":
			typ, bits, _ := publicKeyFacts(c)
			add("SSLClientCertSubjectPublicKey", typ+" "+strconv.Itoa(bits))
		case "validity":
			add("SSLClientCertNotValidBefore", asn1Time(c.NotBefore))
			add("SSLClientCertNotValidAfter", asn1Time(c.NotAfter))
		case "versionnum":
			add("SSLClientCertVersion", strconv.Itoa(c.Version))
		case "whole":
			add("SSLClientCert", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})))
		}
	}
	return tcl.List(out...), nil
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// oidNames are OpenSSL's short names of distinguished-name attributes
// and long names of objects the extension text names.
var oidNames = map[string]string{
	"2.5.4.3": "CN", "2.5.4.4": "SN", "2.5.4.5": "serialNumber", "2.5.4.6": "C", "2.5.4.7": "L",
	"2.5.4.8": "ST", "2.5.4.9": "street", "2.5.4.10": "O", "2.5.4.11": "OU", "2.5.4.12": "title",
	"2.5.4.17": "postalCode", "2.5.4.15": "businessCategory", "2.5.4.42": "GN", "2.5.4.43": "initials",
	"2.5.4.44": "generationQualifier", "2.5.4.46": "dnQualifier", "2.5.4.65": "pseudonym",
	"2.5.4.97": "organizationIdentifier", "1.2.840.113549.1.9.1": "emailAddress",
	"0.9.2342.19200300.100.1.25": "DC", "0.9.2342.19200300.100.1.1": "UID",
	"1.3.6.1.4.1.311.60.2.1.3": "jurisdictionC", "1.3.6.1.4.1.311.60.2.1.2": "jurisdictionST",
	"1.3.6.1.4.1.311.60.2.1.1": "jurisdictionL",
}

// onelineName prints a distinguished name as BIG-IP does, which is
// OpenSSL's X509_NAME_print_ex one-line form without spaces around "="
// (`openssl x509 -nameopt oneline,-space_eq`): RDNs in certificate order
// joined by ", ", a multi-valued RDN's parts by " + ", short names, a
// value holding , + " \ < > ; or edge spaces in double quotes, control
// and non-ASCII bytes as \XX.
func onelineName(raw []byte) string {
	var rdns pkix.RDNSequence
	if _, err := asn1.Unmarshal(raw, &rdns); err != nil {
		return ""
	}
	var sb strings.Builder
	for i, rdn := range rdns {
		if i > 0 {
			sb.WriteString(", ")
		}
		for j, atv := range rdn {
			if j > 0 {
				sb.WriteString(" + ")
			}
			oid := atv.Type.String()
			if n, ok := oidNames[oid]; ok {
				sb.WriteString(n)
			} else {
				sb.WriteString(oid)
			}
			sb.WriteByte('=')
			sb.WriteString(quoteNameValue(fmt.Sprint(atv.Value)))
		}
	}
	return sb.String()
}

func quoteNameValue(v string) string {
	quote := v != "" && (v[0] == ' ' || v[0] == '#' || v[len(v)-1] == ' ') || strings.ContainsAny(v, ",+\"\\<>;")
	var sb strings.Builder
	if quote {
		sb.WriteByte('"')
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '"' || c == '\\':
			sb.WriteByte('\\')
			sb.WriteByte(c)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&sb, "\\%02X", c)
		default:
			sb.WriteByte(c)
		}
	}
	if quote {
		sb.WriteByte('"')
	}
	return sb.String()
}

// sigAlgNames are OpenSSL's names of signature algorithms, by OID.
var sigAlgNames = map[string]string{
	"1.2.840.113549.1.1.4": "md5WithRSAEncryption", "1.2.840.113549.1.1.5": "sha1WithRSAEncryption",
	"1.2.840.113549.1.1.14": "sha224WithRSAEncryption", "1.2.840.113549.1.1.11": "sha256WithRSAEncryption",
	"1.2.840.113549.1.1.12": "sha384WithRSAEncryption", "1.2.840.113549.1.1.13": "sha512WithRSAEncryption",
	"1.2.840.113549.1.1.10": "rsassaPss", "1.2.840.10045.4.1": "ecdsa-with-SHA1",
	"1.2.840.10045.4.3.1": "ecdsa-with-SHA224", "1.2.840.10045.4.3.2": "ecdsa-with-SHA256",
	"1.2.840.10045.4.3.3": "ecdsa-with-SHA384", "1.2.840.10045.4.3.4": "ecdsa-with-SHA512",
	"1.2.840.10040.4.3": "dsaWithSHA1", "2.16.840.1.101.3.4.3.1": "dsa_with_SHA224",
	"2.16.840.1.101.3.4.3.2": "dsa_with_SHA256", "1.3.101.112": "ED25519", "1.3.101.113": "ED448",
}

// signatureAlgorithmName is the certificate's signature algorithm as
// OpenSSL names it (sha256WithRSAEncryption), read from the DER.
func signatureAlgorithmName(c *x509.Certificate) string {
	var outer struct {
		TBS    asn1.RawValue
		SigAlg pkix.AlgorithmIdentifier
		Sig    asn1.BitString
	}
	if _, err := asn1.Unmarshal(c.Raw, &outer); err != nil {
		return c.SignatureAlgorithm.String()
	}
	oid := outer.SigAlg.Algorithm.String()
	if n, ok := sigAlgNames[oid]; ok {
		return n
	}
	return oid
}

// extNames are OpenSSL's long names of the extensions it prints.
var extNames = map[string]string{
	"2.5.29.19": "X509v3 Basic Constraints", "2.5.29.15": "X509v3 Key Usage",
	"2.5.29.37": "X509v3 Extended Key Usage", "2.5.29.14": "X509v3 Subject Key Identifier",
	"2.5.29.35": "X509v3 Authority Key Identifier", "2.5.29.17": "X509v3 Subject Alternative Name",
	"2.5.29.18": "X509v3 Issuer Alternative Name", "2.5.29.31": "X509v3 CRL Distribution Points",
	"1.3.6.1.5.5.7.1.1": "Authority Information Access", "2.5.29.32": "X509v3 Certificate Policies",
	"2.5.29.30": "X509v3 Name Constraints",
}

var keyUsageNames = []string{"Digital Signature", "Non Repudiation", "Key Encipherment", "Data Encipherment",
	"Key Agreement", "Certificate Sign", "CRL Sign", "Encipher Only", "Decipher Only"}

var ekuNames = map[string]string{
	"1.3.6.1.5.5.7.3.1": "TLS Web Server Authentication", "1.3.6.1.5.5.7.3.2": "TLS Web Client Authentication",
	"1.3.6.1.5.5.7.3.3": "Code Signing", "1.3.6.1.5.5.7.3.4": "E-mail Protection",
	"1.3.6.1.5.5.7.3.8": "Time Stamping", "1.3.6.1.5.5.7.3.9": "OCSP Signing", "2.5.29.37.0": "Any Extended Key Usage",
	"1.3.6.1.5.5.7.3.5": "IPSec End System", "1.3.6.1.5.5.7.3.6": "IPSec Tunnel", "1.3.6.1.5.5.7.3.7": "IPSec User",
}

// x509Extensions is X509::extensions: the certificate's extensions as
// OpenSSL's text form prints them (`openssl x509 -text`, from its
// "X509v3 extensions:" line, with its indentation), which rules match
// with globs such as "*X509v3 Basic*". An extension OpenSSL would not
// decode either is its name or OID and its bytes, unprintable ones as
// dots, as OpenSSL shows it; empty for a certificate without extensions.
func x509Extensions(c *x509.Certificate) string {
	if len(c.Extensions) == 0 {
		return ""
	}
	var sb strings.Builder
	sb.WriteString("        X509v3 extensions:\n")
	const in = "                "
	for _, e := range c.Extensions {
		oid := e.Id.String()
		name, known := extNames[oid]
		if !known {
			name = oid
		}
		crit := ""
		if e.Critical {
			crit = "critical"
		}
		fmt.Fprintf(&sb, "            %s: %s\n", name, crit)
		text, ok := extText(oid, e.Value)
		if !ok {
			sb.WriteString(in)
			for _, b := range e.Value {
				if b > '~' || b < ' ' && b != '\n' && b != '\r' {
					b = '.'
				}
				sb.WriteByte(b)
			}
			sb.WriteByte('\n')
			continue
		}
		for _, line := range text {
			sb.WriteString(in + line + "\n")
		}
	}
	return sb.String()
}

// extText decodes the extensions OpenSSL decodes, as lines below the
// name; ok is false for one it would show as bytes.
func extText(oid string, v []byte) (lines []string, ok bool) {
	switch oid {
	case "2.5.29.19":
		var bc struct {
			IsCA       bool `asn1:"optional"`
			MaxPathLen int  `asn1:"optional,default:-1"`
		}
		if _, err := asn1.Unmarshal(v, &bc); err != nil {
			return nil, false
		}
		s := "CA:FALSE"
		if bc.IsCA {
			s = "CA:TRUE"
		}
		if bc.MaxPathLen >= 0 {
			s += ", pathlen:" + strconv.Itoa(bc.MaxPathLen)
		}
		return []string{s}, true
	case "2.5.29.15":
		var bs asn1.BitString
		if _, err := asn1.Unmarshal(v, &bs); err != nil {
			return nil, false
		}
		var ks []string
		for i, n := range keyUsageNames {
			if bs.At(i) != 0 {
				ks = append(ks, n)
			}
		}
		return []string{strings.Join(ks, ", ")}, true
	case "2.5.29.37":
		var oids []asn1.ObjectIdentifier
		if _, err := asn1.Unmarshal(v, &oids); err != nil {
			return nil, false
		}
		ns := make([]string, len(oids))
		for i, o := range oids {
			if n, ok := ekuNames[o.String()]; ok {
				ns[i] = n
			} else {
				ns[i] = o.String()
			}
		}
		return []string{strings.Join(ns, ", ")}, true
	case "2.5.29.14":
		var id []byte
		if _, err := asn1.Unmarshal(v, &id); err != nil {
			return nil, false
		}
		return []string{upperColonHex(id)}, true
	case "2.5.29.35":
		var aki struct {
			ID     []byte        `asn1:"optional,tag:0"`
			Issuer asn1.RawValue `asn1:"optional,tag:1"`
			Serial asn1.RawValue `asn1:"optional,tag:2"`
		}
		if _, err := asn1.Unmarshal(v, &aki); err != nil || aki.Issuer.FullBytes != nil || aki.Serial.FullBytes != nil {
			return nil, false
		}
		return []string{upperColonHex(aki.ID)}, true
	case "2.5.29.17", "2.5.29.18":
		var seq asn1.RawValue
		if _, err := asn1.Unmarshal(v, &seq); err != nil {
			return nil, false
		}
		names, ok := generalNames(seq.Bytes)
		return []string{strings.Join(names, ", ")}, ok
	case "1.3.6.1.5.5.7.1.1":
		var ads []struct {
			Method   asn1.ObjectIdentifier
			Location asn1.RawValue
		}
		if _, err := asn1.Unmarshal(v, &ads); err != nil {
			return nil, false
		}
		for _, ad := range ads {
			m := ad.Method.String()
			switch m {
			case "1.3.6.1.5.5.7.48.1":
				m = "OCSP"
			case "1.3.6.1.5.5.7.48.2":
				m = "CA Issuers"
			}
			n, ok := generalNames(ad.Location.FullBytes)
			if !ok || len(n) != 1 {
				return nil, false
			}
			lines = append(lines, m+" - "+n[0])
		}
		return lines, true
	case "2.5.29.31":
		var dps []struct {
			Name asn1.RawValue `asn1:"optional,tag:0"`
			Rest asn1.RawValue `asn1:"optional"`
		}
		if _, err := asn1.Unmarshal(v, &dps); err != nil {
			return nil, false
		}
		for i, dp := range dps {
			// Only a full name (DistributionPointName's [0]), the form
			// certificates use.
			if dp.Rest.FullBytes != nil || len(dp.Name.Bytes) == 0 {
				return nil, false
			}
			var full asn1.RawValue
			if _, err := asn1.Unmarshal(dp.Name.Bytes, &full); err != nil || full.Tag != 0 || full.Class != asn1.ClassContextSpecific {
				return nil, false
			}
			names, ok := generalNames(full.Bytes)
			if !ok {
				return nil, false
			}
			if i > 0 {
				lines = append(lines, "")
			}
			lines = append(lines, "Full Name:")
			for _, n := range names {
				lines = append(lines, "  "+n)
			}
		}
		return lines, true
	case "2.5.29.30":
		var nc struct {
			Permitted asn1.RawValue `asn1:"optional,tag:0"`
			Excluded  asn1.RawValue `asn1:"optional,tag:1"`
		}
		if _, err := asn1.Unmarshal(v, &nc); err != nil {
			return nil, false
		}
		for _, part := range []struct {
			title string
			raw   asn1.RawValue
		}{{"Permitted:", nc.Permitted}, {"Excluded:", nc.Excluded}} {
			if part.raw.FullBytes == nil {
				continue
			}
			lines = append(lines, part.title)
			rest := part.raw.Bytes
			for len(rest) > 0 {
				var sub struct {
					Base asn1.RawValue
					Min  int `asn1:"optional,tag:0"`
					Max  int `asn1:"optional,tag:1"`
				}
				var err error
				if rest, err = asn1.Unmarshal(rest, &sub); err != nil {
					return nil, false
				}
				n, ok := generalNameConstraint(sub.Base)
				if !ok {
					return nil, false
				}
				lines = append(lines, "  "+n)
			}
		}
		return lines, true
	}
	return nil, false
}

// generalNames prints a sequence's GeneralNames as OpenSSL does
// (DNS:, email:, URI:, IP Address:).
func generalNames(b []byte) ([]string, bool) {
	var out []string
	for len(b) > 0 {
		var gn asn1.RawValue
		var err error
		if b, err = asn1.Unmarshal(b, &gn); err != nil || gn.Class != asn1.ClassContextSpecific {
			return nil, false
		}
		switch gn.Tag {
		case 1:
			out = append(out, "email:"+string(gn.Bytes))
		case 2:
			out = append(out, "DNS:"+string(gn.Bytes))
		case 6:
			out = append(out, "URI:"+string(gn.Bytes))
		case 7:
			ip, ok := opensslIP(gn.Bytes)
			if !ok {
				return nil, false
			}
			out = append(out, "IP Address:"+ip)
		default:
			return nil, false
		}
	}
	return out, true
}

// generalNameConstraint is one name constraint's base, as OpenSSL
// prints it (an address range as IP:ADDR/MASK).
func generalNameConstraint(gn asn1.RawValue) (string, bool) {
	if gn.Class == asn1.ClassContextSpecific && gn.Tag == 7 {
		n := len(gn.Bytes) / 2
		if n != 4 && n != 16 {
			return "", false
		}
		a, _ := opensslIP(gn.Bytes[:n])
		m, _ := opensslIP(gn.Bytes[n:])
		return "IP:" + a + "/" + m, true
	}
	n, ok := generalNames(gn.FullBytes)
	if !ok || len(n) != 1 {
		return "", false
	}
	return n[0], true
}

// opensslIP prints an address as OpenSSL does: dotted IPv4, IPv6 as eight
// uncompressed groups in capitals.
func opensslIP(b []byte) (string, bool) {
	switch len(b) {
	case 4:
		return net.IP(b).String(), true
	case 16:
		gs := make([]string, 8)
		for i := range gs {
			gs[i] = strconv.FormatUint(uint64(b[2*i])<<8|uint64(b[2*i+1]), 16)
		}
		return strings.ToUpper(strings.Join(gs, ":")), true
	}
	return "", false
}

func upperColonHex(b []byte) string {
	return strings.ToUpper(colonHex(b))
}
