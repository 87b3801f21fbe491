package tcl

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

func registerFormat(t *Commands) {
	t.Register("format", cmdFormat)
	t.Register("scan", cmdScan)
}

// maxFormatWidth is the widest field, and the longest precision, that
// format takes. Why: Go's fmt, which pads the fields, takes no more (past
// it, it writes "%!(BADWIDTH)" into the result); tclsh takes any that
// fits in memory, which an iRule does not need.
const maxFormatWidth = 1_000_000

// fieldNum appends a width or precision written in a format string to
// spec, refusing one above maxFormatWidth.
func fieldNum(spec *strings.Builder, digits string) error {
	if n, err := strconv.Atoi(digits); digits != "" && (err != nil || n > maxFormatWidth) {
		return tooLarge()
	}
	spec.WriteString(digits)
	return nil
}

func cmdFormat(in *Interp, args []Value) (Value, error) {
	if len(args) < 2 {
		return Empty, wrongArgs("format formatString ?arg ...?")
	}
	f := args[1].String()
	vals := args[2:]
	next := 0
	var b strings.Builder
	getArg := func(pos int) (Value, error) {
		if pos >= 0 {
			if pos >= len(vals) {
				return Empty, errorf("\"%%n$\" argument index out of range")
			}
			return vals[pos], nil
		}
		if next >= len(vals) {
			return Empty, errorf("not enough arguments for all format specifiers")
		}
		next++
		return vals[next-1], nil
	}
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			b.WriteByte(f[i])
			continue
		}
		i++
		if i >= len(f) {
			return Empty, errorf("format string ended in middle of field specifier")
		}
		if f[i] == '%' {
			b.WriteByte('%')
			continue
		}
		pos := -1
		// XPG3 position
		j := i
		for j < len(f) && isDigit(f[j]) {
			j++
		}
		if j < len(f) && f[j] == '$' && j > i {
			n, err := strconv.Atoi(f[i:j])
			if err != nil || n < 1 {
				return Empty, errorf("\"%%n$\" argument index out of range")
			}
			pos = n - 1
			i = j + 1
		}
		var spec strings.Builder
		spec.WriteByte('%')
		for i < len(f) && strings.IndexByte("-+ 0#", f[i]) >= 0 {
			spec.WriteByte(f[i])
			i++
		}
		if i < len(f) && f[i] == '*' {
			v, err := getArg(-1)
			if err != nil {
				return Empty, err
			}
			w, err := asInt(v)
			if err != nil {
				return Empty, err
			}
			if w < 0 {
				spec.WriteByte('-')
				w = -w
			}
			if w < 0 || w > maxFormatWidth {
				return Empty, tooLarge()
			}
			spec.WriteString(strconv.Itoa(w))
			i++
		} else {
			j := i
			for i < len(f) && isDigit(f[i]) {
				i++
			}
			if err := fieldNum(&spec, f[j:i]); err != nil {
				return Empty, err
			}
		}
		hasPrec := false
		if i < len(f) && f[i] == '.' {
			hasPrec = true
			spec.WriteByte('.')
			i++
			if i < len(f) && f[i] == '*' {
				v, err := getArg(-1)
				if err != nil {
					return Empty, err
				}
				p, err := asInt(v)
				if err != nil {
					return Empty, err
				}
				if p > maxFormatWidth {
					return Empty, tooLarge()
				}
				spec.WriteString(strconv.Itoa(max(p, 0))) // Tcl: a negative precision is 0
				i++
			} else {
				j := i
				for i < len(f) && isDigit(f[i]) {
					i++
				}
				if err := fieldNum(&spec, f[j:i]); err != nil {
					return Empty, err
				}
			}
		}
		size := 0 // 0 default, 1 h, 2 l, 3 ll
		for i < len(f) {
			switch f[i] {
			case 'h':
				size = 1
			case 'l':
				if size == 2 {
					size = 3
				} else {
					size = 2
				}
			case 'L', 'q', 'j':
				size = 3
			case 'z', 't':
				size = 2
			default:
				goto conv
			}
			i++
		}
	conv:
		if i >= len(f) {
			return Empty, errorf("format string ended in middle of field specifier")
		}
		c := f[i]
		switch c {
		case 'd', 'i', 'u', 'x', 'X', 'o', 'b', 'c':
			v, err := getArg(pos)
			if err != nil {
				return Empty, err
			}
			n, ok := asNumber(v)
			if !ok || n.kind == kDouble {
				return Empty, errorf("expected integer but got %s", q(v.String()))
			}
			if c == 'c' {
				r := truncate64(n.toBig())
				spec.WriteByte('c')
				b.WriteString(fmt.Sprintf(spec.String(), rune(int32(r))))
				continue
			}
			if size == 3 {
				bi := n.toBig()
				goc := c
				if c == 'i' || c == 'u' {
					goc = 'd'
				}
				spec.WriteByte(goc)
				b.WriteString(fmt.Sprintf(spec.String(), bi))
				continue
			}
			x := truncate64(n.toBig())
			if size == 1 {
				x = int64(int16(x))
			}
			switch c {
			case 'd', 'i':
				spec.WriteByte('d')
				b.WriteString(fmt.Sprintf(spec.String(), x))
			case 'u':
				spec.WriteByte('d')
				u := uint64(x)
				if size == 1 {
					u = uint64(uint16(x))
				}
				b.WriteString(fmt.Sprintf(spec.String(), u))
			default:
				u := uint64(x)
				if size == 1 {
					u = uint64(uint16(x))
				}
				spec.WriteByte(c)
				b.WriteString(fmt.Sprintf(spec.String(), u))
			}
		case 's':
			v, err := getArg(pos)
			if err != nil {
				return Empty, err
			}
			spec.WriteByte('s')
			b.WriteString(fmt.Sprintf(spec.String(), v.String()))
		case 'f', 'e', 'E', 'g', 'G':
			v, err := getArg(pos)
			if err != nil {
				return Empty, err
			}
			x, err := v.Float64()
			if err != nil {
				return Empty, err
			}
			if !hasPrec {
				spec.WriteString(".6")
			}
			if math.IsInf(x, 0) || math.IsNaN(x) {
				s := "Inf"
				if math.IsNaN(x) {
					s = "NaN"
				} else if x < 0 {
					s = "-Inf"
				}
				b.WriteString(s)
				continue
			}
			spec.WriteByte(c)
			b.WriteString(fmt.Sprintf(spec.String(), x))
		default:
			return Empty, errorf("bad field specifier %s", q(string(c)))
		}
	}
	return Str(b.String()), nil
}

