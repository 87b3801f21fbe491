package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/openltm/openltm/grammar"
	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/objects/vault"
)

// The configuration keeps its secrets (monitor passwords, pass phrases)
// sealed with the device's master key, as BIG-IP's Secure Vault does: a
// commit seals what was typed in clear, `list` and saved files show
// `$M$...`, and the runtimes (the hooks) are handed a copy in which they
// are revealed. The key lives in STATE-DIR/master-key (mode 0600).

// masterKeyFile is the key's file in the state directory; a key being
// changed is written beside it first (masterKeyFile + ".new").
const masterKeyFile = "master-key"

// secretVault is the engine's master key and the revealed copies of the
// objects that hold secrets, kept so that a hook sees the same revealed
// object in two configurations as long as the sealed one is the same (a
// monitor whose object did not change keeps its probe).
type secretVault struct {
	mu  sync.Mutex
	key *vault.Key
	// previous is the hash of the key this one replaced (since ltmd
	// started), for show sys crypto master-key.
	previous string
	// revealed maps a sealed object to its revealed copy, for the objects
	// of the configurations last revealed.
	revealed map[*objects.Object]*objects.Object
}

// openVault reads the master key, or makes one on first start. A key
// change interrupted between writing the new key and storing the
// configuration sealed with it is settled here: the key that opens the
// stored configuration's secrets wins.
func (e *Engine) openVault(cfg *objects.Config) error {
	path := filepath.Join(e.opts.StateDir, masterKeyFile)
	k, created, err := vault.Load(path)
	if err != nil {
		return err
	}
	if created {
		e.log.Info("master key created", "file", path)
	}
	if raw, err := os.ReadFile(path + ".new"); err == nil {
		if nk, err := vault.New(raw); err == nil && opensAll(nk, cfg) && !opensAll(k, cfg) {
			if err := nk.Save(path); err != nil {
				return err
			}
			k = nk
		}
		os.Remove(path + ".new")
	}
	e.vault.key = k
	for _, o := range cfg.SecretHolders() {
		if _, err := objects.MapSecrets(o, func(p *objects.Prop, v string) (string, error) { return k.Open(v) }); err != nil {
			e.log.Error("a secret of the stored configuration cannot be decrypted with this device's master key; the objects using it will not work until it is set again", "object", o.Kind.Key()+" "+o.Name, "err", err)
		}
	}
	return nil
}

// opensAll reports whether k opens every secret of cfg.
func opensAll(k *vault.Key, cfg *objects.Config) bool {
	for _, o := range cfg.SecretHolders() {
		if _, err := objects.MapSecrets(o, func(p *objects.Prop, v string) (string, error) { return k.Open(v) }); err != nil {
			return false
		}
	}
	return true
}

// seal encrypts the secrets of cfg typed in clear, and checks that those
// given sealed open with this device's key (a value sealed on another
// device is refused, as BIG-IP refuses it, rather than run with a wrong
// secret). cfg is the configuration being committed; its objects are
// replaced, never changed.
func (e *Engine) seal(cfg *objects.Config) error {
	k := e.masterKey()
	if k == nil {
		return nil
	}
	for _, o := range cfg.SecretHolders() {
		n, err := objects.MapSecrets(o, func(p *objects.Prop, v string) (string, error) {
			if !vault.Sealed(v) {
				return k.Seal(v), nil
			}
			if _, err := k.Open(v); err != nil {
				return "", objects.Invalid("%s %s: the %s %s cannot be decrypted: %v. Set it again in clear, or give this device the master key it was encrypted with (modify sys crypto master-key prompt-for-password).", o.Kind.Key(), o.Name, p.Name, shortSecret(v), err)
			}
			return v, nil
		})
		if err != nil {
			return err
		}
		if n != o {
			cfg.Put(n)
		}
	}
	return nil
}

// shortSecret is the start of a sealed value, enough to recognise it in a
// message.
func shortSecret(v string) string {
	if len(v) > 12 {
		return v[:12] + "..."
	}
	return v
}

