package objects

import (
	"regexp"
	"strconv"
	"strings"
)

// secretNames are the string properties BIG-IP keeps encrypted with the
// master key (Secure Vault): monitor passwords and RADIUS secrets, key and
// profile pass phrases, cookie secrets.
var secretNames = map[string]bool{
	"password": true, "passphrase": true, "secret": true,
	"cookie-encryption-passphrase": true, "encrypt-cookie-secret": true,
	"md5-signature-passphrase": true, "proxy-ca-passphrase": true,
	"c3d-ca-passphrase": true, "c3d-ca-passphrase-encrypted": true,
	"aws-secret-key": true, "bind-pw": true,
	"insert-cookie-passphrase": true,
	"shared-secret":            true,
	"signer-key-passphrase":    true,
}

// markSecret marks p as a secret of k. An auth user's password is not one:
// it is kept as a one-way hash (encrypted-password), never sealed.
func markSecret(k *Kind, p *Prop) {
	if p.Type == TString && secretNames[p.Name] && k.key != "auth user" {
		p.Secret = true
	}
	if p.Type == TRaw && p.Name == "cert-key-chain" {
		p.Secret = true // its entries' pass phrases (rawSecrets)
	}
}

// rawPassphrase finds the pass phrases in a raw block (an ssl profile's
// cert-key-chain entries): the word after each passphrase keyword.
var rawPassphrase = regexp.MustCompile(`(\bpassphrase\s+)("(?:[^"\\]|\\.)*"|[^\s{}"]+)`)

// rawSecrets applies f to the pass phrases of a raw block.
func rawSecrets(p *Prop, text string, f func(p *Prop, v string) (string, error)) (string, error) {
	var first error
	out := rawPassphrase.ReplaceAllStringFunc(text, func(m string) string {
		sm := rawPassphrase.FindStringSubmatch(m)
		v := sm[2]
		if strings.HasPrefix(v, `"`) {
			if u, err := strconv.Unquote(v); err == nil {
				v = u
			}
		}
		if unsetSecret(v) || first != nil {
			return m
		}
		nv, err := f(p, v)
		if err != nil {
			first = err
			return m
		}
		if nv == v {
			return m
		}
		if strings.ContainsAny(nv, " \t\n{}\"\\;#") || nv == "" {
			nv = strconv.Quote(nv)
		}
		return sm[1] + nv
	})
	return out, first
}

// unsetSecret reports the values that hold no secret: nothing to seal.
func unsetSecret(v string) bool { return v == "" || v == "none" || v == "-" }

// MapSecrets returns o with f applied to each of its secret values (its own
// and those of its struct and collection items), or o itself when f changed
// none; o is never modified. Unset values ("", none) are left alone.
func MapSecrets(o *Object, f func(p *Prop, v string) (string, error)) (*Object, error) {
	if o.Kind == nil {
		return o, nil
	}
	var out *Object
	for name, v := range o.Props {
		p := o.Kind.Prop(name)
		if p == nil || v == nil {
			continue
		}
		nv, changed, err := mapValue(p, v, f)
		if err != nil {
			return nil, err
		}
		if changed {
			if out == nil {
				out = o.Clone()
			}
			out.Props[name] = nv
		}
	}
	if out == nil {
		return o, nil
	}
	return out, nil
}

// mapValue applies f to v's secrets; changed says whether the copy it
// returns differs.
func mapValue(p *Prop, v *Value, f func(p *Prop, v string) (string, error)) (*Value, bool, error) {
	switch {
	case p.Secret && p.Type == TRaw:
		s, err := rawSecrets(p, v.Str, f)
		if err != nil || s == v.Str {
			return v, false, err
		}
		return &Value{Str: s}, true, nil
	case p.Secret:
		if unsetSecret(v.Str) {
			return v, false, nil
		}
		s, err := f(p, v.Str)
		if err != nil || s == v.Str {
			return v, false, err
		}
		return &Value{Str: s}, true, nil
	case p.Sub != nil && v.Sub != nil:
		it, changed, err := mapItem(p.Sub, v.Sub, f)
		if !changed || err != nil {
			return v, false, err
		}
		c := v.clone()
		c.Sub = it
		return c, true, nil
	case p.Sub != nil && len(v.Items) > 0:
		var c *Value
		for i, it := range v.Items {
			nit, changed, err := mapItem(p.Sub, it, f)
			if err != nil {
				return v, false, err
			}
			if changed {
				if c == nil {
					c = v.clone()
				}
				c.Items[i] = nit
			}
		}
		if c == nil {
			return v, false, nil
		}
		return c, true, nil
	}
	return v, false, nil
}

func mapItem(k *Kind, it *Item, f func(p *Prop, v string) (string, error)) (*Item, bool, error) {
	var out *Item
	for name, v := range it.Props {
		p := k.Prop(name)
		if p == nil || v == nil {
			continue
		}
		nv, changed, err := mapValue(p, v, f)
		if err != nil {
			return nil, false, err
		}
		if changed {
			if out == nil {
				out = it.clone()
			}
			out.Props[name] = nv
		}
	}
	if out == nil {
		return it, false, nil
	}
	return out, true, nil
}

// HasSecrets reports whether the kind (or its items) has a secret
// property, so that walks over a configuration skip the kinds that cannot
// hold one.
func (k *Kind) HasSecrets() bool { return k.secrets }

// SecretHolders lists the objects whose kind may hold a secret value, in
// no order: what sealing and revealing a configuration walk.
func (c *Config) SecretHolders() []*Object {
	var out []*Object
	for _, o := range c.objs {
		if o.Kind != nil && o.Kind.secrets {
			out = append(out, o)
		}
	}
	return out
}
