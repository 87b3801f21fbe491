package gslb

import (
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// echVersion is the ECHConfig version of the TLS Encrypted Client Hello
// specification (draft-ietf-tls-esni-18 onwards, RFC 9849): the one
// clients (curl, browsers) read.
const echVersion = 0xfe0d

// ParseECHConfigList reads the ech SvcParam as RFC 9460's presentation
// format gives it, the base64 of an ECHConfigList, and checks its
// structure so that a client is never handed a list it would reject
// whole: the list's length, each ECHConfig's version and length, and of
// the 0xfe0d ones every field (config_id, kem_id, a public key, cipher
// suites of four bytes each, maximum_name_length, a public_name of 1 to
// 255 bytes, extensions). [M] A config of another version is kept (a
// client skips versions it does not know) but the list needs one of
// version 0xfe0d. F5's tmsh documents only an hpke-key for SVCB members;
// openltm takes the ECHConfigList itself, as it goes on the wire, the
// form every ECH server (and `openssl ech`) writes.
func ParseECHConfigList(b64 string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(b64))
	if err != nil {
		return nil, fmt.Errorf("ech %q is not base64 (an ECHConfigList, e.g. AEX+DQBB...)", short(b64))
	}
	if err := checkECHConfigList(b); err != nil {
		return nil, fmt.Errorf("ech %q is not an ECHConfigList: %v", short(b64), err)
	}
	return b, nil
}

func short(s string) string {
	if len(s) > 24 {
		return s[:24] + "..."
	}
	return s
}

// echReader reads the length-prefixed fields of TLS presentation
// language, failing once for the first short field.
type echReader struct {
	b   []byte
	err error
}

func (r *echReader) n(k int, what string) []byte {
	if r.err != nil {
		return nil
	}
	if len(r.b) < k {
		r.err = fmt.Errorf("%s is cut short", what)
		return nil
	}
	x := r.b[:k]
	r.b = r.b[k:]
	return x
}

func (r *echReader) u8(what string) int {
	if x := r.n(1, what); x != nil {
		return int(x[0])
	}
	return 0
}

func (r *echReader) u16(what string) int {
	if x := r.n(2, what); x != nil {
		return int(binary.BigEndian.Uint16(x))
	}
	return 0
}

// vec16 is an opaque<lo..2^16-1> field.
func (r *echReader) vec16(what string, lo int) []byte {
	n := r.u16(what + "'s length")
	x := r.n(n, what)
	if r.err == nil && n < lo {
		r.err = fmt.Errorf("%s is empty", what)
	}
	return x
}

func checkECHConfigList(b []byte) error {
	r := &echReader{b: b}
	list := r.vec16("the list", 1)
	if r.err != nil {
		return r.err
	}
	if len(r.b) != 0 {
		return errors.New("bytes follow the list")
	}
	known := 0
	for c := (&echReader{b: list}); len(c.b) > 0; {
		v := c.u16("an ECHConfig's version")
		body := c.vec16("an ECHConfig", 0)
		if c.err != nil {
			return c.err
		}
		if v != echVersion {
			continue
		}
		if err := checkECHConfigContents(body); err != nil {
			return err
		}
		known++
	}
	if known == 0 {
		return fmt.Errorf("no ECHConfig of version 0x%04x", echVersion)
	}
	return nil
}

func checkECHConfigContents(b []byte) error {
	r := &echReader{b: b}
	r.u8("config_id")
	r.u16("kem_id")
	r.vec16("public_key", 1)
	suites := r.vec16("cipher_suites", 4)
	if r.err == nil && len(suites)%4 != 0 {
		return errors.New("cipher_suites is not a list of (kdf_id, aead_id) pairs")
	}
	r.u8("maximum_name_length")
	n := r.u8("public_name's length")
	name := r.n(n, "public_name")
	if r.err == nil {
		if n == 0 {
			return errors.New("public_name is empty")
		}
		for _, c := range name {
			if c <= ' ' || c >= 0x7f {
				return errors.New("public_name is not a DNS name")
			}
		}
	}
	for e := (&echReader{b: r.vec16("extensions", 0)}); r.err == nil && len(e.b) > 0; {
		e.u16("an extension's type")
		e.vec16("an extension", 0)
		if e.err != nil {
			return e.err
		}
	}
	if r.err != nil {
		return r.err
	}
	if len(r.b) != 0 {
		return errors.New("bytes follow an ECHConfig's contents")
	}
	return nil
}

// CheckDoHPath checks the dohpath SvcParam (RFC 9461 section 5): a
// relative URI Template (RFC 6570) that begins with "/" and has the "dns"
// variable, where a DoH client puts its query ("/dns-query{?dns}").
func CheckDoHPath(t string) error {
	if t == "" {
		return nil
	}
	if !utf8.ValidString(t) || strings.ContainsFunc(t, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return fmt.Errorf("dohpath %q: a URI template has no spaces or control characters", t)
	}
	if !strings.HasPrefix(t, "/") {
		return fmt.Errorf("dohpath %q is not a relative URI template beginning with / (e.g. /dns-query{?dns})", t)
	}
	hasDNS := false
	for rest := t; ; {
		i := strings.IndexAny(rest, "{}")
		if i < 0 {
			break
		}
		if rest[i] == '}' {
			return fmt.Errorf("dohpath %q: a } closes no expression", t)
		}
		j := strings.IndexAny(rest[i+1:], "{}")
		if j < 0 || rest[i+1+j] == '{' {
			return fmt.Errorf("dohpath %q: a { is not closed", t)
		}
		expr := strings.TrimLeft(rest[i+1:i+1+j], "+#./;?&")
		for _, v := range strings.Split(expr, ",") {
			if name, _, _ := strings.Cut(strings.TrimSuffix(v, "*"), ":"); name == "dns" {
				hasDNS = true
			}
		}
		rest = rest[i+1+j+1:]
	}
	if !hasDNS {
		return fmt.Errorf("dohpath %q has no {?dns} variable, where the client puts its query (e.g. /dns-query{?dns})", t)
	}
	return nil
}

