// Package dnssec signs DNS answers on the fly, as BIG-IP DNS does for the
// names of an `ltm dns dnssec zone`: the answer's RRsets with the zone's
// zone-signing keys, the DNSKEY RRset with its key-signing keys, and a
// denial of existence made for the question asked. The GSLB
// (dataplane/gslb) hands every answer of a query with the DO bit to a
// Signer when one is configured; without one nothing here runs. README.md
// says what is [M].
package dnssec

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"
)

// KeyConfig is one `ltm dns dnssec key`, resolved: a manual key carries
// its private key, an automatic one is generated here, generation after
// generation.
type KeyConfig struct {
	Name      string
	KSK       bool
	Algorithm uint8 // dns.RSASHA1, dns.RSASHA256, ...
	Bits      int   // RSA modulus size of generated keys
	TTL       uint32
	// Manual keys sign with Private (from the key-file); automatic keys
	// leave it nil.
	Manual  bool
	Private crypto.Signer
	// Rollover is how long after a generation's creation the next one is
	// made; Expiration how long a generation lives (0: forever).
	Rollover, Expiration time.Duration
	// Validity is how long a signature is valid; Publication how long
	// one is served before it is made again.
	Validity, Publication time.Duration
}

// same reports whether c and o make the same keys, so that a commit
// keeps a key's generations when its settings stay.
func (c *KeyConfig) same(o *KeyConfig) bool {
	return c.Name == o.Name && c.KSK == o.KSK && c.Algorithm == o.Algorithm && c.Bits == o.Bits &&
		c.Manual == o.Manual && c.Private == o.Private && c.Rollover == o.Rollover && c.Expiration == o.Expiration
}

// ZoneConfig is one enabled `ltm dns dnssec zone` and its enabled keys.
type ZoneConfig struct {
	Name string // the zone's apex, any case, with or without the final dot
	Keys []*KeyConfig
}

// Generation is one key pair of a key: automatic keys have several over
// time, a manual key has generation 0 only.
type Generation struct {
	ID      int
	Created time.Time
	Expires time.Time // zero: never
	DNSKEY  *dns.DNSKEY
	private crypto.Signer
}

// key is a KeyConfig with its generations, kept across commits by name.
type key struct {
	cfg  *KeyConfig
	mu   sync.Mutex
	gens []*Generation // oldest first
}

// Keyring keeps the keys of every zone across commits, so that an
// automatic key's generations (and with them the DS record the parent
// zone holds) do not change when an unrelated object does.
type Keyring struct {
	mu   sync.Mutex
	keys map[string]*key
	// Now is the clock; tests set it.
	Now func() time.Time
	// generate makes an automatic key's pair; tests may set it.
	generate func(c *KeyConfig) (*dns.DNSKEY, crypto.Signer, error)
	// dir keeps automatic keys across restarts (store.go); "" does not.
	dir string
}

// NewKeyring is an empty keyring on the system clock.
func NewKeyring() *Keyring {
	return &Keyring{keys: map[string]*key{}, Now: time.Now, generate: generateKey}
}

func newDNSKEY(c *KeyConfig, zone string) *dns.DNSKEY {
	k := &dns.DNSKEY{Hdr: dns.RR_Header{Name: zone, Rrtype: dns.TypeDNSKEY, Class: dns.ClassINET, Ttl: c.TTL},
		Flags: dns.ZONE, Protocol: 3, Algorithm: c.Algorithm}
	if c.KSK {
		k.Flags |= dns.SEP
	}
	return k
}

func generateKey(c *KeyConfig) (*dns.DNSKEY, crypto.Signer, error) {
	k := newDNSKEY(c, ".")
	bits := c.Bits
	switch c.Algorithm {
	case dns.ECDSAP256SHA256:
		bits = 256
	case dns.ECDSAP384SHA384:
		bits = 384
	}
	priv, err := k.Generate(bits)
	if err != nil {
		return nil, nil, fmt.Errorf("dnssec key %s: %v", c.Name, err)
	}
	s, ok := priv.(crypto.Signer)
	if !ok {
		return nil, nil, fmt.Errorf("dnssec key %s: no signer for algorithm %d", c.Name, c.Algorithm)
	}
	return k, s, nil
}

