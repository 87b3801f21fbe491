// Package tcl is the Tcl interpreter behind openltm's iRules: a Tcl 8.6
// subset whose word rules, list quoting, expr arithmetic and string forms
// match the real Tcl closely enough that rules written for BIG-IP run
// unchanged. Scripts are compiled once into a tree of commands and run many
// times; values keep their string form beside a cached internal form so hot
// paths do not reparse.
package tcl

import (
	"math"
	"math/big"
	"strconv"
	"strings"
)

type kind uint8

const (
	kStr    kind = iota // only the string form
	kInt                // i holds a 64-bit integer
	kDouble             // f holds a double
	kBig                // rep holds a *big.Int outside the 64-bit range
	kList               // rep holds a *listRep
	kScript             // rep holds a *Script
	kExpr               // rep holds an *exprNode
)

// Value is a Tcl value: a string plus an optional cached internal form.
// It is passed by value so that integers and doubles never allocate; the
// heavier forms (lists, compiled scripts and expressions) hang off a pointer
// that copies share. Every command's arguments are copied onto the
// interpreter's stack, so the struct is kept small: a double is stored as
// its bits in i (kind tells which), which makes a Value 48 bytes, not 56.
type Value struct {
	s      string
	rep    any
	i      int64 // the integer (kInt) or the double's bits (kDouble)
	kind   kind
	hasStr bool
}

type listRep struct{ elems []Value }

// Str makes a string value; the internal form is computed on first use.
func Str(s string) Value { return Value{s: s, hasStr: true} }

// Int makes an integer value without formatting it; the string form is
// produced only if someone asks for it.
func Int(i int64) Value { return Value{i: i, kind: kInt} }

// Double makes a floating-point value printed the way Tcl prints doubles.
func Double(f float64) Value { return Value{i: int64(math.Float64bits(f)), kind: kDouble} }

// float returns the double held by a kDouble value.
func (v Value) float() float64 { return math.Float64frombits(uint64(v.i)) }

// Bool makes the integer 1 or 0, Tcl's canonical booleans.
func Bool(b bool) Value {
	if b {
		return Int(1)
	}
	return Int(0)
}

// BigInt makes an integer value of any size, normalised to a 64-bit integer
// when it fits so that the fast paths stay fast.
func BigInt(b *big.Int) Value {
	if b.IsInt64() {
		return Int(b.Int64())
	}
	return Value{rep: b, kind: kBig}
}

// List makes a list value from its elements; the canonical string form is
// built lazily with Tcl's quoting rules.
func List(elems ...Value) Value {
	return Value{rep: &listRep{elems: elems}, kind: kList}
}

// Empty is the empty string, Tcl's usual "no result".
var Empty = Value{hasStr: true}

// maxValueLen bounds the values that one command makes from a count or a
// width (string repeat, binary format), and tooLarge is the error past
// it, in Tcl's words (a new one each time: the interpreter records on an
// error where it was raised). Why: tclsh makes any that fits in memory,
// and crashes on some larger ones; an iRule making one with a single
// command would hold a gigabyte per connection, and the interpreter's
// step budget cannot stop it, as the command is one step.
const maxValueLen = 1 << 24

func tooLarge() *Error { return errorf("result exceeds max size for a Tcl value") }

// String returns the string form, computing it from the internal form when
// the value was built from a number or a list.
func (v Value) String() string {
	if v.hasStr {
		return v.s
	}
	switch v.kind {
	case kInt:
		return strconv.FormatInt(v.i, 10)
	case kDouble:
		return FormatDouble(v.float())
	case kBig:
		return v.rep.(*big.Int).String()
	case kList:
		return formatList(v.rep.(*listRep).elems)
	}
	return v.s
}

// IsEmpty reports whether the string form is empty without building it for
// numbers, which are never empty.
func (v Value) IsEmpty() bool {
	if v.hasStr {
		return v.s == ""
	}
	switch v.kind {
	case kInt, kDouble, kBig:
		return false
	case kList:
		return len(v.rep.(*listRep).elems) == 0
	}
	return true
}

