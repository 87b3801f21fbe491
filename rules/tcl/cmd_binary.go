package tcl

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Bytes makes a value from raw bytes the way Tcl holds byte arrays: each
// byte is one character (U+0000 to U+00FF). ASCII data is used as is.
func Bytes(b []byte) Value {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			r := make([]rune, len(b))
			for i, c := range b {
				r[i] = rune(c)
			}
			return Str(string(r))
		}
	}
	return Str(string(b))
}

// BytesOf returns the byte-array form of a value: the low byte of each
// character, as Tcl_GetByteArrayFromObj does.
func BytesOf(v Value) []byte {
	s := v.String()
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			out := make([]byte, 0, len(s))
			for _, r := range s {
				out = append(out, byte(r))
			}
			return out
		}
	}
	return []byte(s)
}

func registerBinary(t *Commands) {
	t.Register("binary", cmdBinary)
}

func cmdBinary(in *Interp, args []Value) (Value, error) {
	if len(args) < 3 {
		return Empty, wrongArgs("binary subcommand ?arg ...?")
	}
	switch args[1].String() {
	case "format":
		return binaryFormat(args[2].String(), args[3:])
	case "scan":
		if len(args) < 4 {
			return Empty, wrongArgs("binary scan value formatString ?varName ...?")
		}
		return binaryScan(in, BytesOf(args[2]), args[3].String(), args[4:])
	case "encode":
		return binaryEncode(args[2].String(), args[3:])
	case "decode":
		return binaryDecode(args[2].String(), args[3:])
	}
	return Empty, errorf("unknown or ambiguous subcommand %s: must be decode, encode, format, or scan", q(args[1].String()))
}

// maxBinCount is the largest count a binary field takes; a larger one
// counts as this. Why: Tcl reads counts as C ints, and no value reaches
// this size (see maxValueLen), so a scan stops at such a count and a
// format refuses it, as they would at the count written, while positions
// and sizes computed from counts cannot overflow (a count near 2^63 made
// `binary scan` slice out of range and took the daemon down).
const maxBinCount = math.MaxInt32

type binSpec struct {
	typ      byte
	count    int // -1 none, -2 star
	unsigned bool
}

func parseBinSpecs(f string) ([]binSpec, error) {
	var out []binSpec
	i := 0
	for i < len(f) {
		c := f[i]
		i++
		if isSpace(c) {
			continue
		}
		if !strings.ContainsRune("aAbBhHcsSiItnwWmfrRdqQxX@", rune(c)) {
			return nil, errorf("bad field specifier %s", q(string(c)))
		}
		sp := binSpec{typ: c, count: -1}
		if i < len(f) && f[i] == 'u' {
			sp.unsigned = true
			i++
		}
		if i < len(f) && f[i] == '*' {
			sp.count = -2
			i++
		} else if i < len(f) && isDigit(f[i]) {
			j := i
			for j < len(f) && isDigit(f[j]) {
				j++
			}
			n, err := strconv.Atoi(f[i:j])
			if err != nil || n > maxBinCount {
				n = maxBinCount
			}
			sp.count = n
			i = j
		}
		out = append(out, sp)
	}
	return out, nil
}

func intSize(t byte) (int, bool) { // size, bigEndian
	switch t {
	case 'c':
		return 1, false
	case 's', 't':
		return 2, t == 't' && false
	case 'S':
		return 2, true
	case 'i', 'n':
		return 4, false
	case 'I':
		return 4, true
	case 'w', 'm':
		return 8, false
	case 'W':
		return 8, true
	}
	return 0, false
}

