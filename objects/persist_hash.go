package objects

import (
	"regexp"
	"strconv"
)

// maxHashBufferLimit bounds a hash persistence profile's hash-buffer-limit:
// the client's first bytes are held per connection until the key is found.
const maxHashBufferLimit = 1 << 20

// checkHashPayload refuses a hash persistence profile whose payload
// settings (its own or inherited) could never find a key: a pattern that
// is no regular expression, a buffer limit out of range, or an offset and
// length that reach past the buffer limit. Refused at commit, it would
// otherwise only show when a virtual server used the profile.
func checkHashPayload(c *Config, o *Object) error {
	if o.Kind.Key() != "ltm persistence hash" {
		return nil
	}
	for _, name := range []string{"hash-start-pattern", "hash-end-pattern"} {
		if pat := c.EffectiveStr(o, name); pat != "" && pat != "none" {
			if _, err := regexp.Compile(pat); err != nil {
				return Invalid("Persistence profile (%s): %s %q is not a valid regular expression: %v.", o.Name, name, pat, err)
			}
		}
	}
	num := func(name string) int {
		n, _ := strconv.Atoi(c.EffectiveStr(o, name))
		return n
	}
	limit := num("hash-buffer-limit")
	if limit < 0 || limit > maxHashBufferLimit {
		return Invalid("Persistence profile (%s): hash-buffer-limit %d is out of range (0 to %d).", o.Name, limit, maxHashBufferLimit)
	}
	patterns := false
	for _, name := range []string{"hash-start-pattern", "hash-end-pattern"} {
		if p := c.EffectiveStr(o, name); p != "" && p != "none" {
			patterns = true
		}
	}
	if off, length := num("hash-offset"), num("hash-length"); limit > 0 && !patterns && off+length > limit {
		return Invalid("Persistence profile (%s): hash-offset %d and hash-length %d reach past hash-buffer-limit %d.", o.Name, off, length, limit)
	}
	return nil
}
