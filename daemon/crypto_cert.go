package daemon

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/openltm/openltm/grammar"
	"github.com/openltm/openltm/objects"
)

// The certificate questions operators script (`list sys crypto cert`:
// subject, key size, expiry of every certificate; `run sys crypto
// check-cert`: which have expired or expire soon). BIG-IP's sys crypto
// cert objects are the sys file ssl-cert objects seen through their
// content; openltm reads the stored PEM of each.

// checkCertDays is how far ahead check-cert warns by default [M].
const checkCertDays = 30

// cryptoCertCommand answers list sys crypto cert [NAME] and run sys
// crypto check-cert; handled is false for everything else.
func (s *Session) cryptoCertCommand(st *grammar.Statement, verb string, args []grammar.Node, w io.Writer) (bool, error) {
	abs := s.moduleFor(headWords(args))
	switch {
	case (verb == "list" || verb == "show") && hasPrefix(abs, []string{"sys", "crypto", "cert"}):
		return true, s.listCryptoCerts(st, abs[3:], w)
	case verb == "run" && hasPrefix(abs, []string{"sys", "crypto", "check-cert"}):
		return true, s.checkCerts(st, abs[3:], w, time.Now())
	}
	return false, nil
}

// certInfo is one certificate file read for these commands.
type certInfo struct {
	name string
	cert *x509.Certificate
	err  error
}

// certs reads the certificates of the sys file ssl-cert objects (the
// first certificate of each file: a bundle's others are its chain), by
// name; names narrows them.
func (s *Session) certs(names []string) ([]certInfo, error) {
	cfg := s.e.Config()
	t := &translator{s: s.e.schema, cfg: cfg, rules: &ruleBinder{e: s.e}}
	objs, err := s.named(cfg.Of(sysSSLCert), names, "certificate")
	if err != nil {
		return nil, err
	}
	var out []certInfo
	for _, o := range objs {
		ci := certInfo{name: o.Name}
		path, err := t.sslFilePath(o)
		if err == nil {
			ci.cert, err = firstCert(path)
		}
		ci.err = err
		out = append(out, ci)
	}
	return out, nil
}

// named narrows objs to the ones names name (all of them when names is
// empty), refusing a name none is, as BIG-IP does ("The requested what
// (NAME) was not found.").
func (s *Session) named(objs []*objects.Object, names []string, what string) ([]*objects.Object, error) {
	if len(names) == 0 {
		return objs, nil
	}
	want := map[string]bool{}
	for _, n := range names {
		want[objects.FullPath(s.folder, n)] = true
	}
	var out []*objects.Object
	for _, o := range objs {
		if want[o.Name] {
			out = append(out, o)
			delete(want, o.Name)
		}
	}
	for _, n := range names {
		if n := objects.FullPath(s.folder, n); want[n] {
			return nil, &objects.ConfigError{Code: "01020036", Msg: fmt.Sprintf("The requested %s (%s) was not found.", what, n)}
		}
	}
	return out, nil
}

func firstCert(path string) (*x509.Certificate, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return nil, fmt.Errorf("%s holds no PEM certificate", path)
		}
		if b.Type == "CERTIFICATE" {
			return x509.ParseCertificate(b.Bytes)
		}
	}
}

// certExpiry is a certificate's date as BIG-IP writes it.
func certExpiry(t time.Time) string { return t.UTC().Format("Jan _2 15:04:05 2006 GMT") }