// HPKE identifiers (RFC 9180 section 7) of the ECHConfigs openltm builds.
const (
	hpkeKEMP256   = 0x0010 // DHKEM(P-256, HKDF-SHA256)
	hpkeKEMP384   = 0x0011 // DHKEM(P-384, HKDF-SHA384)
	hpkeKEMP521   = 0x0012 // DHKEM(P-521, HKDF-SHA512)
	hpkeKEMX25519 = 0x0020 // DHKEM(X25519, HKDF-SHA256)
	hpkeKDFSHA256 = 0x0001
	hpkeAES128GCM = 0x0001
	hpkeAES256GCM = 0x0002
	hpkeChaCha20  = 0x0003
)

// ParseHPKEKey reads the private key of an hpke-key from its PEM (a
// PKCS#8 "PRIVATE KEY", as `openssl genpkey -algorithm X25519` writes it,
// or an "EC PRIVATE KEY" on P-256, P-384 or P-521) and gives its public
// half, which is all the DNS answer carries: the TLS server behind the
// target holds the same key and decrypts. [M] F5 names an `ltm dns hpke
// key` object whose form it does not document; openltm takes the key
// from a sys file ssl-key.
func ParseHPKEKey(pemBytes []byte) (*ecdh.PublicKey, error) {
	blk, _ := pem.Decode(pemBytes)
	if blk == nil {
		return nil, errors.New("it holds no PEM block")
	}
	if strings.Contains(blk.Headers["Proc-Type"], "ENCRYPTED") || blk.Type == "ENCRYPTED PRIVATE KEY" {
		return nil, errors.New("it is encrypted (an HPKE key is read without a passphrase)")
	}
	var k any
	var err error
	switch blk.Type {
	case "PRIVATE KEY":
		k, err = x509.ParsePKCS8PrivateKey(blk.Bytes)
	case "EC PRIVATE KEY":
		k, err = x509.ParseECPrivateKey(blk.Bytes)
	default:
		return nil, fmt.Errorf("its PEM block is %q, not a private key", blk.Type)
	}
	if err != nil {
		return nil, err
	}
	switch k := k.(type) {
	case *ecdh.PrivateKey:
		if k.Curve() != ecdh.X25519() {
			return nil, errors.New("it is not an X25519, P-256, P-384 or P-521 key")
		}
		return k.PublicKey(), nil
	case *ecdsa.PrivateKey:
		e, err := k.ECDH()
		if err != nil {
			return nil, fmt.Errorf("its curve has no HPKE KEM: %v", err)
		}
		return e.PublicKey(), nil
	default:
		return nil, fmt.Errorf("it is a %T key; HPKE needs an X25519 or NIST P-curve key (openssl genpkey -algorithm X25519)", k)
	}
}

// ECHConfigList builds the ECHConfigList (draft-ietf-tls-esni, version
// 0xfe0d) that announces pub for public_name: one ECHConfig with the
// DHKEM of pub's curve and the cipher suites HKDF-SHA256 with
// AES-128-GCM, AES-256-GCM and ChaCha20-Poly1305 (what every ECH client
// offers), maximum_name_length 0 (not known) and no extensions. The
// config_id is the first byte of the SHA-256 of the public key [M: F5
// does not document how it picks one], so a key keeps its id across
// commits and a new key most likely gets another.
func ECHConfigList(pub *ecdh.PublicKey, publicName string) ([]byte, error) {
	var kem uint16
	switch pub.Curve() {
	case ecdh.X25519():
		kem = hpkeKEMX25519
	case ecdh.P256():
		kem = hpkeKEMP256
	case ecdh.P384():
		kem = hpkeKEMP384
	case ecdh.P521():
		kem = hpkeKEMP521
	default:
		return nil, errors.New("the key's curve has no HPKE KEM")
	}
	name := strings.TrimSuffix(publicName, ".")
	if name == "" || len(name) > 255 || strings.ContainsFunc(name, func(r rune) bool { return r <= ' ' || r >= 0x7f }) {
		return nil, fmt.Errorf("public_name %q is not a DNS name of 1 to 255 bytes", publicName)
	}
	key := pub.Bytes()
	id := sha256.Sum256(key)
	var c []byte
	c = append(c, id[0])
	c = binary.BigEndian.AppendUint16(c, kem)
	c = binary.BigEndian.AppendUint16(c, uint16(len(key)))
	c = append(c, key...)
	suites := []uint16{hpkeKDFSHA256, hpkeAES128GCM, hpkeKDFSHA256, hpkeAES256GCM, hpkeKDFSHA256, hpkeChaCha20}
	c = binary.BigEndian.AppendUint16(c, uint16(2*len(suites)))
	for _, s := range suites {
		c = binary.BigEndian.AppendUint16(c, s)
	}
	c = append(c, 0, byte(len(name)))
	c = append(c, name...)
	c = append(c, 0, 0) // extensions
	cfg := binary.BigEndian.AppendUint16(nil, echVersion)
	cfg = binary.BigEndian.AppendUint16(cfg, uint16(len(c)))
	cfg = append(cfg, c...)
	list := binary.BigEndian.AppendUint16(nil, uint16(len(cfg)))
	list = append(list, cfg...)
	if err := checkECHConfigList(list); err != nil {
		return nil, err
	}
	return list, nil
}
