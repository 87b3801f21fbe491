package daemon

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/openltm/openltm/dataplane/tlsprof"
	"github.com/openltm/openltm/grammar"
	"github.com/openltm/openltm/objects"
)

// Keys made on the device, as BIG-IP users make them: `create sys crypto
// key NAME [key-type rsa-private|ec-private] [key-size N] [curve-name C]
// [gen-certificate common-name CN lifetime DAYS ...]`. The key (and the
// self-signed certificate, under the same name [M]) become sys file
// ssl-key and ssl-cert objects stored in the filestore, as installed ones
// are, in one generation.

// genKeyOpts is a create sys crypto key statement read.
type genKeyOpts struct {
	name       string
	keyType    string // rsa-private, ec-private
	keySize    int
	curve      string
	genCert    bool
	subject    pkix.Name
	email      string
	lifetime   int
	sans       string
	passphrase string
}

// cryptoKeyCommand answers create sys crypto key and list sys crypto key;
// handled is false for everything else.
func (s *Session) cryptoKeyCommand(ctx context.Context, st *grammar.Statement, verb string, args []grammar.Node, w io.Writer) (bool, error) {
	abs := s.moduleFor(headWords(args))
	if !hasPrefix(abs, []string{"sys", "crypto", "key"}) {
		return false, nil
	}
	switch verb {
	case "create":
		o, err := s.readGenKey(st, args)
		if err != nil {
			return true, err
		}
		return true, s.genKey(ctx, st, o, w)
	case "list", "show":
		return true, s.listCryptoKeys(abs[3:], w)
	}
	return false, nil
}

var genKeyUsage = []string{"create sys crypto key NAME [key-type rsa-private|ec-private] [key-size 2048|3072|4096] [curve-name prime256v1|secp384r1|secp521r1] [gen-certificate common-name CN [lifetime DAYS] [country C] [state S] [city L] [organization O] [ou U] [email-address E] [subject-alternative-name \"DNS:a, IP:b\"]] [passphrase P]"}

// readGenKey reads the statement's words after sys crypto key.
func (s *Session) readGenKey(st *grammar.Statement, args []grammar.Node) (*genKeyOpts, error) {
	ws := grammar.Texts(args)
	// Skip the words naming the kind (sys crypto key, or fewer in a module).
	i := 0
	for i < len(ws) && (ws[i] == "sys" || ws[i] == "/sys" || ws[i] == "crypto" || ws[i] == "key") && i < 3 {
		i++
	}
	if i >= len(ws) {
		return nil, synErr(st, genKeyUsage, "create sys crypto key needs a name")
	}
	o := &genKeyOpts{name: objects.FullPath(s.folder, ws[i]), keyType: "rsa-private", keySize: 2048, curve: "prime256v1", lifetime: 365}
	rest := ws[i+1:]
	for j := 0; j < len(rest); j++ {
		w := rest[j]
		if w == "gen-certificate" {
			o.genCert = true
			continue
		}
		if j+1 >= len(rest) {
			return nil, synErr(st, genKeyUsage, "%s needs a value", w)
		}
		v := rest[j+1]
		j++
		switch w {
		case "key-type":
			if v != "rsa-private" && v != "ec-private" {
				return nil, synErr(st, genKeyUsage, "key-type takes rsa-private or ec-private (%q)", v)
			}
			o.keyType = v
		case "key-size":
			n, err := strconv.Atoi(v)
			if err != nil || (n != 2048 && n != 3072 && n != 4096) {
				return nil, synErr(st, genKeyUsage, "key-size takes 2048, 3072 or 4096 (%q)", v)
			}
			o.keySize = n
		case "curve-name":
			if curveOf(v) == nil {
				return nil, synErr(st, genKeyUsage, "curve-name takes prime256v1, secp384r1 or secp521r1 (%q)", v)
			}
			o.curve = v
		case "common-name":
			o.subject.CommonName = v
		case "country":
			if len(v) != 2 {
				return nil, synErr(st, genKeyUsage, "country takes a two-letter code (%q)", v)
			}
			o.subject.Country = []string{v}
		case "state":
			o.subject.Province = []string{v}
		case "city":
			o.subject.Locality = []string{v}
		case "organization":
			o.subject.Organization = []string{v}
		case "ou":
			o.subject.OrganizationalUnit = []string{v}
		case "email-address":
			o.email = v
		case "lifetime":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 36500 {
				return nil, synErr(st, genKeyUsage, "lifetime takes days, 1 to 36500 (%q)", v)
			}
			o.lifetime = n
		case "subject-alternative-name":
			o.sans = v
		case "passphrase":
			o.passphrase = v
		default:
			return nil, synErr(st, genKeyUsage, "%q unknown property", w)
		}
	}
	if o.genCert && o.subject.CommonName == "" {
		return nil, synErr(st, genKeyUsage, "gen-certificate needs a common-name")
	}
	if !o.genCert && (o.subject.CommonName != "" || o.sans != "") {
		return nil, synErr(st, genKeyUsage, "common-name and the other subject properties go with gen-certificate")
	}
	return o, nil
}