// manualDNSKEY is the DNSKEY of a manual key's private key.
func manualDNSKEY(c *KeyConfig) (*dns.DNSKEY, error) {
	k := newDNSKEY(c, ".")
	switch pub := c.Private.Public().(type) {
	case *rsa.PublicKey:
		switch c.Algorithm {
		case dns.RSASHA1, dns.RSASHA256, dns.RSASHA512:
		default:
			return nil, fmt.Errorf("dnssec key %s: the key-file holds an RSA key, algorithm %s needs an ECDSA one", c.Name, strings.ToLower(dns.AlgorithmToString[c.Algorithm]))
		}
		k.PublicKey = rsaPublic(pub)
	case *ecdsa.PublicKey:
		want := map[uint8]int{dns.ECDSAP256SHA256: 256, dns.ECDSAP384SHA384: 384}[c.Algorithm]
		if want == 0 || pub.Curve.Params().BitSize != want {
			return nil, fmt.Errorf("dnssec key %s: the key-file's ECDSA curve does not fit algorithm %s", c.Name, strings.ToLower(dns.AlgorithmToString[c.Algorithm]))
		}
		pk, err := ecdsaPublic(pub)
		if err != nil {
			return nil, fmt.Errorf("dnssec key %s: %v", c.Name, err)
		}
		k.PublicKey = pk
	default:
		return nil, fmt.Errorf("dnssec key %s: the key-file holds a %T key; DNSSEC takes RSA or ECDSA", c.Name, pub)
	}
	return k, nil
}

// Build makes the Signer of a commit's zones; keys are every key the
// configuration has, used by a zone or not (a zone's keys are among
// them or added). Keys whose settings stay keep their generations (from
// the directory after a restart); new automatic keys get generation 0
// now (an RSA key of 4096 bits takes a while to make). The keys no
// longer configured are forgotten by Retain, once the commit is in. A
// Signer without zones (Empty) signs nothing.
func (kr *Keyring) Build(zones []ZoneConfig, keys []*KeyConfig) (*Signer, error) {
	kr.mu.Lock()
	defer kr.mu.Unlock()
	now := kr.Now()
	keep := map[string]*key{}
	s := &Signer{kr: kr, cache: map[string]*cached{}, used: keep}
	keyFor := func(c *KeyConfig) (*key, error) {
		if k := keep[c.Name]; k != nil {
			return k, nil
		}
		if old := kr.keys[c.Name]; old != nil && old.cfg.same(c) {
			old.mu.Lock()
			old.cfg = c // TTL, validity and publication may change freely
			old.mu.Unlock()
			keep[c.Name] = old
			return old, nil
		}
		k := &key{cfg: c}
		if !c.Manual && kr.dir != "" {
			gens, err := kr.load(c)
			if err != nil {
				return nil, err
			}
			k.gens = gens
		}
		if len(k.gens) == 0 {
			if err := kr.addGeneration(k, now); err != nil {
				return nil, err
			}
		}
		keep[c.Name] = k
		return k, nil
	}
	for _, c := range keys {
		if _, err := keyFor(c); err != nil {
			return nil, err
		}
	}
	seen := map[string]bool{}
	for _, zc := range zones {
		apex := dns.CanonicalName(zc.Name)
		if seen[apex] {
			return nil, fmt.Errorf("dnssec zone %s is defined twice", apex)
		}
		seen[apex] = true
		z := &zone{apex: apex}
		for _, c := range zc.Keys {
			k, err := keyFor(c)
			if err != nil {
				return nil, err
			}
			if c.KSK {
				z.ksk = append(z.ksk, k)
			} else {
				z.zsk = append(z.zsk, k)
			}
		}
		if len(z.zsk) == 0 && len(z.ksk) == 0 {
			continue // a zone without an enabled key is not signed
		}
		// A zone with only one kind of key signs everything with it.
		if len(z.zsk) == 0 {
			z.zsk = z.ksk
		}
		if len(z.ksk) == 0 {
			z.ksk = z.zsk
		}
		s.zones = append(s.zones, z)
	}
	sort.SliceStable(s.zones, func(i, j int) bool { return len(s.zones[i].apex) > len(s.zones[j].apex) })
	for name, k := range keep {
		kr.keys[name] = k
	}
	return s, nil
}