// FormatDouble prints a double as Tcl 8.6 does with tcl_precision 0: the
// shortest digits that read back to the same number, in fixed notation for
// decimal exponents from -5 to 16 (with ".0" added to integral values) and
// in exponent notation otherwise (1e+17, 1e-5).
func FormatDouble(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	case math.IsNaN(f):
		return "NaN"
	}
	digits := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mant, expPart, _ := strings.Cut(digits, "e")
	exp, _ := strconv.Atoi(expPart)
	neg := false
	if mant[0] == '-' {
		neg = true
		mant = mant[1:]
	}
	ds := strings.Replace(mant, ".", "", 1)
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	if exp < -4 || exp > 16 {
		b.WriteByte(ds[0])
		if len(ds) > 1 {
			b.WriteByte('.')
			b.WriteString(ds[1:])
		}
		b.WriteByte('e')
		if exp < 0 {
			b.WriteByte('-')
			exp = -exp
		} else {
			b.WriteByte('+')
		}
		b.WriteString(strconv.Itoa(exp))
		return b.String()
	}
	if exp < 0 {
		b.WriteString("0.")
		for i := 0; i < -exp-1; i++ {
			b.WriteByte('0')
		}
		b.WriteString(ds)
		return b.String()
	}
	if len(ds) <= exp+1 {
		b.WriteString(ds)
		for i := len(ds); i < exp+1; i++ {
			b.WriteByte('0')
		}
		b.WriteString(".0")
		return b.String()
	}
	b.WriteString(ds[:exp+1])
	b.WriteByte('.')
	b.WriteString(ds[exp+1:])
	return b.String()
}

// number is the numeric reading of a value: an int64, a big integer or a
// double. ok is false when the string is not a number at all.
type number struct {
	i    int64
	b    *big.Int
	f    float64
	kind kind // kInt, kBig or kDouble
}

// asNumber reads v as a Tcl number (integers in decimal, 0x, 0o, 0b and
// leading-0 octal; doubles including Inf and NaN), allowing surrounding
// white space as Tcl does.
func asNumber(v Value) (number, bool) {
	switch v.kind {
	case kInt:
		return number{i: v.i, kind: kInt}, true
	case kDouble:
		return number{f: v.float(), kind: kDouble}, true
	case kBig:
		return number{b: v.rep.(*big.Int), kind: kBig}, true
	}
	return parseNumber(v.String())
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func trimSpace(s string) string {
	i, j := 0, len(s)
	for i < j && isSpace(s[i]) {
		i++
	}
	for j > i && isSpace(s[j-1]) {
		j--
	}
	return s[i:j]
}

// parseNumber implements Tcl's number syntax.
func parseNumber(s string) (number, bool) {
	s = trimSpace(s)
	if s == "" || len(s) > maxNumberLen {
		return number{}, false
	}
	if n, ok := parseInteger(s); ok {
		return n, true
	}
	if looksOctal(s) {
		return number{}, false
	}
	return parseDouble(s)
}

// looksOctal reports a leading-zero run of digits, which Tcl reads as an
// (invalid) octal integer rather than as a double.
func looksOctal(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	if len(s) < 2 || s[0] != '0' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// parseInteger reads an integer in any Tcl radix; it reports false for
// doubles and non-numbers.
func parseInteger(s string) (number, bool) {
	body := s
	neg := false
	if body != "" && (body[0] == '+' || body[0] == '-') {
		neg = body[0] == '-'
		body = body[1:]
	}
	if body == "" {
		return number{}, false
	}
	base := 10
	if len(body) > 1 && body[0] == '0' {
		switch body[1] {
		case 'x', 'X':
			base, body = 16, body[2:]
		case 'o', 'O':
			base, body = 8, body[2:]
		case 'b', 'B':
			base, body = 2, body[2:]
		case 'd', 'D':
			base, body = 10, body[2:]
		default:
			base, body = 8, body[1:]
		}
		if body == "" {
			return number{}, false
		}
	}
	// fast path: short decimal
	if base == 10 && len(body) < 19 {
		var n int64
		for i := 0; i < len(body); i++ {
			c := body[i]
			if c < '0' || c > '9' {
				return number{}, false
			}
			n = n*10 + int64(c-'0')
		}
		if neg {
			n = -n
		}
		return number{i: n, kind: kInt}, true
	}
	for i := 0; i < len(body); i++ {
		if digitVal(body[i]) >= base {
			return number{}, false
		}
	}
	if u, err := strconv.ParseUint(body, base, 64); err == nil {
		if !neg && u <= math.MaxInt64 {
			return number{i: int64(u), kind: kInt}, true
		}
		if neg && u <= 1<<63 {
			return number{i: int64(-u), kind: kInt}, true
		}
	}
	b, ok := new(big.Int).SetString(body, base)
	if !ok {
		return number{}, false
	}
	if neg {
		b.Neg(b)
	}
	return number{b: b, kind: kBig}, true
}

func digitVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'z':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'Z':
		return int(c-'A') + 10
	}
	return 99
}