func curveOf(name string) elliptic.Curve {
	switch name {
	case "prime256v1":
		return elliptic.P256()
	case "secp384r1":
		return elliptic.P384()
	case "secp521r1":
		return elliptic.P521()
	}
	return nil
}

// parseSANs reads BIG-IP's "DNS:a.example, IP:192.0.2.1" form.
func parseSANs(v string, tmpl *x509.Certificate) error {
	for _, part := range strings.Split(v, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		kind, val, ok := strings.Cut(part, ":")
		if !ok {
			return fmt.Errorf("subject-alternative-name %q: each name is DNS:name or IP:address", part)
		}
		switch strings.ToUpper(strings.TrimSpace(kind)) {
		case "DNS":
			tmpl.DNSNames = append(tmpl.DNSNames, strings.TrimSpace(val))
		case "IP", "IP ADDRESS":
			ip := net.ParseIP(strings.TrimSpace(val))
			if ip == nil {
				return fmt.Errorf("subject-alternative-name %q: not an IP address", part)
			}
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		case "EMAIL":
			tmpl.EmailAddresses = append(tmpl.EmailAddresses, strings.TrimSpace(val))
		default:
			return fmt.Errorf("subject-alternative-name %q: each name is DNS:name, IP:address or email:address", part)
		}
	}
	return nil
}