func binaryFormat(f string, vals []Value) (Value, error) {
	specs, err := parseBinSpecs(f)
	if err != nil {
		return Empty, err
	}
	var buf []byte
	pos := 0
	next := 0
	arg := func() (Value, error) {
		if next >= len(vals) {
			return Empty, errorf("not enough arguments for all format specifiers")
		}
		next++
		return vals[next-1], nil
	}
	// ensure grows the result to n bytes; it refuses a result longer
	// than a value may be.
	ensure := func(n int) error {
		if n > maxValueLen {
			return tooLarge()
		}
		if n > len(buf) {
			buf = append(buf, make([]byte, n-len(buf))...)
		}
		return nil
	}
	for _, sp := range specs {
		switch sp.typ {
		case 'a', 'A':
			v, err := arg()
			if err != nil {
				return Empty, err
			}
			data := BytesOf(v)
			n := sp.count
			if n == -2 {
				n = len(data)
			} else if n == -1 {
				n = 1
			}
			if err := ensure(pos + n); err != nil {
				return Empty, err
			}
			for k := 0; k < n; k++ {
				switch {
				case k < len(data):
					buf[pos+k] = data[k]
				case sp.typ == 'A':
					buf[pos+k] = ' '
				default:
					buf[pos+k] = 0
				}
			}
			pos += n
		case 'b', 'B', 'h', 'H':
			v, err := arg()
			if err != nil {
				return Empty, err
			}
			s := v.String()
			n := sp.count
			if n == -2 {
				n = len(s)
			} else if n == -1 {
				n = 1
			}
			per := 8
			if sp.typ == 'h' || sp.typ == 'H' {
				per = 2
			}
			nbytes := (n + per - 1) / per
			if err := ensure(pos + nbytes); err != nil {
				return Empty, err
			}
			for k := 0; k < n && k < len(s); k++ {
				var d int
				if per == 8 {
					if s[k] != '0' && s[k] != '1' {
						return Empty, errorf("binary string contains invalid character %s", q(string(s[k])))
					}
					d = int(s[k] - '0')
					bit := k % 8
					if sp.typ == 'B' {
						bit = 7 - bit
					}
					buf[pos+k/8] |= byte(d << bit)
				} else {
					d = digitVal(s[k])
					if d >= 16 {
						return Empty, errorf("hexadecimal string contains invalid character %s", q(string(s[k])))
					}
					shift := 0
					if (sp.typ == 'H') == (k%2 == 0) {
						shift = 4
					}
					buf[pos+k/2] |= byte(d << shift)
				}
			}
			pos += nbytes
		case 'x':
			n := sp.count
			if n == -1 {
				n = 1
			}
			if n == -2 {
				return Empty, errorf("cannot use \"*\" in format string with \"x\"")
			}
			if err := ensure(pos + n); err != nil {
				return Empty, err
			}
			pos += n
		case 'X':
			n := sp.count
			if n == -1 {
				n = 1
			}
			if n == -2 || n > pos {
				n = pos
			}
			pos -= n
		case '@':
			if sp.count == -1 {
				return Empty, errorf("missing count for \"@\" field specifier")
			}
			if sp.count == -2 {
				pos = len(buf)
			} else {
				pos = sp.count
				if err := ensure(pos); err != nil {
					return Empty, err
				}
			}
		default:
			v, err := arg()
			if err != nil {
				return Empty, err
			}
			items := []Value{v}
			if sp.count != -1 {
				l, err := AsList(v)
				if err != nil {
					return Empty, err
				}
				items = l
				if sp.count >= 0 {
					if sp.count > len(l) {
						return Empty, errorf("number of elements in list does not match count")
					}
					items = l[:sp.count]
				}
			}
			for _, it := range items {
				switch sp.typ {
				case 'f', 'r', 'R', 'd', 'q', 'Q':
					x, err := it.Float64()
					if err != nil {
						return Empty, err
					}
					switch sp.typ {
					case 'f', 'r':
						if err := ensure(pos + 4); err != nil {
							return Empty, err
						}
						binary.LittleEndian.PutUint32(buf[pos:], math.Float32bits(float32(x)))
						pos += 4
					case 'R':
						if err := ensure(pos + 4); err != nil {
							return Empty, err
						}
						binary.BigEndian.PutUint32(buf[pos:], math.Float32bits(float32(x)))
						pos += 4
					case 'd', 'q':
						if err := ensure(pos + 8); err != nil {
							return Empty, err
						}
						binary.LittleEndian.PutUint64(buf[pos:], math.Float64bits(x))
						pos += 8
					default:
						if err := ensure(pos + 8); err != nil {
							return Empty, err
						}
						binary.BigEndian.PutUint64(buf[pos:], math.Float64bits(x))
						pos += 8
					}
				default:
					n, ok := asNumber(it)
					if !ok {
						return Empty, errorf("expected integer but got %s", q(it.String()))
					}
					var x int64
					if n.kind == kDouble {
						b, err := toEntier(n)
						if err != nil {
							return Empty, err
						}
						x = truncate64(b)
					} else {
						x = truncate64(n.toBig())
					}
					size, be := intSize(sp.typ)
					if err := ensure(pos + size); err != nil {
						return Empty, err
					}
					for k := 0; k < size; k++ {
						shift := uint(8 * k)
						if be {
							shift = uint(8 * (size - 1 - k))
						}
						buf[pos+k] = byte(uint64(x) >> shift)
					}
					pos += size
				}
			}
		}
	}
	if next < len(vals) {
		return Empty, errorf("too many arguments for all format specifiers")
	}
	return Bytes(buf), nil
}