// maxScanSlots is the highest XPG position (%n$) a scan without
// variable names takes: its result has as many elements. Why: tclsh
// grows its result to any position and crashes on one near 2^31; with
// variable names the position must name one of them, as in Tcl.
const maxScanSlots = 1 << 16

func cmdScan(in *Interp, args []Value) (Value, error) {
	if len(args) < 3 {
		return Empty, wrongArgs("scan string format ?varName ...?")
	}
	s := args[1].String()
	f := args[2].String()
	vars := args[3:]
	var results []Value
	var have []bool
	pos := 0
	conversions := 0
	nextSlot := 0
	underflow := false
	setSlot := func(slot int, v Value) {
		for len(results) <= slot {
			results = append(results, Empty)
			have = append(have, false)
		}
		results[slot] = v
		have[slot] = true
	}
	totalSlots := 0
	for i := 0; i < len(f); i++ {
		c := f[i]
		if isSpace(c) {
			for pos < len(s) && isSpace(s[pos]) {
				pos++
			}
			continue
		}
		if c != '%' {
			if pos >= len(s) {
				underflow = true
				break
			}
			if s[pos] != c {
				break
			}
			pos++
			continue
		}
		i++
		if i >= len(f) {
			return Empty, errorf("bad scan conversion character \"\"")
		}
		if f[i] == '%' {
			for pos < len(s) && isSpace(s[pos]) {
				pos++
			}
			if pos < len(s) && s[pos] == '%' {
				pos++
				continue
			}
			break
		}
		suppress := false
		slot := -1
		if f[i] == '*' {
			suppress = true
			i++
		} else {
			j := i
			for j < len(f) && isDigit(f[j]) {
				j++
			}
			if j < len(f) && f[j] == '$' && j > i {
				n, err := strconv.Atoi(f[i:j])
				most := maxScanSlots
				if len(vars) > 0 {
					most = len(vars)
				}
				if err != nil || n < 1 || n > most {
					return Empty, errorf("\"%%n$\" argument index out of range")
				}
				slot = n - 1
				i = j + 1
			}
		}
		width := 0
		for i < len(f) && isDigit(f[i]) {
			width = width*10 + int(f[i]-'0')
			i++
		}
		for i < len(f) && (f[i] == 'l' || f[i] == 'L' || f[i] == 'h' || f[i] == 'z' || f[i] == 't' || f[i] == 'j' || f[i] == 'q') {
			i++
		}
		if i >= len(f) {
			return Empty, errorf("bad scan conversion character \"\"")
		}
		conv := f[i]
		var set string
		if conv == '[' {
			j := i + 1
			if j < len(f) && f[j] == '^' {
				j++
			}
			if j < len(f) && f[j] == ']' {
				j++
			}
			k := strings.IndexByte(f[j:], ']')
			if k < 0 {
				return Empty, errorf("unmatched [ in format string")
			}
			set = f[i+1 : j+k]
			i = j + k
		}
		if !suppress && conv != 'n' {
			if slot < 0 {
				slot = nextSlot
				nextSlot++
			}
			if slot+1 > totalSlots {
				totalSlots = slot + 1
			}
		} else if conv == 'n' && !suppress {
			if slot < 0 {
				slot = nextSlot
				nextSlot++
			}
			if slot+1 > totalSlots {
				totalSlots = slot + 1
			}
		}
		if conv != 'c' && conv != '[' && conv != 'n' {
			for pos < len(s) && isSpace(s[pos]) {
				pos++
			}
		}
		if conv == 'n' {
			if !suppress {
				setSlot(slot, Int(int64(utf8.RuneCountInString(s[:pos]))))
			}
			continue
		}
		if pos >= len(s) {
			underflow = true
			break
		}
		limit := len(s)
		if width > 0 && pos+width < limit {
			limit = pos + width
		}
		var val Value
		switch conv {
		case 'd', 'i', 'u', 'x', 'X', 'o', 'b':
			base := map[byte]int{'d': 10, 'u': 10, 'i': 0, 'x': 16, 'X': 16, 'o': 8, 'b': 2}[conv]
			j := pos
			if j < limit && (s[j] == '+' || s[j] == '-') {
				j++
			}
			if base == 16 && j+1 < limit && s[j] == '0' && (s[j+1] == 'x' || s[j+1] == 'X') {
				j += 2
			}
			if base == 0 {
				base = 10
				if j+1 < limit && s[j] == '0' && (s[j+1] == 'x' || s[j+1] == 'X') {
					base = 16
					j += 2
				} else if j < limit && s[j] == '0' {
					base = 8
				}
			}
			ds := j
			for j < limit && digitVal(s[j]) < base {
				j++
			}
			if j == ds {
				goto done
			}
			digits := s[ds:j]
			bi, _ := new(big.Int).SetString(digits, base)
			if s[pos] == '-' {
				bi.Neg(bi)
			}
			if conv == 'u' && bi.Sign() < 0 {
				bi.And(bi, new(big.Int).SetUint64(math.MaxUint64))
			}
			val = BigInt(bi)
			pos = j
		case 'c':
			r, n := utf8.DecodeRuneInString(s[pos:])
			val = Int(int64(r))
			pos += n
		case 's':
			j := pos
			for j < limit && !isSpace(s[j]) {
				j++
			}
			val = Str(s[pos:j])
			pos = j
		case 'f', 'e', 'E', 'g', 'G':
			j := pos
			if j < limit && (s[j] == '+' || s[j] == '-') {
				j++
			}
			digits := 0
			for j < limit && isDigit(s[j]) {
				j++
				digits++
			}
			if j < limit && s[j] == '.' {
				j++
				for j < limit && isDigit(s[j]) {
					j++
					digits++
				}
			}
			if digits == 0 {
				goto done
			}
			if j < limit && (s[j] == 'e' || s[j] == 'E') {
				k := j + 1
				if k < limit && (s[k] == '+' || s[k] == '-') {
					k++
				}
				if k < limit && isDigit(s[k]) {
					for k < limit && isDigit(s[k]) {
						k++
					}
					j = k
				}
			}
			x, _ := strconv.ParseFloat(s[pos:j], 64)
			val = Double(x)
			pos = j
		case '[':
			neg := strings.HasPrefix(set, "^")
			if neg {
				set = set[1:]
			}
			j := pos
			for j < limit {
				r, n := utf8.DecodeRuneInString(s[j:])
				if inScanSet(set, r) == neg {
					break
				}
				j += n
			}
			if j == pos {
				goto done
			}
			val = Str(s[pos:j])
			pos = j
		default:
			return Empty, errorf("bad scan conversion character %s", q(string(conv)))
		}
		if !suppress {
			setSlot(slot, val)
			conversions++
		}
	}
done:
	if len(vars) > 0 {
		if len(vars) != totalSlots {
			return Empty, errorf("different numbers of variable names and field specifiers")
		}
		for k := 0; k < len(have); k++ {
			if have[k] {
				if _, err := in.SetVar(vars[k].String(), results[k]); err != nil {
					return Empty, err
				}
			}
		}
		if underflow && conversions == 0 {
			return Int(-1), nil
		}
		return Int(int64(conversions)), nil
	}
	for len(results) < totalSlots {
		results = append(results, Empty)
	}
	if underflow && conversions == 0 {
		return Empty, nil
	}
	return List(results...), nil
}

func inScanSet(set string, r rune) bool {
	for i := 0; i < len(set); {
		lo, n := utf8.DecodeRuneInString(set[i:])
		i += n
		if i+1 < len(set) && set[i] == '-' {
			hi, m := utf8.DecodeRuneInString(set[i+1:])
			i += 1 + m
			if r >= lo && r <= hi {
				return true
			}
			continue
		}
		if r == lo {
			return true
		}
	}
	return false
}