// genKey makes the key (and certificate), writes them where the import
// reads them from and creates the objects in one change.
func (s *Session) genKey(ctx context.Context, st *grammar.Statement, o *genKeyOpts, w io.Writer) error {
	cfg := s.e.Config()
	if cfg.Get(sysSSLKey, o.name) != nil {
		return &objects.ConfigError{Code: "01020066", Msg: fmt.Sprintf("The requested key (%s) already exists.", o.name)}
	}
	if o.genCert && cfg.Get(sysSSLCert, o.name) != nil {
		return &objects.ConfigError{Code: "01020066", Msg: fmt.Sprintf("The requested certificate (%s) already exists.", o.name)}
	}
	var signer crypto.Signer
	var keyDER []byte
	var keyType string
	switch o.keyType {
	case "ec-private":
		k, err := ecdsa.GenerateKey(curveOf(o.curve), rand.Reader)
		if err != nil {
			return err
		}
		der, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			return err
		}
		signer, keyDER, keyType = k, der, "EC PRIVATE KEY"
	default:
		k, err := rsa.GenerateKey(rand.Reader, o.keySize)
		if err != nil {
			return err
		}
		signer, keyDER, keyType = k, x509.MarshalPKCS1PrivateKey(k), "RSA PRIVATE KEY"
	}
	block := &pem.Block{Type: keyType, Bytes: keyDER}
	if o.passphrase != "" {
		//lint:ignore SA1019 BIG-IP's keys with a pass phrase are legacy PEM-encrypted keys, which is what tlsprof reads.
		enc, err := x509.EncryptPEMBlock(rand.Reader, keyType, keyDER, []byte(o.passphrase), x509.PEMCipherAES256)
		if err != nil {
			return err
		}
		block = enc
	}
	dir, err := os.MkdirTemp(s.e.StateDir(), ".gen-key-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	keyPath := filepath.Join(dir, "key.pem")
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(block), 0o600); err != nil {
		return err
	}
	lines := []string{fmt.Sprintf("create sys file ssl-key %s source-path %s", grammar.Quote(o.name), grammar.Quote("file:"+keyPath))}
	if o.passphrase != "" {
		lines[0] += " passphrase " + grammar.Quote(o.passphrase)
	}
	if o.genCert {
		serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 63))
		if err != nil {
			return err
		}
		now := time.Now()
		subj := o.subject
		if o.email != "" {
			subj.ExtraNames = append(subj.ExtraNames, pkix.AttributeTypeAndValue{Type: []int{1, 2, 840, 113549, 1, 9, 1}, Value: o.email})
		}
		tmpl := &x509.Certificate{SerialNumber: serial, Subject: subj,
			NotBefore: now.Add(-5 * time.Minute), NotAfter: now.AddDate(0, 0, o.lifetime),
			KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true}
		if err := parseSANs(o.sans, tmpl); err != nil {
			return synErr(st, genKeyUsage, "%v", err)
		}
		if len(tmpl.DNSNames) == 0 && len(tmpl.IPAddresses) == 0 && net.ParseIP(subj.CommonName) == nil {
			tmpl.DNSNames = []string{subj.CommonName} // clients check the name there, not in the CN
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, signer.Public(), signer)
		if err != nil {
			return err
		}
		certPath := filepath.Join(dir, "cert.pem")
		if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
			return err
		}
		lines = append(lines, fmt.Sprintf("create sys file ssl-cert %s source-path %s", grammar.Quote(o.name), grammar.Quote("file:"+certPath)))
	}
	s.warnings = s.warnings[:0]
	opts := CommitOptions{Warn: func(m string) { s.warnings = append(s.warnings, m) }}
	gen, err := s.e.Change(ctx, s.user, st.Source, opts, func(cfg *objects.Config) error {
		for _, l := range lines {
			cst, err := parse(l, nil)
			if err != nil {
				return err
			}
			if err := s.change(cst, "create", cst.Items[1:], cfg); err != nil {
				return err
			}
		}
		// Made here, the files have no source: the stored copy is all.
		for _, k := range []*objects.Kind{sysSSLKey, sysSSLCert} {
			if c := cfg.Get(k, o.name); c != nil && c.Get(sslSourcePath.Name) != nil {
				c = c.Clone()
				delete(c.Props, sslSourcePath.Name)
				cfg.Put(c)
			}
		}
		return nil
	})
	s.committed = gen
	return err
}

// listCryptoKeys is list sys crypto key [NAME...]: each key's type and
// size, read from its stored file.
func (s *Session) listCryptoKeys(names []string, w io.Writer) error {
	cfg := s.e.Config()
	t := &translator{s: s.e.schema, cfg: s.e.reveal(cfg)[0], rules: &ruleBinder{e: s.e}}
	objs, err := s.named(t.cfg.Of(sysSSLKey), names, "key")
	if err != nil {
		return err
	}
	for _, o := range objs {
		fmt.Fprintf(w, "sys crypto key %s {\n", objects.RelPath(s.folder, o.Name))
		path, err := t.sslFilePath(o)
		if err == nil {
			var k *keyFacts
			if k, err = readKeyFacts(path, noneEmpty(sslKeyPassphrase.Str(o))); err == nil {
				fmt.Fprintf(w, "    key-size %d\n    key-type %s\n", k.size, k.typ)
			}
		}
		if err != nil {
			fmt.Fprintf(w, "    # not readable: %v\n", err)
		}
		fmt.Fprintln(w, "    security-type normal\n}")
	}
	return nil
}

type keyFacts struct {
	typ  string
	size int
}

func readKeyFacts(path, passphrase string) (*keyFacts, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	k, err := tlsprofParseKey(path, data, passphrase)
	if err != nil {
		return nil, err
	}
	switch p := k.Public().(type) {
	case *rsa.PublicKey:
		return &keyFacts{"rsa-private", p.N.BitLen()}, nil
	case *ecdsa.PublicKey:
		return &keyFacts{"ec-private", p.Curve.Params().BitSize}, nil
	}
	return &keyFacts{"unknown", 0}, nil
}

// tlsprofParseKey reads a PEM key as the TLS profiles do.
func tlsprofParseKey(name string, data []byte, passphrase string) (crypto.Signer, error) {
	k, err := tlsprof.ParseKey(name, data, passphrase)
	if err != nil {
		return nil, err
	}
	return k.Signer, nil
}
