package dnssec

import (
	"crypto"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/miekg/dns"
)

// Automatic keys are written to the keyring's directory, one file per
// key, so that a restart keeps their generations and the DS record the
// parent zone holds stays right (BIG-IP keeps generations in its
// configuration).

type storedKey struct {
	Settings    string      `json:"settings"`
	Generations []storedGen `json:"generations"`
}

type storedGen struct {
	ID      int       `json:"id"`
	Created time.Time `json:"created"`
	Expires time.Time `json:"expires"`
	DNSKEY  string    `json:"dnskey"`
	Key     string    `json:"key"` // PKCS#8 PEM
}

// SetDir makes the keyring keep automatic keys in dir ("" keeps them in
// memory only).
func (kr *Keyring) SetDir(dir string) {
	kr.mu.Lock()
	kr.dir = dir
	kr.mu.Unlock()
}

func settings(c *KeyConfig) string {
	return fmt.Sprintf("ksk=%v alg=%d bits=%d rollover=%d expiration=%d", c.KSK, c.Algorithm, c.Bits, c.Rollover, c.Expiration)
}

func (kr *Keyring) file(name string) string {
	return filepath.Join(kr.dir, url.PathEscape(name)+".json")
}

// save writes k's generations; kr.dir is set.
func (kr *Keyring) save(k *key) error {
	st := storedKey{Settings: settings(k.cfg)}
	for _, g := range k.gens {
		der, err := x509.MarshalPKCS8PrivateKey(g.private)
		if err != nil {
			return fmt.Errorf("dnssec key %s: %v", k.cfg.Name, err)
		}
		st.Generations = append(st.Generations, storedGen{ID: g.ID, Created: g.Created, Expires: g.Expires,
			DNSKEY: g.DNSKEY.String(), Key: string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))})
	}
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(kr.dir, 0o700); err != nil {
		return err
	}
	tmp := kr.file(k.cfg.Name) + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, kr.file(k.cfg.Name))
}

// load reads the generations stored for c, nil when there are none for
// these settings.
func (kr *Keyring) load(c *KeyConfig) ([]*Generation, error) {
	b, err := os.ReadFile(kr.file(c.Name))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var st storedKey
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("dnssec key %s: %s: %v", c.Name, kr.file(c.Name), err)
	}
	if st.Settings != settings(c) {
		return nil, nil
	}
	var out []*Generation
	for _, sg := range st.Generations {
		rr, err := dns.NewRR(sg.DNSKEY)
		dk, ok := rr.(*dns.DNSKEY)
		if err != nil || !ok {
			return nil, fmt.Errorf("dnssec key %s: generation %d: bad DNSKEY", c.Name, sg.ID)
		}
		blk, _ := pem.Decode([]byte(sg.Key))
		if blk == nil {
			return nil, fmt.Errorf("dnssec key %s: generation %d: no private key", c.Name, sg.ID)
		}
		priv, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
		if err != nil {
			return nil, fmt.Errorf("dnssec key %s: generation %d: %v", c.Name, sg.ID, err)
		}
		signer, ok := priv.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("dnssec key %s: generation %d: the key cannot sign", c.Name, sg.ID)
		}
		out = append(out, &Generation{ID: sg.ID, Created: sg.Created, Expires: sg.Expires, DNSKEY: dk, private: signer})
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}