// Empty reports whether s signs nothing (no enabled zone with an enabled
// key), so that the answer paths need not consult it.
func (s *Signer) Empty() bool { return s == nil || len(s.zones) == 0 }

// Retain forgets the keys s does not use (nil: every key), and their
// stored files: the commit that made s is in.
func (kr *Keyring) Retain(s *Signer) {
	if kr == nil {
		return
	}
	kr.mu.Lock()
	defer kr.mu.Unlock()
	for name, k := range kr.keys {
		if s != nil && s.used[name] == k {
			continue
		}
		delete(kr.keys, name)
		if kr.dir != "" && !k.cfg.Manual {
			os.Remove(kr.file(name))
		}
	}
}

// addGeneration gives k its next generation, made at now.
func (kr *Keyring) addGeneration(k *key, now time.Time) error {
	c := k.cfg
	g := &Generation{Created: now}
	if n := len(k.gens); n > 0 {
		g.ID = k.gens[n-1].ID + 1
	}
	if c.Manual {
		dk, err := manualDNSKEY(c)
		if err != nil {
			return err
		}
		g.DNSKEY, g.private = dk, c.Private
	} else {
		dk, priv, err := kr.generate(c)
		if err != nil {
			return err
		}
		g.DNSKEY, g.private = dk, priv
		if c.Expiration > 0 {
			g.Expires = now.Add(c.Expiration)
		}
	}
	k.gens = append(k.gens, g)
	if !c.Manual && kr.dir != "" {
		return kr.save(k)
	}
	return nil
}

// roll brings an automatic key's generations up to now: a new one each
// rollover period after the newest, expired ones dropped (the newest is
// always kept). It reports whether anything changed.
func (kr *Keyring) roll(k *key, now time.Time) (bool, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	c := k.cfg
	if c.Manual {
		return false, nil
	}
	changed := false
	for i := 0; i < 8 && c.Rollover > 0; i++ { // bounded: a long-stopped clock makes at most a few
		last := k.gens[len(k.gens)-1]
		due := last.Created.Add(c.Rollover)
		if now.Before(due) {
			break
		}
		if err := kr.addGeneration(k, due); err != nil {
			return changed, err
		}
		changed = true
	}
	live := k.gens[:0]
	dropped := false
	for i, g := range k.gens {
		if i == len(k.gens)-1 || g.Expires.IsZero() || now.Before(g.Expires) {
			live = append(live, g)
		} else {
			dropped = true
		}
	}
	k.gens = live
	if dropped && kr.dir != "" {
		if err := kr.save(k); err != nil {
			return true, err
		}
	}
	return changed || dropped, nil
}

// nextChange is when k's generations next change (zero: never).
func (k *key) nextChange() time.Time {
	c := k.cfg
	if c.Manual {
		return time.Time{}
	}
	var t time.Time
	if c.Rollover > 0 {
		t = k.gens[len(k.gens)-1].Created.Add(c.Rollover)
	}
	for _, g := range k.gens[:len(k.gens)-1] {
		if !g.Expires.IsZero() && (t.IsZero() || g.Expires.Before(t)) {
			t = g.Expires
		}
	}
	return t
}

// Generations lists a key's generations, oldest first, for shows.
func (kr *Keyring) Generations(name string) []Generation {
	if kr == nil {
		return nil
	}
	kr.mu.Lock()
	k := kr.keys[name]
	kr.mu.Unlock()
	if k == nil {
		return nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make([]Generation, len(k.gens))
	for i, g := range k.gens {
		out[i] = *g
		out[i].private = nil
	}
	return out
}