func binaryScan(in *Interp, data []byte, f string, vars []Value) (Value, error) {
	specs, err := parseBinSpecs(f)
	if err != nil {
		return Empty, err
	}
	pos := 0
	done := 0
	vi := 0
	set := func(v Value) error {
		if vi >= len(vars) {
			return errorf("not enough arguments for all format specifiers")
		}
		_, err := in.SetVar(vars[vi].String(), v)
		vi++
		return err
	}
	for _, sp := range specs {
		switch sp.typ {
		case 'a', 'A':
			n := sp.count
			if n == -2 {
				n = len(data) - pos
			} else if n == -1 {
				n = 1
			}
			if pos+n > len(data) || n < 0 {
				goto out
			}
			chunk := data[pos : pos+n]
			if sp.typ == 'A' {
				end := len(chunk)
				for end > 0 && (chunk[end-1] == ' ' || chunk[end-1] == 0) {
					end--
				}
				chunk = chunk[:end]
			}
			if err := set(Bytes(chunk)); err != nil {
				return Empty, err
			}
			pos += n
			done++
		case 'b', 'B', 'h', 'H':
			per := 8
			if sp.typ == 'h' || sp.typ == 'H' {
				per = 2
			}
			n := sp.count
			if n == -2 {
				n = (len(data) - pos) * per
			} else if n == -1 {
				n = 1
			}
			nbytes := (n + per - 1) / per
			if pos+nbytes > len(data) {
				goto out
			}
			var b strings.Builder
			for k := 0; k < n; k++ {
				c := data[pos+k/per]
				if per == 8 {
					bit := k % 8
					if sp.typ == 'B' {
						bit = 7 - bit
					}
					b.WriteByte('0' + (c>>bit)&1)
				} else {
					shift := 0
					if (sp.typ == 'H') == (k%2 == 0) {
						shift = 4
					}
					b.WriteByte("0123456789abcdef"[(c>>shift)&0xf])
				}
			}
			if err := set(Str(b.String())); err != nil {
				return Empty, err
			}
			pos += nbytes
			done++
		case 'x':
			n := sp.count
			if n == -1 {
				n = 1
			}
			if n == -2 {
				n = len(data) - pos
			}
			pos += n
		case 'X':
			n := sp.count
			if n == -1 {
				n = 1
			}
			if n == -2 || n > pos {
				n = pos
			}
			pos -= n
		case '@':
			if sp.count == -2 {
				pos = len(data)
			} else if sp.count >= 0 {
				pos = sp.count
			}
		default:
			var size int
			switch sp.typ {
			case 'f', 'r', 'R':
				size = 4
			case 'd', 'q', 'Q':
				size = 8
			default:
				size, _ = intSize(sp.typ)
			}
			n := sp.count
			single := n == -1
			if n == -1 {
				n = 1
			} else if n == -2 {
				n = (len(data) - pos) / size
			}
			if pos+n*size > len(data) {
				goto out
			}
			items := make([]Value, n)
			for k := 0; k < n; k++ {
				p := data[pos+k*size : pos+(k+1)*size]
				switch sp.typ {
				case 'f', 'r':
					items[k] = Double(float64(math.Float32frombits(binary.LittleEndian.Uint32(p))))
				case 'R':
					items[k] = Double(float64(math.Float32frombits(binary.BigEndian.Uint32(p))))
				case 'd', 'q':
					items[k] = Double(math.Float64frombits(binary.LittleEndian.Uint64(p)))
				case 'Q':
					items[k] = Double(math.Float64frombits(binary.BigEndian.Uint64(p)))
				default:
					_, be := intSize(sp.typ)
					var u uint64
					for j := 0; j < size; j++ {
						if be {
							u = u<<8 | uint64(p[j])
						} else {
							u |= uint64(p[j]) << (8 * j)
						}
					}
					if sp.unsigned {
						if size == 8 && u > math.MaxInt64 {
							items[k] = BigInt(newBigUint(u))
						} else {
							items[k] = Int(int64(u))
						}
					} else {
						shift := uint(64 - 8*size)
						items[k] = Int(int64(u<<shift) >> shift)
					}
				}
			}
			var v Value
			if single {
				v = items[0]
			} else {
				v = List(items...)
			}
			if err := set(v); err != nil {
				return Empty, err
			}
			pos += n * size
			done++
		}
	}
out:
	return Int(int64(done)), nil
}