// parseDouble reads a decimal floating-point number, Inf or NaN.
func parseDouble(s string) (number, bool) {
	t := s
	if t != "" && (t[0] == '+' || t[0] == '-') {
		t = t[1:]
	}
	switch strings.ToLower(t) {
	case "inf", "infinity":
		if s[0] == '-' {
			return number{f: math.Inf(-1), kind: kDouble}, true
		}
		return number{f: math.Inf(1), kind: kDouble}, true
	case "nan":
		return number{f: math.NaN(), kind: kDouble}, true
	}
	// Tcl accepts digits, one dot, an exponent; Go's ParseFloat also takes
	// hex floats, underscores and "inf", which Tcl does not.
	digits, dot, exp := 0, false, false
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && !dot && !exp:
			dot = true
		case (c == 'e' || c == 'E') && !exp && digits > 0:
			exp = true
			if i+1 < len(t) && (t[i+1] == '+' || t[i+1] == '-') {
				i++
			}
			if i+1 >= len(t) {
				return number{}, false
			}
		default:
			return number{}, false
		}
	}
	if digits == 0 {
		return number{}, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return number{f: f, kind: kDouble}, true
		}
		return number{}, false
	}
	return number{f: f, kind: kDouble}, true
}

func (n number) value() Value {
	switch n.kind {
	case kInt:
		return Int(n.i)
	case kBig:
		return BigInt(n.b)
	}
	return Double(n.f)
}

func (n number) toFloat() float64 {
	switch n.kind {
	case kInt:
		return float64(n.i)
	case kBig:
		f, _ := new(big.Float).SetInt(n.b).Float64()
		return f
	}
	return n.f
}

func (n number) toBig() *big.Int {
	if n.kind == kBig {
		return n.b
	}
	return big.NewInt(n.i)
}

// Int64 reads v as an integer as Tcl commands do ("expected integer but
// got ..."); big integers are refused here.
func (v Value) Int64() (int64, error) {
	if v.kind == kInt {
		return v.i, nil
	}
	n, ok := asNumber(v)
	if ok && n.kind == kInt {
		return n.i, nil
	}
	if ok && n.kind == kBig {
		return 0, errorf("integer value too large to represent")
	}
	return 0, errorf("expected integer but got %s", q(v.String()))
}

// asInt is Int64 that also caches nothing; used by commands taking counts.
func asInt(v Value) (int, error) {
	i, err := v.Int64()
	return int(i), err
}

// Float64 reads v as a double ("expected floating-point number but got").
func (v Value) Float64() (float64, error) {
	if v.kind == kDouble {
		return v.float(), nil
	}
	n, ok := asNumber(v)
	if !ok {
		return 0, errorf("expected floating-point number but got %s", q(v.String()))
	}
	return n.toFloat(), nil
}

// Truth reads v as a Tcl boolean: a number (non-zero is true) or one of
// true/false/yes/no/on/off and their unique prefixes.
func (v Value) Truth() (bool, error) {
	if v.kind == kInt {
		return v.i != 0, nil
	}
	if b, ok := parseBool(v.String()); ok {
		return b, nil
	}
	if n, ok := asNumber(v); ok {
		switch n.kind {
		case kInt:
			return n.i != 0, nil
		case kBig:
			return n.b.Sign() != 0, nil
		default:
			if math.IsNaN(n.f) {
				break
			}
			return n.f != 0, nil
		}
	}
	return false, errorf("expected boolean value but got %s", q(v.String()))
}

func parseBool(s string) (bool, bool) {
	if s == "" || len(s) > 5 {
		return false, false
	}
	l := strings.ToLower(s)
	switch {
	case l == "1":
		return true, true
	case l == "0":
		return false, true
	case strings.HasPrefix("true", l), strings.HasPrefix("yes", l):
		return true, true
	case strings.HasPrefix("false", l), l == "no" || l == "n":
		return false, true
	case l == "on":
		return true, true
	case len(l) >= 2 && strings.HasPrefix("off", l):
		return false, true
	}
	return false, false
}
