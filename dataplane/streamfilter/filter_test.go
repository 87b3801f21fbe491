package streamfilter

import (
	"bytes"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

func mustParse(t testing.TB, s string) *Expr {
	t.Helper()
	e, err := Parse(s)
	if err != nil {
		t.Fatalf("Parse(%q): %v", s, err)
	}
	return e
}

type refKey struct {
	e       *Expr
	longest bool
}

// refs caches the reference's own regexps, compiled apart from the
// package's.
var refs sync.Map // refKey -> []*regexp.Regexp

// refRegexps compiles one regexp per set of e: as written, or anchored
// and leftmost-longest to find the longest match at a position.
func refRegexps(e *Expr, longest bool) []*regexp.Regexp {
	k := refKey{e, longest}
	if v, ok := refs.Load(k); ok {
		return v.([]*regexp.Regexp)
	}
	res := make([]*regexp.Regexp, len(e.sets))
	for i, s := range e.sets {
		if longest {
			res[i] = regexp.MustCompile(`^(?:` + s.search + `)`)
			res[i].Longest()
		} else {
			res[i] = regexp.MustCompile(s.search)
		}
	}
	refs.Store(k, res)
	return res
}

// oneShot is the reference: it replaces over the whole input at once,
// with one regexp per set, taking the leftmost match and, at the same
// position, the set listed first; empty matches are skipped by one
// character and matches do not overlap.
func oneShot(e *Expr, in []byte) ([]byte, int) {
	res := refRegexps(e, false)
	var out []byte
	pos, scan, n := 0, 0, 0
	for iter := 0; iter <= len(in)+1 && scan < len(in); iter++ {
		start, end, which := -1, -1, -1
		for i, re := range res {
			loc := re.FindIndex(in[scan:])
			if loc != nil && (start < 0 || scan+loc[0] < start) {
				start, end, which = scan+loc[0], scan+loc[1], i
			}
		}
		if start < 0 {
			break
		}
		if start == end {
			if start >= len(in) {
				break
			}
			_, w := utf8.DecodeRune(in[start:])
			scan = start + w
			continue
		}
		out = append(out, in[pos:start]...)
		out = append(out, e.sets[which].repl...)
		pos, scan = end, end
		n++
	}
	return append(out, in[pos:]...), n
}

// longestAt returns the longest string any set can match at any position
// of in, or some length over limit as soon as it finds one.
func longestAt(e *Expr, in []byte, limit int) int {
	res := refRegexps(e, true)
	longest := 0
	for p := 0; p < len(in); p++ {
		for _, re := range res {
			if loc := re.FindIndex(in[p:]); loc != nil {
				longest = max(longest, loc[1])
			}
			if longest > limit {
				return longest
			}
		}
	}
	return longest
}

// exact reports whether the filter promises the one-shot result for in:
// no search may match more than maxMatch bytes anywhere, three bytes less
// when a multi-byte UTF-8 sequence may straddle the window's edge.
func exact(e *Expr, in []byte, maxMatch int) bool {
	if maxMatch <= 0 {
		maxMatch = DefaultMaxMatch
	}
	if e.maxLen != unbounded && e.maxLen <= maxMatch-3 {
		return true
	}
	longest := longestAt(e, in, maxMatch)
	if longest <= maxMatch-3 {
		return true
	}
	ascii := true
	for _, c := range in {
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	return ascii && longest <= maxMatch
}

// feed runs parts through a filter, checking after every Write that at
// most maxMatch-1 bytes are held and that the caller's buffer is not
// kept.
func feed(t testing.TB, e *Expr, maxMatch int, parts [][]byte) ([]byte, int) {
	t.Helper()
	limit := maxMatch - 1
	if maxMatch <= 0 {
		limit = DefaultMaxMatch - 1
	}
	f := New(e, maxMatch, nil)
	var out, scratch []byte
	for i, p := range parts {
		scratch = append(scratch[:0], p...)
		out = f.Write(out, scratch)
		for j := range scratch {
			scratch[j] = 0xEE
		}
		if len(f.buf) > limit {
			t.Fatalf("after part %d of %q: %d bytes held, max match %d", i, parts, len(f.buf), maxMatch)
		}
	}
	out = f.Close(out)
	if len(f.buf) != 0 {
		t.Fatalf("%d bytes held after Close", len(f.buf))
	}
	return out, f.Matches()
}

func randomParts(rng *rand.Rand, in []byte) [][]byte {
	k := 1 + rng.IntN(20)
	cuts := make([]int, 0, k)
	for i := 0; i < k-1; i++ {
		cuts = append(cuts, rng.IntN(len(in)+1))
	}
	slices.Sort(cuts)
	parts := make([][]byte, 0, k)
	prev := 0
	for _, c := range cuts {
		parts = append(parts, in[prev:c])
		prev = c
	}
	return append(parts, in[prev:])
}

// strategies returns e searched set by set and e searched through the
// alternation of all sets; both must give the same results.
func strategies(e *Expr) []*Expr {
	perSet, all := *e, *e
	perSet.perSet = true
	all.perSet = false
	return []*Expr{&perSet, &all}
}

func checkSplit(t *testing.T, e *Expr, maxMatch int, in []byte, parts [][]byte) {
	t.Helper()
	want, wantN := oneShot(e, in)
	for _, x := range strategies(e) {
		got, gotN := feed(t, x, maxMatch, parts)
		if !bytes.Equal(got, want) || gotN != wantN {
			t.Fatalf("expression %q (set by set %v), max match %d, parts %q:\n got %q (%d matches)\nwant %q (%d matches)", e, x.perSet, maxMatch, parts, got, gotN, want, wantN)
		}
	}
}

var filterCases = []struct {
	expr, in string
}{
	{"@a+@X@", "aaa"},
	{"@a+@X@", "baaab aab a"},
	{"@ab@@", "xxabyyabab"},
	{"@a@bbb@", "banana"},
	{"@http://@https://@", "http://x.example/ and <a href=\"http://y\">http://"},
	{"@IE@Apache@ @Windows@Linux@", "IE on Windows; IEWindows WindowsIE"},
	{`=http://imageserver-[0-9]{1,4}\.example\.com==`, "<img src=\"http://imageserver-12.example.com/a.png\"> http://imageserver-12345.example.com"},
	{"@a*@X@", "baab"},
	{"@x*@X@", "héllo wörld"},
	{"@(ab|a)(c|bcd)@Y@", "abcd abc ac abbcd"},
	{"@a|ab@X@", "abab"},
	{"@abc@1@ @ab@2@ @b@3@", "abc ab b abab"},
	{"@b@1@ @ab@2@", "ab b"},
	{"@é@e@", "café crème été"},
	{"@x.y@Z@", "xéy x€y x\xc3y x\xf0\x9f\x98\x80y xy"},
	{"@(?i)k@<k>@", "kK\u212ak"},
	{"@[^a]b@Q@", "ab cb \xc3b é\xa9b"},
	{"@[^é]b@Q@", "éb xéb éé\xa9b \xf0\x9f\x98b"},
	// A match that could run into a character cut short at the end of a
	// part, were it read as invalid bytes.
	{`@xa*[^é\x{1F600}]{3}@Q@`, "x" + strings.Repeat("a", 12) + "\U0001F600 x"},
	{"@[^€]{2}@Q@", "€€€ x€€€\xe2\x82 \xe2\x82\xe2\x82€"},
	{"@(a)(b)@1@ @(?P<n>c)(d)@2@ @(?P<n>e)@3@", "abcde ab cd e"},
	{"@zzz@y@", strings.Repeat("abcdefghij", 1000)},
	{"@fin@FIN@", "start fin"},
	{"@start@S@", "start fin"},
	{"@ab{1,3}c@Z@ @x.y@Q@", "abbbc xay abbbbc abc x\u20acy"},
	{"@[^a]b@Q@ @ab@X@ @b@Y@", "ab cb bb aab \xc3b"},
	{"@(?i)ie@Apache@ @Windows@Linux@", "IE ie Ie on Windows, iE"},
	{"@a*@X@ @b@Y@", "baab b"},
	{"@b@Y@ @a*@X@", "baab b"},
	{"@x|ab@1@ @a@2@ @abc@3@", "abc xabcx aab"},
}

func TestFilterEquivalence(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range filterCases {
		e := mustParse(t, tc.expr)
		in := []byte(tc.in)
		for _, m := range []int{4, 5, 8, 16, 0} {
			if !exact(e, in, m) {
				continue
			}
			// Every split in two, for inputs small enough.
			if len(in) <= 200 {
				for i := 0; i <= len(in); i++ {
					checkSplit(t, e, m, in, [][]byte{in[:i], in[i:]})
				}
			}
			// One byte at a time.
			ones := make([][]byte, len(in))
			for i := range in {
				ones[i] = in[i : i+1]
			}
			checkSplit(t, e, m, in, ones)
			for i := 0; i < 20; i++ {
				checkSplit(t, e, m, in, randomParts(rng, in))
			}
		}
	}
}

func TestStrategy(t *testing.T) {
	for _, tt := range []struct {
		expr   string
		perSet bool
	}{
		{"@http://@https://@", true},
		{"@[^a]b@x@", true},
		{"@IE@Apache@ @Windows@Linux@", true},
		{"@http://[a-z]+@x@ @(a)b@y@", true},
		{"@IE@Apache@ @(?i)windows@Linux@", false},
		{"@IE@Apache@ @[ab]c@x@", false},
	} {
		if got := mustParse(t, tt.expr).perSet; got != tt.perSet {
			t.Errorf("%q searched set by set: %v, want %v", tt.expr, got, tt.perSet)
		}
	}
	e, err := Profile("a.b", "c")
	if err != nil || !e.perSet || e.sets[0].lit == nil {
		t.Errorf("a literal profile source is not searched as a literal: %v", err)
	}
}

func TestFilterGreedyAcrossParts(t *testing.T) {
	e := mustParse(t, "@a+@X@")
	got, n := feed(t, e, 0, [][]byte{[]byte("a"), []byte("aa")})
	if string(got) != "X" || n != 1 {
		t.Errorf("a+ over \"a\",\"aa\" = %q (%d matches), want \"X\" (1)", got, n)
	}
	got, n = feed(t, e, 0, [][]byte{[]byte("xa"), []byte("a"), []byte("ay")})
	if string(got) != "xXy" || n != 1 {
		t.Errorf("a+ over \"xa\",\"a\",\"ay\" = %q (%d matches), want \"xXy\" (1)", got, n)
	}
}

var randomTokens = []string{
	"a", "b", "c", "x", "y", "k", "K", "\u212a", "é", "€", "\xc3", "\xa9", "\xf0\x9f", " ",
	"ab", "abb", "http://", "http:/", "IE", "Windows", "<a href=\"", "\">", "\n",
}

var randomExprs = []string{
	"@a+@X@",
	"@ab@@",
	"@a@bbb@",
	"@http://@https://@",
	"@IE@Apache@ @Windows@Linux@",
	"@a*@X@",
	"@(ab|a)(c|bcd)@Y@",
	"@abc@1@ @ab@2@ @b@3@",
	"@é@e@ @x.y@Z@",
	"@(?i)k@<k>@",
	"@[^a]b@Q@",
	"@[^é]b@Q@",
	"@ab{1,3}c@Z@",
	"@b+a@R@ @a.?b@S@",
	"@[^a]b@Q@ @ab@X@ @b@Y@",
	"@(?i)ie@Apache@ @Windows@Linux@ @a*b@C@",
}

func TestFilterRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	exprs := make([]*Expr, len(randomExprs))
	for i, s := range randomExprs {
		exprs[i] = mustParse(t, s)
	}
	maxMatches := []int{4, 6, 8, 16, 0}
	compared := 0
	for iter := 0; iter < 200; iter++ {
		e := exprs[rng.IntN(len(exprs))]
		var in []byte
		for n := rng.IntN(60); n > 0; n-- {
			in = append(in, randomTokens[rng.IntN(len(randomTokens))]...)
		}
		m := maxMatches[rng.IntN(len(maxMatches))]
		if !exact(e, in, m) {
			continue
		}
		compared++
		for i := 0; i < 5; i++ {
			checkSplit(t, e, m, in, randomParts(rng, in))
		}
	}
	if compared < 100 {
		t.Errorf("only %d of 200 random inputs were compared", compared)
	}
}

func TestFilterHoldBound(t *testing.T) {
	in := bytes.Repeat([]byte("the quick brown fox jumps over the lazy dog. "), 200)
	for _, tc := range []struct {
		expr     string
		maxMatch int
		lag      int // the most the output may trail the input
	}{
		{"@zz+@y@", 16, 15},
		{"@zz+@y@", 0, DefaultMaxMatch - 1},
		{"@http://@https://@", 0, 6},
		{"@http://@https://@", 4, 3},
	} {
		e := mustParse(t, tc.expr)
		f := New(e, tc.maxMatch, nil)
		var out []byte
		for i := range in {
			out = f.Write(out, in[i:i+1])
			fed := i + 1
			if lag := fed - len(out); lag > tc.lag || lag < 0 {
				t.Fatalf("%q max match %d: after %d bytes the output has %d (lag %d, max %d)", tc.expr, tc.maxMatch, fed, len(out), lag, tc.lag)
			}
			if !e.prefixed && fed > tc.lag && fed-len(out) != tc.lag {
				t.Fatalf("%q max match %d: after %d bytes the output has %d, holding more or less than %d", tc.expr, tc.maxMatch, fed, len(out), tc.lag)
			}
		}
		out = f.Close(out)
		if !bytes.Equal(out, in) {
			t.Fatalf("%q: Close did not emit the held bytes", tc.expr)
		}
	}
}

func TestFilterLongMatchPassesThrough(t *testing.T) {
	// A run longer than the max match cannot be seen whole; the bytes
	// still all come out, with the pieces the window saw replaced.
	e := mustParse(t, "@a+@X@")
	in := []byte("b" + strings.Repeat("a", 10) + "b")
	var parts [][]byte
	for i := range in {
		parts = append(parts, in[i:i+1])
	}
	got, n := feed(t, e, 4, parts)
	if string(got) != "bXXXb" || n != 3 {
		t.Errorf("got %q (%d matches), want \"bXXXb\" (3)", got, n)
	}
	got, n = feed(t, e, 4, [][]byte{in})
	if string(got) != "bXb" || n != 1 {
		t.Errorf("one part: got %q (%d matches), want \"bXb\" (1)", got, n)
	}
}

func TestFilterNilExpr(t *testing.T) {
	f := New(nil, 0, nil)
	out := f.Write(nil, []byte("http://x"))
	out = f.Close(out)
	if string(out) != "http://x" || f.Matches() != 0 {
		t.Errorf("nil expression changed the stream: %q", out)
	}
}

func TestFilterReuseAfterClose(t *testing.T) {
	f := New(mustParse(t, "@ab@X@"), 0, nil)
	out := f.Close(f.Write(nil, []byte("xa")))
	out = f.Close(f.Write(out, []byte("bab")))
	if string(out) != "xabX" || f.Matches() != 1 {
		t.Errorf("got %q (%d matches), want \"xabX\" (1)", out, f.Matches())
	}
}

func TestOnMatch(t *testing.T) {
	e := mustParse(t, "@IE@Apache@ @Windows@Linux@ @secret@@")
	type call struct{ match, repl string }
	in := []byte("IE on Windows; the secret of IE")
	want := []call{{"IE", "Apache"}, {"Windows", "Linux"}, {"secret", ""}, {"IE", "Apache"}}
	rng := rand.New(rand.NewPCG(5, 6))
	for iter := 0; iter < 50; iter++ {
		var calls []call
		f := New(e, 8, func(match, repl []byte) []byte {
			calls = append(calls, call{string(match), string(repl)})
			switch string(match) {
			case "IE":
				return match // keep the data unchanged
			case "Windows":
				return []byte("BSD")
			}
			return repl
		})
		var out []byte
		for _, p := range randomParts(rng, in) {
			out = f.Write(out, p)
		}
		out = f.Close(out)
		if got, wantOut := string(out), "IE on BSD; the  of IE"; got != wantOut {
			t.Fatalf("output %q, want %q", got, wantOut)
		}
		if !slices.Equal(calls, want) {
			t.Fatalf("calls %q, want %q", calls, want)
		}
		if f.Matches() != len(want) {
			t.Fatalf("Matches() = %d, want %d", f.Matches(), len(want))
		}
	}
}

func TestOnMatchCannotClobber(t *testing.T) {
	// A callback appending to the slices it gets must not overwrite the
	// stream or the expression.
	e := mustParse(t, "@ab@XY@")
	f := New(e, 0, func(match, repl []byte) []byte {
		_ = append(match, "!!!!"...)
		_ = append(repl, "????"...)
		return repl
	})
	out := f.Close(f.Write(nil, []byte("abcdab")))
	if string(out) != "XYcdXY" {
		t.Errorf("got %q, want \"XYcdXY\"", out)
	}
	if string(e.sets[0].repl) != "XY" {
		t.Errorf("replacement changed to %q", e.sets[0].repl)
	}
}

var fuzzExprs = []string{
	"@ab{1,3}c@Z@ @x.y@Q@",
	"@[^a]b@Q@ @ab@X@ @b@Y@",
	"@http://@https://@",
	"/é/e/ -K-k-",
	"@(?i)k@<k>@",
	"@[^a]b@@",
	`@[^é\x{1F600}]b@@`,
	"@a+@A@",
}

func FuzzFilter(f *testing.F) {
	f.Add([]byte("xaby http://abbbc x\xc3\xa9y"), uint64(1))
	f.Add([]byte("aaaaaaaaaaaaaaaaaaaa abc abbbbc"), uint64(2))
	f.Add([]byte("http://http://http:/http://"), uint64(3))
	f.Add([]byte("caf\xc3\xa9 K\xe2\x84\xaak \xc3b\xa9b"), uint64(4))
	f.Add([]byte(""), uint64(5))
	const maxMatch = 16
	exprs := make([]*Expr, len(fuzzExprs))
	for i, s := range fuzzExprs {
		exprs[i] = mustParse(f, s)
	}
	f.Fuzz(func(t *testing.T, in []byte, seed uint64) {
		if len(in) > 256 {
			// With a max match of 16 bytes, longer inputs exercise
			// nothing new, and they make minimizing a new input
			// (quadratic in its length) crowd out fuzzing.
			return
		}
		rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
		for _, e := range exprs {
			if !exact(e, in, maxMatch) {
				continue
			}
			want, wantN := oneShot(e, in)
			parts := randomParts(rng, in)
			for _, x := range strategies(e) {
				got, gotN := feed(t, x, maxMatch, parts)
				if !bytes.Equal(got, want) || gotN != wantN {
					t.Fatalf("expression %q (set by set %v), parts %q:\n got %q (%d matches)\nwant %q (%d matches)", e, x.perSet, parts, got, gotN, want, wantN)
				}
			}
		}
	})
}

func BenchmarkFilter(b *testing.B) {
	benchmarkFilter(b, "@http://@https://@")
}

// BenchmarkFilterSets measures the other search paths: several literal
// sets searched one by one, a regexp with a literal prefix, and an
// alternation scanned as one regexp.
func BenchmarkFilterSets(b *testing.B) {
	for _, bb := range []struct{ name, expr string }{
		{"literals", "@http://@https://@ @Item@Thing@"},
		{"prefix", "@http://[a-z.]+@https://example.net@"},
		{"alternation", "@http://@https://@ @(?i)item@Thing@"},
	} {
		b.Run(bb.name, func(b *testing.B) { benchmarkFilter(b, bb.expr) })
	}
}

func benchmarkFilter(b *testing.B, expr string) {
	const line = "<li><a href=\"http://www.example.com/catalog/item?id=1234\">Item</a> with some ordinary text around it</li>\n"
	body := bytes.Repeat([]byte(line), 16384/len(line)+1)[:16384]
	e := mustParse(b, expr)
	out := make([]byte, 0, 2*len(body))
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		f := New(e, 0, nil)
		out = out[:0]
		for p := body; len(p) > 0; {
			n := min(1460, len(p))
			out = f.Write(out, p[:n])
			p = p[n:]
		}
		out = f.Close(out)
	}
}

// TestFilterHoldsOnlyPossibleMatches: with searches that start with
// literal text, only bytes that could begin a match are held, so a line
// protocol's line end goes out at once; bytes that could are held.
func TestFilterHoldsOnlyPossibleMatches(t *testing.T) {
	for _, tc := range []struct {
		expr, in, now string // what goes out before Close
	}{
		{"@cat@dog@", "a cat and a dog\n", "a dog and a dog\n"},
		{"@cat@dog@", "one ca", "one "},
		{"@cat@dog@", "one c", "one "},
		{"@cat@dog@ @dog@bird@", "hot do", "hot "},
		{"@http://[a-z]+@x@", "see http://abc", "see "},
		{"@http://[a-z]+@x@", "see http://abc.", "see "}, // it could go on: held
		{"@a.c@x@", "zzz", "zzz"},
		{"@[ab]c@x@", "zzz", "zz"}, // no literal prefix: the whole window (1 byte)
	} {
		f := New(mustParse(t, tc.expr), 0, nil)
		if got := string(f.Write(nil, []byte(tc.in))); got != tc.now {
			t.Errorf("%q over %q: %q out before the end, want %q", tc.expr, tc.in, got, tc.now)
		}
	}
}
