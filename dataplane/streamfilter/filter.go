package streamfilter

import "unicode/utf8"

// DefaultMaxMatch is BIG-IP's default max match size: the longest match a
// stream filter waits for, and so what bounds the bytes it holds back.
const DefaultMaxMatch = 4096

// Filter rewrites one stream, such as one response body. It keeps the
// bytes that may still begin a match between calls, so it is not safe for
// concurrent use; a connection creates one per body.
type Filter struct {
	e        *Expr
	maxMatch int
	// window is how many trailing bytes may still begin a match that needs
	// more data: maxMatch-1, or less when every search is shorter.
	window  int
	onMatch func(match, replacement []byte) []byte
	// buf holds the bytes held back; it is allocated once and reused.
	buf []byte
	// hits caches, when the sets are searched one by one, each set's next
	// match during one run over the pending bytes.
	hits    []hit
	matches int
}

// hit is where a set matches next in the pending bytes.
type hit struct{ start, end int }

// hit.start values besides positions.
const (
	hitNone    = -1 // the set does not match in the rest of the view
	hitUnknown = -2 // not searched yet
)

// New starts a filter over one stream with the expression e. A nil e (the
// result of Profile for a profile that rewrites nothing) passes the stream
// through unchanged. maxMatch is the profile's max match size; zero or
// less means DefaultMaxMatch.
//
// onMatch lets an iRule's STREAM_MATCHED event see and change each match:
// when not nil it is called once for every match with the matched bytes
// and the replacement the expression gives, and what it returns goes into
// the stream instead of the match (returning match keeps the data
// unchanged). Neither slice may be modified or kept after the call
// returns.
func New(e *Expr, maxMatch int, onMatch func(match, replacement []byte) []byte) *Filter {
	if maxMatch <= 0 {
		maxMatch = DefaultMaxMatch
	}
	window := maxMatch - 1
	if e != nil && e.maxLen != unbounded && e.maxLen-1 < window {
		window = max(e.maxLen-1, 0)
	}
	f := &Filter{e: e, maxMatch: maxMatch, window: window, onMatch: onMatch}
	if e != nil && e.perSet && len(e.sets) > 1 {
		f.hits = make([]hit, len(e.sets))
	}
	return f
}

// Write filters p, the next bytes of the stream, and appends to dst what
// can be emitted now, returning the extended slice. The bytes that could
// still be the start of a match are held back until a later Write or
// Close decides them: at most maxMatch-1 bytes besides a match that is
// being resolved. p is not referenced after Write returns, and dst must
// not overlap it.
func (f *Filter) Write(dst, p []byte) []byte {
	if f.e == nil {
		return append(dst, p...)
	}
	if len(p) == 0 {
		return dst
	}
	b := p
	if len(f.buf) > 0 {
		f.buf = append(f.buf, p...)
		b = f.buf
	}
	dst, cut := f.run(dst, b, false)
	// When b is f.buf the copy moves the tail to the front; append copies
	// like memmove, so the overlap is safe.
	f.buf = append(f.buf[:0], b[cut:]...)
	return dst
}

// Close ends the stream: it appends to dst everything held back, with
// the matches that the end of the stream settles replaced, and returns
// dst. The filter is then empty; a following Write starts a new stream.
func (f *Filter) Close(dst []byte) []byte {
	if f.e == nil || len(f.buf) == 0 {
		return dst
	}
	dst, _ = f.run(dst, f.buf, true)
	f.buf = f.buf[:0]
	return dst
}

// Matches counts the matches handed to the replacement (or to onMatch)
// so far, for the profile's statistics.
func (f *Filter) Matches() int {
	return f.matches
}

// run scans the pending bytes b, appends to dst what is decided and
// returns how many leading bytes of b that consumed; the rest is held.
// When closing, everything is decided.
func (f *Filter) run(dst, b []byte, closing bool) ([]byte, int) {
	n := len(b)
	// The scan sees b up to view, and matches starting before final are
	// decided. A UTF-8 sequence still incomplete at the end is left out
	// of the view: the regexp would read it as invalid bytes, which more
	// data may turn into a character.
	view, final := n, n
	if !closing {
		view = completeLen(b)
		final = max(view-f.window, n-(f.maxMatch-1))
		if f.e.prefixed && final < view {
			final = f.e.holdFrom(b, max(final, 0), view)
		}
	}
	for i := range f.hits {
		f.hits[i].start = hitUnknown
	}
	pos, scan := 0, 0
	for scan < view {
		s, e, set := f.find(b, scan, view)
		if s < 0 {
			break
		}
		if s >= final {
			// More data could still extend this match or let an
			// earlier-listed set match here instead.
			break
		}
		if e == s {
			_, w := utf8.DecodeRune(b[s:view])
			if w == 0 {
				break
			}
			scan = s + w
			continue
		}
		dst = append(dst, b[pos:s]...)
		repl := f.e.sets[set].repl
		if f.onMatch != nil {
			dst = append(dst, f.onMatch(b[s:e:e], repl[:len(repl):len(repl)])...)
		} else {
			dst = append(dst, repl...)
		}
		f.matches++
		pos, scan = e, e
	}
	if closing {
		return append(dst, b[pos:]...), n
	}
	cut := scan
	if final > scan {
		cut = runeStartFrom(b, scan, final)
	}
	return append(dst, b[pos:cut]...), cut
}

// find returns the leftmost match in b[scan:view] and the set that made
// it, or -1s. Searching the sets one by one gives what the alternation of
// all sets gives: the leftmost start, and at the same start the set listed
// first, with that set's own preferred match there. A set's match found by
// an earlier call of the same run stays valid while it starts at or after
// scan: with no assertions allowed, a match depends only on the text from
// its start on, and no match of the set starts between the two scan
// positions.
func (f *Filter) find(b []byte, scan, view int) (start, end, set int) {
	if f.hits == nil {
		start, end, set = f.e.findAll(b[scan:view])
		if start < 0 {
			return -1, -1, -1
		}
		return scan + start, scan + end, set
	}
	set = -1
	for i := range f.hits {
		h := &f.hits[i]
		if h.start == hitUnknown || h.start >= 0 && h.start < scan {
			if s, e := f.e.sets[i].find(b[scan:view]); s < 0 {
				h.start = hitNone
			} else {
				h.start, h.end = scan+s, scan+e
			}
		}
		if h.start >= 0 && (set < 0 || h.start < f.hits[set].start) {
			set = i
		}
	}
	if set < 0 {
		return -1, -1, -1
	}
	return f.hits[set].start, f.hits[set].end, set
}

// completeLen returns len(b) less a UTF-8 sequence that is incomplete at
// its end.
func completeLen(b []byte) int {
	n := len(b)
	for i := n - 1; i >= 0 && i > n-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return i
			}
			return n
		}
	}
	return n
}

// runeStartFrom returns the first position at or after t where the regexp,
// stepping through b from lo one character at a time, could start a
// match: t itself unless t falls inside a valid multi-byte sequence, then
// the end of that sequence. A sequence incomplete at the end of b is not
// decided yet; its start is returned so that it stays held.
func runeStartFrom(b []byte, lo, t int) int {
	if t >= len(b) {
		return len(b)
	}
	if utf8.RuneStart(b[t]) {
		return t
	}
	for q := t - 1; q >= lo && q > t-utf8.UTFMax; q-- {
		if utf8.RuneStart(b[q]) {
			if !utf8.FullRune(b[q:]) {
				return q
			}
			if _, w := utf8.DecodeRune(b[q:]); q+w > t {
				return q + w
			}
			return t
		}
	}
	return t
}
