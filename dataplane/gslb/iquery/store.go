package iquery

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Store keeps a device's identity and the certificates it trusts in a
// directory, so both survive restarts: device.pem (certificate and key,
// mode 0600) and trusted/<fingerprint>.pem, one per trusted peer.
type Store struct {
	Dir   string
	ID    *Identity
	Trust *Trust
}

// OpenStore reads the identity and trusted certificates in dir, making
// an identity named name (and the directory) the first time.
func OpenStore(dir, name string) (*Store, error) {
	if err := os.MkdirAll(filepath.Join(dir, "trusted"), 0o700); err != nil {
		return nil, err
	}
	st := &Store{Dir: dir, Trust: NewTrust()}
	devPath := filepath.Join(dir, "device.pem")
	b, err := os.ReadFile(devPath)
	switch {
	case err == nil:
		id, perr := identityFromPEM(b)
		if perr != nil {
			return nil, fmt.Errorf("%s: %w", devPath, perr)
		}
		st.ID = id
	case errors.Is(err, os.ErrNotExist):
		id, nerr := NewIdentity(name)
		if nerr != nil {
			return nil, nerr
		}
		out, merr := id.pem()
		if merr != nil {
			return nil, merr
		}
		if werr := os.WriteFile(devPath, out, 0o600); werr != nil {
			return nil, werr
		}
		st.ID = id
	default:
		return nil, err
	}
	ents, err := os.ReadDir(filepath.Join(dir, "trusted"))
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".pem") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, "trusted", e.Name()))
		if err != nil {
			return nil, err
		}
		if _, err := st.Trust.Add(b); err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
	}
	return st, nil
}

// pem is the certificate followed by the private key.
func (id *Identity) pem() ([]byte, error) {
	key, err := x509.MarshalPKCS8PrivateKey(id.cert.PrivateKey)
	if err != nil {
		return nil, err
	}
	return append(id.CertPEM(), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: key})...), nil
}

func identityFromPEM(b []byte) (*Identity, error) {
	c, err := tls.X509KeyPair(b, b)
	if err != nil {
		return nil, err
	}
	x, err := x509.ParseCertificate(c.Certificate[0])
	if err != nil {
		return nil, err
	}
	return &Identity{Name: x.Subject.CommonName, cert: c}, nil
}

// TrustedDevice is one certificate a device trusts.
type TrustedDevice struct {
	Name        string // the certificate's common name
	Fingerprint string // SHA-256, hex
}

// Trusted lists the trusted certificates, by name then fingerprint.
func (t *Trust) Trusted() []TrustedDevice {
	t.mu.RLock()
	out := make([]TrustedDevice, 0, len(t.certs))
	for fp, name := range t.certs {
		out = append(out, TrustedDevice{Name: name, Fingerprint: fp})
	}
	t.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].Fingerprint < out[j].Fingerprint
	})
	return out
}

// Add trusts a certificate and keeps it in the store.
func (st *Store) Add(certPEM []byte) (TrustedDevice, error) {
	name, err := st.Trust.Add(certPEM)
	if err != nil {
		return TrustedDevice{}, err
	}
	b, _ := pem.Decode(certPEM)
	fp := fingerprint(b.Bytes)
	if err := os.WriteFile(filepath.Join(st.Dir, "trusted", fp+".pem"), certPEM, 0o600); err != nil {
		st.Trust.Remove(fp)
		return TrustedDevice{}, err
	}
	return TrustedDevice{Name: name, Fingerprint: fp}, nil
}

// Remove stops trusting the devices whose name or fingerprint is key and
// returns how many it removed.
func (st *Store) Remove(key string) (int, error) {
	n := 0
	for _, d := range st.Trust.Trusted() {
		if d.Name != key && d.Fingerprint != key {
			continue
		}
		st.Trust.Remove(d.Fingerprint)
		if err := os.Remove(filepath.Join(st.Dir, "trusted", d.Fingerprint+".pem")); err != nil && !errors.Is(err, os.ErrNotExist) {
			return n, err
		}
		n++
	}
	return n, nil
}

// errFetched ends a handshake once the peer's certificate is read.
var errFetched = errors.New("iquery: certificate fetched")

// FetchCertificate reads the certificate a peer's iQuery port presents,
// without trusting it and without presenting one: the first step of an
// exchange, whose fingerprint the user confirms before trusting it.
func FetchCertificate(ctx context.Context, addr string) (certPEM []byte, dev TrustedDevice, err error) {
	var got []byte
	cfg := &tls.Config{
		// Any version and suite a peer's iquery-minimum-tls-version and
		// iquery-cipher-list may leave: only its certificate is read.
		MinVersion:         tls.VersionTLS10,
		CipherSuites:       anySuite(),
		InsecureSkipVerify: true, // the fingerprint is confirmed by the user
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			if len(raw) > 0 {
				got = raw[0]
			}
			return errFetched
		},
	}
	d := tls.Dialer{NetDialer: &net.Dialer{Timeout: 5 * time.Second}, Config: cfg}
	c, err := d.DialContext(ctx, "tcp", addr)
	if c != nil {
		c.Close()
	}
	if got == nil {
		if err == nil {
			err = errors.New("the peer presented no certificate")
		}
		return nil, TrustedDevice{}, err
	}
	x, perr := x509.ParseCertificate(got)
	if perr != nil {
		return nil, TrustedDevice{}, perr
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: got}), TrustedDevice{Name: x.Subject.CommonName, Fingerprint: fingerprint(got)}, nil
}

// anySuite is every TLS 1.0–1.2 suite crypto/tls implements.
func anySuite() []uint16 {
	var ids []uint16
	for _, cs := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
		ids = append(ids, cs.ID)
	}
	return ids
}