func newBigUint(u uint64) *big.Int { return new(big.Int).SetUint64(u) }

// binaryEncode implements binary encode hex|base64 (Tcl 8.6), which rules
// use around digests: binary encode hex [sha256 $x].
func binaryEncode(format string, args []Value) (Value, error) {
	switch format {
	case "hex":
		if len(args) != 1 {
			return Empty, wrongArgs("binary encode hex data")
		}
		return Str(hex.EncodeToString(BytesOf(args[0]))), nil
	case "base64":
		maxlen, wrap := 0, "\n"
		for len(args) > 1 {
			switch args[0].String() {
			case "-maxlen":
				n, err := asInt(args[1])
				if err != nil {
					return Empty, err
				}
				if n < 0 {
					return Empty, errorf("line length out of range")
				}
				maxlen = n
			case "-wrapchar":
				wrap = args[1].String()
			default:
				return Empty, errorf("bad option %s: must be -maxlen or -wrapchar", q(args[0].String()))
			}
			args = args[2:]
		}
		if len(args) != 1 {
			return Empty, wrongArgs("binary encode base64 ?-maxlen len? ?-wrapchar char? data")
		}
		out := base64.StdEncoding.EncodeToString(BytesOf(args[0]))
		if maxlen > 0 && len(out) > maxlen {
			var b strings.Builder
			for i := 0; i < len(out); i += maxlen {
				if i > 0 {
					b.WriteString(wrap)
				}
				b.WriteString(out[i:min(i+maxlen, len(out))])
			}
			out = b.String()
		}
		return Str(out), nil
	}
	return Empty, errorf("unknown subcommand %s: must be base64, hex, or uuencode", q(format))
}

// binaryDecode implements binary decode hex|base64 ?-strict?: without
// -strict, whitespace (and for hex, nothing else) is skipped.
func binaryDecode(format string, args []Value) (Value, error) {
	if format != "hex" && format != "base64" {
		return Empty, errorf("unknown subcommand %s: must be base64, hex, or uuencode", q(format))
	}
	strict := false
	if len(args) == 2 && args[0].String() == "-strict" {
		strict = true
		args = args[1:]
	}
	if len(args) != 1 {
		return Empty, wrongArgs("binary decode " + format + " ?options? data")
	}
	in := BytesOf(args[0])
	clean := make([]byte, 0, len(in))
	for i, c := range in {
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' {
			if strict {
				return Empty, errorf("invalid %s digit %s at position %d", map[string]string{"hex": "hexadecimal", "base64": "base64"}[format], q(string(rune(c))), i)
			}
			continue
		}
		clean = append(clean, c)
	}
	switch format {
	case "hex":
		for i, c := range clean {
			if _, ok := unhexDigit(c); !ok {
				return Empty, errorf("invalid hexadecimal digit %s at position %d", q(string(rune(c))), i)
			}
		}
		if len(clean)%2 == 1 {
			if strict {
				return Empty, errorf("invalid hexadecimal digit %s at position %d", q(string(rune(clean[len(clean)-1]))), len(clean)-1)
			}
			clean = clean[:len(clean)-1]
		}
		out := make([]byte, len(clean)/2)
		for i := range out {
			hi, _ := unhexDigit(clean[2*i])
			lo, _ := unhexDigit(clean[2*i+1])
			out[i] = hi<<4 | lo
		}
		return Bytes(out), nil
	case "base64":
		s := strings.TrimRight(string(clean), "=")
		out, err := base64.RawStdEncoding.DecodeString(s)
		if err != nil {
			return Empty, errorf("invalid base64 character in %s", q(string(clean)))
		}
		return Bytes(out), nil
	}
	return Empty, errorf("unknown subcommand %s: must be base64, hex, or uuencode", q(format))
}

func unhexDigit(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