// reveal returns copies of the configurations in which the secrets are in
// clear, for the hooks; a configuration without secrets is returned as it
// is. The revealed objects of the configurations given are kept for the
// next call, so that an unchanged object stays the same object.
func (e *Engine) reveal(cfgs ...*objects.Config) []*objects.Config {
	e.vault.mu.Lock()
	defer e.vault.mu.Unlock()
	k := e.vault.key
	out := make([]*objects.Config, len(cfgs))
	keep := map[*objects.Object]*objects.Object{}
	for i, cfg := range cfgs {
		out[i] = cfg
		if cfg == nil || k == nil {
			continue
		}
		var clone *objects.Config
		for _, o := range cfg.SecretHolders() {
			r, ok := keep[o]
			if !ok {
				r, ok = e.vault.revealed[o]
			}
			if !ok {
				var err error
				r, err = objects.MapSecrets(o, func(p *objects.Prop, v string) (string, error) {
					s, err := k.Open(v)
					if err != nil {
						return "", nil // left unset: openVault logged it
					}
					return s, nil
				})
				if err != nil {
					r = o
				}
			}
			keep[o] = r
			if r != o {
				if clone == nil {
					clone = cfg.Clone()
				}
				clone.Put(r)
			}
		}
		if clone != nil {
			out[i] = clone
		}
	}
	e.vault.revealed = keep
	return out
}

// openSecret reveals one value (a key's pass phrase while the key file is
// imported, before the commit seals it).
func (e *Engine) openSecret(v string) string {
	k := e.masterKey()
	if k == nil {
		return v
	}
	s, err := k.Open(v)
	if err != nil {
		return v
	}
	return s
}

// errNoVault refuses a master key change on an engine without a state
// directory key (never in ltmd).
var errNoVault = errors.New("this device has no master key")

// setMasterKey replaces the master key: every secret of the running
// configuration is sealed again with the new key and committed as a new
// generation (which a device group's other members take with the key).
func (e *Engine) setMasterKey(ctx context.Context, nk *vault.Key, user string) (uint64, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.setMasterKeyLocked(ctx, nk, user, "modify sys crypto master-key", CommitOptions{Lenient: true})
}

// adoptMasterKeyLocked takes the key a device group's generation came
// with, before its text is applied: BIG-IP's devices of a group share one
// master key, and the device that syncs its configuration hands its key
// over. The device's own configuration is sealed again with it (a local
// generation, not published). e.mu is held.
func (e *Engine) adoptMasterKeyLocked(ctx context.Context, from string, raw []byte) error {
	if len(raw) == 0 {
		return nil // from a device that does not send its key: the text must open with ours
	}
	nk, err := vault.New(raw)
	if err != nil {
		return fmt.Errorf("the master key of %s: %w", from, err)
	}
	if k := e.masterKey(); k != nil && k.Equal(nk) {
		return nil
	}
	if _, err := e.setMasterKeyLocked(ctx, nk, "", "master key taken from "+from, CommitOptions{Lenient: true, fromGroup: true}); err != nil {
		return err
	}
	e.log.Info("master key taken from the device group", "from", from, "hash", nk.Checksum())
	return nil
}

