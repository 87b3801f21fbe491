package persist

import (
	"fmt"
	"regexp"
)

// DefaultPayloadLimit is how much of a client's first bytes a hash
// profile's payload key is looked for in when hash-buffer-limit is 0
// [M: BIG-IP does not document its default].
const DefaultPayloadLimit = 16 << 10

// MaxPayloadLimit bounds hash-buffer-limit: the bytes are held per
// connection until the key is found [M].
const MaxPayloadLimit = 1 << 20

// Payload is a hash persistence profile's key in the client's first bytes
// (hash-offset, hash-length, hash-start-pattern, hash-end-pattern,
// hash-buffer-limit), so that a protocol carrying an account or session
// number in its first message persists without an iRule.
type Payload struct {
	// Offset skips bytes from where the key starts: the payload's start,
	// or the end of the start pattern's match.
	Offset int
	// Length is the key's length; 0 with no end pattern takes the rest of
	// the bytes read so far (the first segment, as BIG-IP hashes within
	// a packet).
	Length int
	// Start, when set, must match first: the key follows the match.
	Start *regexp.Regexp
	// End, when set, ends the key at its first match after the key's
	// start (Length, when set too, caps the key).
	End *regexp.Regexp
	// Limit is how many bytes are read at most while the key is not
	// found; past it the client is balanced without a key.
	Limit int
}

// NewPayload checks and compiles a hash profile's payload settings. The
// patterns are regular expressions (BIG-IP's are Tcl's; Go's RE2 reads
// the common forms alike); "" or "none" is no pattern.
func NewPayload(offset, length int, start, end string, limit int) (*Payload, error) {
	p := &Payload{Offset: offset, Length: length, Limit: limit}
	switch {
	case offset < 0:
		return nil, fmt.Errorf("hash-offset %d is negative", offset)
	case length < 0:
		return nil, fmt.Errorf("hash-length %d is negative", length)
	case limit < 0 || limit > MaxPayloadLimit:
		return nil, fmt.Errorf("hash-buffer-limit %d is not between 0 and %d", limit, MaxPayloadLimit)
	}
	if p.Limit == 0 {
		p.Limit = DefaultPayloadLimit
	}
	for _, x := range []struct {
		name, pat string
		re        **regexp.Regexp
	}{{"hash-start-pattern", start, &p.Start}, {"hash-end-pattern", end, &p.End}} {
		if x.pat == "" || x.pat == "none" {
			continue
		}
		re, err := regexp.Compile(x.pat)
		if err != nil {
			return nil, fmt.Errorf("%s %q is not a regular expression: %v", x.name, x.pat, err)
		}
		*x.re = re
	}
	if p.Start == nil && p.End == nil && offset+length > p.Limit {
		return nil, fmt.Errorf("hash-offset %d and hash-length %d reach past hash-buffer-limit %d", offset, length, p.Limit)
	}
	return p, nil
}

// Key finds the key in b, the client's first bytes read so far. done is
// false while more bytes could still complete it; key is nil with done
// when b holds none (a pattern not found within the limit, a payload
// shorter than offset and length when the client sent all it will).
// more is false when no further bytes will come (the client ended, the
// limit is reached, or the wait is over).
func (p *Payload) Key(b []byte, more bool) (key []byte, done bool) {
	if len(b) > p.Limit {
		b = b[:p.Limit]
	}
	if len(b) >= p.Limit {
		more = false
	}
	from := 0
	if p.Start != nil {
		loc := p.Start.FindIndex(b)
		if loc == nil {
			return nil, !more
		}
		from = loc[1]
	}
	from += p.Offset
	if from > len(b) || (from == len(b) && (p.End != nil || p.Length > 0 || more)) {
		return nil, !more
	}
	rest := b[from:]
	switch {
	case p.End != nil:
		loc := p.End.FindIndex(rest)
		if loc == nil {
			if p.Length > 0 && len(rest) >= p.Length {
				return rest[:p.Length:p.Length], true
			}
			return nil, !more
		}
		rest = rest[:loc[0]]
		if p.Length > 0 && len(rest) > p.Length {
			rest = rest[:p.Length]
		}
	case p.Length > 0:
		if len(rest) < p.Length {
			return nil, !more
		}
		rest = rest[:p.Length]
	}
	if len(rest) == 0 {
		return nil, true
	}
	return rest[:len(rest):len(rest)], true
}