func (s *Session) listCryptoCerts(st *grammar.Statement, names []string, w io.Writer) error {
	certs, err := s.certs(names)
	if err != nil {
		return err
	}
	for _, c := range certs {
		fmt.Fprintf(w, "sys crypto cert %s {\n", objects.RelPath(s.folder, c.name))
		if c.err != nil {
			fmt.Fprintf(w, "    # not readable: %v\n}\n", c.err)
			continue
		}
		x := c.cert
		prop := func(k, v string) {
			if v != "" {
				fmt.Fprintf(w, "    %s %s\n", k, grammar.Quote(v))
			}
		}
		kt, size := keyInfo(x)
		prop("certificate-key-size", strconv.Itoa(size))
		prop("common-name", x.Subject.CommonName)
		prop("country", strings.Join(x.Subject.Country, ","))
		prop("email-address", strings.Join(x.EmailAddresses, ","))
		prop("expiration", certExpiry(x.NotAfter))
		prop("issuer", x.Issuer.String())
		prop("key-type", kt)
		prop("lifetime", strconv.Itoa(int(x.NotAfter.Sub(x.NotBefore).Hours()/24)))
		prop("organization", strings.Join(x.Subject.Organization, ","))
		prop("ou", strings.Join(x.Subject.OrganizationalUnit, ","))
		prop("serial-number", x.SerialNumber.String())
		prop("state", strings.Join(x.Subject.Province, ","))
		if sans := subjectAltNames(x); sans != "" {
			prop("subject-alternative-name", sans)
		}
		fmt.Fprintln(w, "}")
	}
	return nil
}

func keyInfo(x *x509.Certificate) (string, int) {
	switch k := x.PublicKey.(type) {
	case *rsa.PublicKey:
		return "rsa-public", k.N.BitLen()
	case *ecdsa.PublicKey:
		return "ec-public", k.Curve.Params().BitSize
	case ed25519.PublicKey:
		return "ed25519-public", 256
	}
	return "unknown", 0
}

// subjectAltNames is BIG-IP's "DNS:a, IP Address:b" form.
func subjectAltNames(x *x509.Certificate) string {
	var out []string
	for _, d := range x.DNSNames {
		out = append(out, "DNS:"+d)
	}
	for _, ip := range x.IPAddresses {
		out = append(out, "IP Address:"+ip.String())
	}
	for _, e := range x.EmailAddresses {
		out = append(out, "email:"+e)
	}
	return strings.Join(out, ", ")
}

// checkCerts is run sys crypto check-cert [verbose enabled] [days N]: a
// line per certificate that has expired or expires within the days (30
// [M]); verbose also says the others are valid.
func (s *Session) checkCerts(st *grammar.Statement, opts []string, w io.Writer, now time.Time) error {
	usage := []string{"run sys crypto check-cert [verbose enabled] [days N]"}
	verbose, days := false, checkCertDays
	for i := 0; i < len(opts); i += 2 {
		if i+1 >= len(opts) {
			return synErr(st, usage, "%s needs a value", opts[i])
		}
		switch opts[i] {
		case "verbose":
			switch opts[i+1] {
			case "enabled":
				verbose = true
			case "disabled":
			default:
				return synErr(st, usage, "verbose takes enabled or disabled (%q)", opts[i+1])
			}
		case "days":
			n, err := strconv.Atoi(opts[i+1])
			if err != nil || n < 0 {
				return synErr(st, usage, "days takes a number of days (%q)", opts[i+1])
			}
			days = n
		default:
			return synErr(st, usage, "%q unknown property", opts[i])
		}
	}
	certs, err := s.certs(nil)
	if err != nil {
		return err
	}
	for _, c := range certs {
		if c.err != nil {
			fmt.Fprintf(w, "%s could not be read: %v\n", c.name, c.err)
			continue
		}
		subj := c.cert.Subject.String()
		switch exp := c.cert.NotAfter; {
		case now.After(exp):
			fmt.Fprintf(w, "%s in %s expired on %s\n", subj, c.name, certExpiry(exp))
		case now.Add(time.Duration(days) * 24 * time.Hour).After(exp):
			fmt.Fprintf(w, "%s in %s will expire on %s\n", subj, c.name, certExpiry(exp))
		case verbose:
			fmt.Fprintf(w, "%s in %s is valid until %s\n", subj, c.name, certExpiry(exp))
		}
	}
	return nil
}