// setMasterKeyLocked seals the running configuration's secrets with nk and
// commits it. The new key is written beside the old one first and renamed
// over it once the generation is stored, so that a crash in between leaves
// a key that opens what was stored (openVault settles it). e.mu is held.
func (e *Engine) setMasterKeyLocked(ctx context.Context, nk *vault.Key, user, summary string, opts CommitOptions) (uint64, error) {
	old := e.masterKey()
	if old == nil {
		return 0, errNoVault
	}
	cur := e.cur.Load()
	if old.Equal(nk) {
		return cur.gen, nil
	}
	cfg := cur.cfg.Clone()
	for _, o := range cfg.SecretHolders() {
		n, err := objects.MapSecrets(o, func(p *objects.Prop, v string) (string, error) {
			s, err := old.Open(v)
			if err != nil {
				return "", fmt.Errorf("%s %s: the %s cannot be decrypted with the current master key: %w", o.Kind.Key(), o.Name, p.Name, err)
			}
			return nk.Seal(s), nil
		})
		if err != nil {
			return 0, err
		}
		if n != o {
			cfg.Put(n)
		}
	}
	path := filepath.Join(e.opts.StateDir, masterKeyFile)
	if err := nk.Save(path + ".new"); err != nil {
		return 0, fmt.Errorf("writing the master key: %w", err)
	}
	e.vault.mu.Lock()
	e.vault.key = nk
	e.vault.mu.Unlock()
	gen, err := e.commitLocked(ctx, cur, user, summary, cfg, opts)
	if err != nil {
		e.vault.mu.Lock()
		e.vault.key = old
		e.vault.mu.Unlock()
		os.Remove(path + ".new")
		return 0, err
	}
	e.vault.mu.Lock()
	e.vault.previous = old.Checksum()
	e.vault.mu.Unlock()
	if err := os.Rename(path+".new", path); err != nil {
		return gen, fmt.Errorf("the configuration is sealed with the new master key, which could not replace the old one's file: %w", err)
	}
	return gen, nil
}

// masterKey is the key in force (nil only for an engine that has not
// opened its vault).
func (e *Engine) masterKey() *vault.Key {
	e.vault.mu.Lock()
	defer e.vault.mu.Unlock()
	return e.vault.key
}

// masterKeyBytes is the key a device group's generation carries.
func (e *Engine) masterKeyBytes() []byte {
	if k := e.masterKey(); k != nil {
		return k.Bytes()
	}
	return nil
}

// masterKeyHash identifies the key in force ("" without one): what a UCS
// archive records, to tell a device whether it can read the archive.
func (e *Engine) masterKeyHash() string {
	if k := e.masterKey(); k != nil {
		return k.Checksum()
	}
	return ""
}

// masterKeyCommand answers the sys crypto master-key commands: `show`
// (the key's hash, as BIG-IP shows it, to compare devices) and `modify
// ... password PASSWORD` (the key derived from a password, so that
// devices given the same one read each other's files). The shell turns
// BIG-IP's `prompt-for-password` into the latter after asking twice; the
// password never reaches the configuration history.
func (s *Session) masterKeyCommand(ctx context.Context, st *grammar.Statement, verb string, args []grammar.Node, w io.Writer) (bool, error) {
	ws := headWords(args)
	abs := s.moduleFor(ws)
	if !hasPrefix(abs, []string{"sys", "crypto", "master-key"}) {
		return false, nil
	}
	rest := abs[3:]
	usage := []string{"show sys crypto master-key", "modify sys crypto master-key prompt-for-password"}
	switch verb {
	case "show", "list":
		if len(rest) > 0 {
			return true, synErr(st, usage, "%q unknown property", rest[0])
		}
		s.e.vault.mu.Lock()
		k, prev := s.e.vault.key, s.e.vault.previous
		s.e.vault.mu.Unlock()
		if k == nil {
			return true, errNoVault
		}
		fmt.Fprintf(w, "Sys::Master-Key\nmaster-key hash <%s>\n  previous hash <%s>\n", k.Checksum(), prev)
		return true, nil
	case "modify":
		switch {
		case len(rest) == 1 && rest[0] == "prompt-for-password":
			return true, objects.Invalid("prompt-for-password asks for the password at a terminal: run it in tmsh, or give it with password PASSWORD")
		case len(rest) == 2 && rest[0] == "password":
			k, err := vault.FromPassword(rest[1])
			if err != nil {
				return true, objects.Invalid("%v", err)
			}
			gen, err := s.e.setMasterKey(ctx, k, s.user)
			s.committed = gen
			return true, err
		}
		return true, synErr(st, usage, "modify sys crypto master-key takes prompt-for-password")
	}
	return true, synErr(st, usage, "%s is not a sys crypto master-key command", verb)
}
