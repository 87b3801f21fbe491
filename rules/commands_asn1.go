package rules

import (
	"bytes"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"github.com/openltm/openltm/rules/tcl"
)

// The ASN1:: commands read and write BER and DER, which rules use to look
// into LDAP, SNMP or Kerberos messages in CLIENT_DATA (`ASN1::decode
// [TCP::payload] "(it(ia" id op version name`) and to build answers. F5
// documents the format characters (a octet string, B bit string,
// b boolean, e enumerated, i integer, l length and t tag of the next
// element, x skip, ? and ?HH optional, ( ) sequence, < > set) and the
// element subcommands (init, next, byte_offset, tag, size, length).
//
// Chosen where F5's pages are silent [M]:
//   - An element is a Tcl value, not a handle: the data, the encoding and
//     the offset of one TLV in it, made by ASN1::element and read by every
//     command that takes an element. A value that is not an element is
//     read as BER data with its first TLV at offset 0, so TCP::payload
//     can be passed where F5 passes an element. An element's text starts
//     with a NUL byte, which no BER message starts with (tag 0 is the
//     end-of-contents marker). Since Tcl values cannot change in place,
//     `byte_offset ELEMENT OFFSET` returns the moved element rather than
//     moving the caller's one; `length ELEMENT LENGTH` is refused.
//   - `ASN1::element init BER|DER ?DATA?` takes the data the element is
//     in; without it the element is empty. `ASN1::element descend
//     ELEMENT` is the first element inside a constructed one.
//   - a, b, e, i and B read the element's value whatever its tag (LDAP and
//     SNMP tag most of their fields implicitly, [0] for a simple bind's
//     password) but refuse a constructed one; ( and < enter any
//     constructed element (an LDAP operation is [APPLICATION n]). t and l
//     read the next element without consuming it. A bit string is its
//     bits as a string of 0 and 1. Integers have no size limit.
//   - The result of ASN1::decode is the number of elements it consumed at
//     the level it started at (a sequence counts once), what
//     `ASN1::element next` takes to move past them.
//   - `?` before a specifier decodes it only when the level has an
//     element left; `?HH` only when the next element's tag is HH; else the
//     variable is unset. In ASN1::encode, both leave out a component whose
//     value is empty, and ?HH gives the component the tag HH.
//   - ASN1::encode always writes definite, minimal lengths, so BER and DER
//     output differ only in a set, whose elements DER sorts. DER input is
//     refused with indefinite or non-minimal lengths.
//   - `ASN1::encode insert|replace ELEMENT OFFSET FORMAT ...` returns the
//     element's data with the encoding inserted at, or replacing the TLV
//     at, byte_offset + OFFSET, as an element at that place; enclosing
//     lengths are not rewritten (the rule does that, as on BIG-IP).

// asn1MaxDepth bounds nesting, in indefinite-length scans and in format
// strings, so that hostile input cannot recurse without end.
const asn1MaxDepth = 64

// asn1ElemMagic starts the text of every element value.
const asn1ElemMagic = "\x00ASN1"

// asn1Elem is one TLV position in data.
type asn1Elem struct {
	der  bool
	off  int
	data []byte
}

// registerASN1 adds ASN1::decode, ASN1::encode and ASN1::element.
func registerASN1(t *tcl.Commands) {
	t.Register("ASN1::decode", cmdASN1Decode)
	t.Register("ASN1::encode", cmdASN1Encode)
	t.Register("ASN1::element", cmdASN1Element)
}

// value makes the Tcl value of an element.
func (e asn1Elem) value() tcl.Value {
	b := make([]byte, 0, len(asn1ElemMagic)+12+len(e.data))
	b = append(b, asn1ElemMagic...)
	if e.der {
		b = append(b, 'D')
	} else {
		b = append(b, 'B')
	}
	b = strconv.AppendInt(b, int64(e.off), 10)
	b = append(b, 0)
	b = append(b, e.data...)
	return tcl.Bytes(b)
}

// asn1ElemOf reads an element value, or plain data as a BER element at 0.
func asn1ElemOf(v tcl.Value) asn1Elem {
	b := tcl.BytesOf(v)
	if !bytes.HasPrefix(b, []byte(asn1ElemMagic)) || len(b) < len(asn1ElemMagic)+2 {
		return asn1Elem{data: b}
	}
	rest := b[len(asn1ElemMagic):]
	der := rest[0] == 'D'
	rest = rest[1:]
	i := bytes.IndexByte(rest, 0)
	if i < 0 {
		return asn1Elem{data: b}
	}
	off, err := strconv.Atoi(string(rest[:i]))
	if err != nil || off < 0 {
		return asn1Elem{data: b}
	}
	return asn1Elem{der: der, off: off, data: rest[i+1:]}
}

// asn1TLV is one element's header as read.
type asn1TLV struct {
	tag         int64 // the identifier octets, big-endian
	constructed bool
	hdr         int  // bytes of identifier and length
	length      int  // bytes of value (for indefinite: up to the end-of-contents)
	indefinite  bool // value is followed by two end-of-contents bytes
}

// size is the bytes of the whole TLV.
func (t asn1TLV) size() int {
	if t.indefinite {
		return t.hdr + t.length + 2
	}
	return t.hdr + t.length
}

// asn1Err is the error of data that is not BER or DER.
func asn1Err(cmd string, off int, what string) error {
	return tcl.Errorf("%s: %s at byte %d", cmd, what, off)
}

// asn1Read reads the TLV at off in data.
func asn1Read(cmd string, data []byte, off int, der bool, depth int) (asn1TLV, error) {
	var t asn1TLV
	if off >= len(data) {
		return t, asn1Err(cmd, off, "truncated element: no tag")
	}
	if depth > asn1MaxDepth {
		return t, asn1Err(cmd, off, "elements nested too deep")
	}
	p := off
	id := data[p]
	t.constructed = id&0x20 != 0
	t.tag = int64(id)
	p++
	if id&0x1f == 0x1f {
		for n := 0; ; n++ {
			if p >= len(data) {
				return t, asn1Err(cmd, off, "truncated element: tag")
			}
			if n >= 3 {
				return t, asn1Err(cmd, off, "tag number too large")
			}
			t.tag = t.tag<<8 | int64(data[p])
			p++
			if data[p-1]&0x80 == 0 {
				break
			}
		}
	}
	if p >= len(data) {
		return t, asn1Err(cmd, off, "truncated element: no length")
	}
	l := data[p]
	p++
	switch {
	case l < 0x80:
		t.length = int(l)
	case l == 0x80:
		if der || !t.constructed {
			return t, asn1Err(cmd, off, "indefinite length not allowed")
		}
		t.indefinite = true
	case l == 0xff:
		return t, asn1Err(cmd, off, "bad length")
	default:
		n := int(l & 0x7f)
		if n > 4 {
			return t, asn1Err(cmd, off, "length too large")
		}
		if p+n > len(data) {
			return t, asn1Err(cmd, off, "truncated element: length")
		}
		v := 0
		for i := 0; i < n; i++ {
			v = v<<8 | int(data[p+i])
		}
		if der && (data[p] == 0 || v < 0x80) {
			return t, asn1Err(cmd, off, "non-minimal length in DER")
		}
		p += n
		t.length = v
	}
	t.hdr = p - off
	if t.indefinite {
		q := p
		for {
			if q+1 < len(data) && data[q] == 0 && data[q+1] == 0 {
				break
			}
			in, err := asn1Read(cmd, data, q, der, depth+1)
			if err != nil {
				return t, err
			}
			q += in.size()
		}
		t.length = q - p
		return t, nil
	}
	if t.length > len(data)-p {
		return t, asn1Err(cmd, off, "truncated element: value")
	}
	return t, nil
}

// asn1Level is one open sequence or set while decoding: where its values
// end, and whether it was opened with ( or <.
type asn1Level struct {
	end   int
	close byte
	after int // offset after the whole TLV (past any end-of-contents)
}

func cmdASN1Decode(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const cmd = "ASN1::decode"
	if len(args) < 3 {
		return tcl.Empty, tcl.WrongArgs(cmd + " element formatString ?varName varName ...?")
	}
	e := asn1ElemOf(args[1])
	format := args[2].String()
	vars := args[3:]
	n, err := asn1Decode(cmd, e, format, len(vars), func(i int, v tcl.Value, ok bool) error {
		name := vars[i].String()
		if !ok {
			if in.VarExists(name) {
				return in.UnsetVar(name)
			}
			return nil
		}
		_, err := in.SetVar(name, v)
		return err
	})
	if err != nil {
		return tcl.Empty, err
	}
	return tcl.Int(int64(n)), nil
}

// asn1Decode walks format over the data at e, calling set with each
// variable's value (ok false: unset it), and returns the elements
// consumed at the first level.
func asn1Decode(cmd string, e asn1Elem, format string, nvars int, set func(i int, v tcl.Value, ok bool) error) (int, error) {
	data := e.data
	if e.off > len(data) {
		return 0, asn1Err(cmd, e.off, "element offset past the data")
	}
	pos := e.off
	var stack []asn1Level
	end := len(data)
	count := 0
	vi := 0
	nextVar := func() (int, error) {
		if vi >= nvars {
			return 0, tcl.Errorf("%s: format %q needs more variable names than given", cmd, format)
		}
		vi++
		return vi - 1, nil
	}
	consumed := func() {
		if len(stack) == 0 {
			count++
		}
	}
	for i := 0; i < len(format); i++ {
		c := format[i]
		optional, wantTag := false, -1
		if c == '?' {
			optional = true
			if i+2 < len(format) && isHex(format[i+1]) && isHex(format[i+2]) {
				v, _ := strconv.ParseUint(format[i+1:i+3], 16, 8)
				wantTag = int(v)
				i += 2
			}
			i++
			if i >= len(format) {
				return 0, tcl.Errorf("%s: bad format %q: ? at the end", cmd, format)
			}
			c = format[i]
			if !strings.ContainsRune("aBbeilt(<", rune(c)) {
				return 0, tcl.Errorf("%s: bad format %q: ? before %q", cmd, format, c)
			}
		}
		if optional {
			skip := pos >= end
			if !skip && wantTag >= 0 {
				t, err := asn1Read(cmd, data[:end], pos, e.der, len(stack))
				if err != nil {
					return 0, err
				}
				skip = t.tag != int64(wantTag)
			}
			if skip {
				if c == '(' || c == '<' {
					// An optional sequence not there: skip its format
					// up to the matching close, unsetting its variables.
					depth := 0
					for ; i < len(format); i++ {
						switch format[i] {
						case '?':
							if i+2 < len(format) && isHex(format[i+1]) && isHex(format[i+2]) {
								i += 2
							}
						case '(', '<':
							depth++
						case ')', '>':
							depth--
						case 'a', 'B', 'b', 'e', 'i', 'l', 't':
							j, err := nextVar()
							if err != nil {
								return 0, err
							}
							if err := set(j, tcl.Empty, false); err != nil {
								return 0, err
							}
						}
						if depth == 0 {
							break
						}
					}
					continue
				}
				j, err := nextVar()
				if err != nil {
					return 0, err
				}
				if err := set(j, tcl.Empty, false); err != nil {
					return 0, err
				}
				continue
			}
		}
		switch c {
		case '(', '<':
			t, err := asn1Read(cmd, data[:end], pos, e.der, len(stack))
			if err != nil {
				return 0, err
			}
			if !t.constructed {
				return 0, asn1Err(cmd, pos, "expected a constructed element (sequence or set)")
			}
			if len(stack) >= asn1MaxDepth {
				return 0, asn1Err(cmd, pos, "elements nested too deep")
			}
			closer := byte(')')
			if c == '<' {
				closer = '>'
			}
			stack = append(stack, asn1Level{end: end, close: closer, after: pos + t.size()})
			pos += t.hdr
			end = pos + t.length
		case ')', '>':
			if len(stack) == 0 || stack[len(stack)-1].close != c {
				return 0, tcl.Errorf("%s: bad format %q: unbalanced %q", cmd, format, c)
			}
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			pos, end = top.after, top.end
			consumed()
		case 'x':
			t, err := asn1Read(cmd, data[:end], pos, e.der, len(stack))
			if err != nil {
				return 0, err
			}
			pos += t.size()
			consumed()
		case 't', 'l':
			t, err := asn1Read(cmd, data[:end], pos, e.der, len(stack))
			if err != nil {
				return 0, err
			}
			j, err := nextVar()
			if err != nil {
				return 0, err
			}
			v := t.tag
			if c == 'l' {
				v = int64(t.length)
			}
			if err := set(j, tcl.Int(v), true); err != nil {
				return 0, err
			}
		case 'a', 'B', 'b', 'e', 'i':
			t, err := asn1Read(cmd, data[:end], pos, e.der, len(stack))
			if err != nil {
				return 0, err
			}
			if t.constructed {
				return 0, asn1Err(cmd, pos, "expected a primitive element")
			}
			val := data[pos+t.hdr : pos+t.hdr+t.length]
			v, err := asn1Value(cmd, c, val, pos, e.der)
			if err != nil {
				return 0, err
			}
			j, err := nextVar()
			if err != nil {
				return 0, err
			}
			if err := set(j, v, true); err != nil {
				return 0, err
			}
			pos += t.size()
			consumed()
		default:
			return 0, tcl.Errorf("%s: bad format %q: unknown character %q", cmd, format, c)
		}
	}
	if len(stack) > 0 {
		count++ // an unclosed sequence was still consumed
	}
	return count, nil
}

// asn1Value is the Tcl value of a primitive element's contents.
func asn1Value(cmd string, c byte, val []byte, pos int, der bool) (tcl.Value, error) {
	switch c {
	case 'a':
		return tcl.Bytes(val), nil
	case 'b':
		if len(val) != 1 {
			return tcl.Empty, asn1Err(cmd, pos, "bad boolean length")
		}
		if der && val[0] != 0 && val[0] != 0xff {
			return tcl.Empty, asn1Err(cmd, pos, "bad boolean value in DER")
		}
		return tcl.Bool(val[0] != 0), nil
	case 'i', 'e':
		if len(val) == 0 {
			return tcl.Empty, asn1Err(cmd, pos, "empty integer")
		}
		if len(val) > 1 && ((val[0] == 0 && val[1]&0x80 == 0) || (val[0] == 0xff && val[1]&0x80 != 0)) && der {
			return tcl.Empty, asn1Err(cmd, pos, "non-minimal integer in DER")
		}
		if len(val) <= 8 {
			var v int64
			if val[0]&0x80 != 0 {
				v = -1
			}
			for _, b := range val {
				v = v<<8 | int64(b)
			}
			return tcl.Int(v), nil
		}
		b := new(big.Int).SetBytes(val)
		if val[0]&0x80 != 0 {
			b.Sub(b, new(big.Int).Lsh(big.NewInt(1), uint(8*len(val))))
		}
		return tcl.BigInt(b), nil
	case 'B':
		if len(val) == 0 || val[0] > 7 || (len(val) == 1 && val[0] != 0) {
			return tcl.Empty, asn1Err(cmd, pos, "bad bit string")
		}
		nbits := 8*(len(val)-1) - int(val[0])
		s := make([]byte, nbits)
		for i := range s {
			s[i] = '0' + (val[1+i/8]>>(7-uint(i%8)))&1
		}
		return tcl.Str(string(s)), nil
	}
	return tcl.Empty, nil
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// asn1Append writes one TLV with definite, minimal length.
func asn1Append(out []byte, tag int64, val []byte) []byte {
	switch {
	case tag > 0xffffff:
		out = append(out, byte(tag>>24), byte(tag>>16), byte(tag>>8), byte(tag))
	case tag > 0xffff:
		out = append(out, byte(tag>>16), byte(tag>>8), byte(tag))
	case tag > 0xff:
		out = append(out, byte(tag>>8), byte(tag))
	default:
		out = append(out, byte(tag))
	}
	n := len(val)
	switch {
	case n < 0x80:
		out = append(out, byte(n))
	case n <= 0xff:
		out = append(out, 0x81, byte(n))
	case n <= 0xffff:
		out = append(out, 0x82, byte(n>>8), byte(n))
	case n <= 0xffffff:
		out = append(out, 0x83, byte(n>>16), byte(n>>8), byte(n))
	default:
		out = append(out, 0x84, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return append(out, val...)
}

// asn1Int is the minimal two's-complement contents of an integer.
func asn1Int(cmd string, v tcl.Value) ([]byte, error) {
	s := strings.TrimSpace(v.String())
	b, ok := new(big.Int).SetString(s, 0)
	if !ok {
		return nil, tcl.Errorf("%s: expected integer but got %q", cmd, s)
	}
	if b.Sign() >= 0 {
		out := b.Bytes()
		if len(out) == 0 || out[0]&0x80 != 0 {
			out = append([]byte{0}, out...)
		}
		return out, nil
	}
	// Negative: two's complement in the fewest bytes.
	n := (b.BitLen()+8)/8 + 1
	m := new(big.Int).Add(b, new(big.Int).Lsh(big.NewInt(1), uint(8*n)))
	out := m.FillBytes(make([]byte, n))
	for len(out) > 1 && out[0] == 0xff && out[1]&0x80 != 0 {
		out = out[1:]
	}
	return out, nil
}

// asn1EncLevel is one open sequence or set while encoding.
type asn1EncLevel struct {
	tag   int64
	close byte
	items [][]byte
}

func cmdASN1Encode(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const cmd = "ASN1::encode"
	if len(args) < 3 {
		return tcl.Empty, tcl.WrongArgs(cmd + " BER|DER formatString ?value ...? or " + cmd + " insert|replace element offset formatString ?value ...?")
	}
	switch mode := args[1].String(); mode {
	case "BER", "DER":
		out, err := asn1Encode(cmd, mode == "DER", args[2].String(), args[3:])
		if err != nil {
			return tcl.Empty, err
		}
		return tcl.Bytes(out), nil
	case "insert", "replace":
		if len(args) < 5 {
			return tcl.Empty, tcl.WrongArgs(cmd + " " + mode + " element offset formatString ?value ...?")
		}
		e := asn1ElemOf(args[2])
		off, err := strconv.Atoi(args[3].String())
		if err != nil {
			return tcl.Empty, tcl.Errorf("%s: expected integer offset but got %q", cmd, args[3].String())
		}
		at := e.off + off
		if off < 0 || at > len(e.data) {
			return tcl.Empty, tcl.Errorf("%s: offset %d is outside the data (%d bytes after the element)", cmd, off, len(e.data)-e.off)
		}
		enc, err := asn1Encode(cmd, e.der, args[4].String(), args[5:])
		if err != nil {
			return tcl.Empty, err
		}
		tail := at
		if mode == "replace" {
			t, err := asn1Read(cmd, e.data, at, e.der, 0)
			if err != nil {
				return tcl.Empty, err
			}
			tail = at + t.size()
		}
		data := make([]byte, 0, len(e.data)+len(enc))
		data = append(data, e.data[:at]...)
		data = append(data, enc...)
		data = append(data, e.data[tail:]...)
		return asn1Elem{der: e.der, off: at, data: data}.value(), nil
	default:
		return tcl.Empty, tcl.Errorf("%s: bad encoding type %q: must be BER, DER, insert or replace", cmd, mode)
	}
}

// asn1Encode encodes values by format.
func asn1Encode(cmd string, der bool, format string, values []tcl.Value) ([]byte, error) {
	stack := []asn1EncLevel{{}}
	vi := 0
	next := func() (tcl.Value, error) {
		if vi >= len(values) {
			return tcl.Empty, tcl.Errorf("%s: format %q needs more values than given", cmd, format)
		}
		vi++
		return values[vi-1], nil
	}
	tag := int64(-1) // from t, for the next element
	for i := 0; i < len(format); i++ {
		c := format[i]
		optional, optTag := false, int64(-1)
		if c == '?' {
			optional = true
			if i+2 < len(format) && isHex(format[i+1]) && isHex(format[i+2]) {
				v, _ := strconv.ParseUint(format[i+1:i+3], 16, 8)
				optTag = int64(v)
				i += 2
			}
			i++
			if i >= len(format) || !strings.ContainsRune("aBbei", rune(format[i])) {
				return nil, tcl.Errorf("%s: bad format %q: ? must come before a, B, b, e or i", cmd, format)
			}
			c = format[i]
		}
		top := &stack[len(stack)-1]
		switch c {
		case 't':
			v, err := next()
			if err != nil {
				return nil, err
			}
			t, err := strconv.ParseInt(strings.TrimSpace(v.String()), 0, 64)
			if err != nil || t < 0 || t > 0xffffffff {
				return nil, tcl.Errorf("%s: bad tag %q", cmd, v.String())
			}
			tag = t
			continue
		case '(', '<':
			if len(stack) > asn1MaxDepth {
				return nil, tcl.Errorf("%s: bad format %q: nested too deep", cmd, format)
			}
			l := asn1EncLevel{tag: 0x30, close: ')'}
			if c == '<' {
				l = asn1EncLevel{tag: 0x31, close: '>'}
			}
			if tag >= 0 {
				l.tag = tag
			}
			stack = append(stack, l)
		case ')', '>':
			if len(stack) < 2 || top.close != c {
				return nil, tcl.Errorf("%s: bad format %q: unbalanced %q", cmd, format, c)
			}
			items := top.items
			if c == '>' && der {
				sort.Slice(items, func(a, b int) bool { return bytes.Compare(items[a], items[b]) < 0 })
			}
			var body []byte
			for _, it := range items {
				body = append(body, it...)
			}
			l := *top
			stack = stack[:len(stack)-1]
			p := &stack[len(stack)-1]
			p.items = append(p.items, asn1Append(nil, l.tag, body))
		case 'a', 'B', 'b', 'e', 'i':
			v, err := next()
			if err != nil {
				return nil, err
			}
			if optional && v.IsEmpty() {
				tag = -1
				continue
			}
			t := map[byte]int64{'a': 0x04, 'B': 0x03, 'b': 0x01, 'e': 0x0a, 'i': 0x02}[c]
			if optTag >= 0 {
				t = optTag
			}
			if tag >= 0 {
				t = tag
			}
			var val []byte
			switch c {
			case 'a':
				val = tcl.BytesOf(v)
			case 'b':
				b, err := v.Truth()
				if err != nil {
					return nil, tcl.Errorf("%s: expected boolean but got %q", cmd, v.String())
				}
				val = []byte{0}
				if b {
					val[0] = 0xff
				}
			case 'e', 'i':
				val, err = asn1Int(cmd, v)
				if err != nil {
					return nil, err
				}
			case 'B':
				s := v.String()
				val = make([]byte, 1+(len(s)+7)/8)
				val[0] = byte((8 - len(s)%8) % 8)
				for k := 0; k < len(s); k++ {
					switch s[k] {
					case '1':
						val[1+k/8] |= 0x80 >> uint(k%8)
					case '0':
					default:
						return nil, tcl.Errorf("%s: expected a bit string of 0 and 1 but got %q", cmd, s)
					}
				}
			}
			top.items = append(top.items, asn1Append(nil, t, val))
		default:
			return nil, tcl.Errorf("%s: bad format %q: unknown character %q", cmd, format, c)
		}
		tag = -1
	}
	if len(stack) != 1 {
		return nil, tcl.Errorf("%s: bad format %q: unclosed %q", cmd, format, stack[len(stack)-1].close)
	}
	var out []byte
	for _, it := range stack[0].items {
		out = append(out, it...)
	}
	return out, nil
}

func cmdASN1Element(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const cmd = "ASN1::element"
	const usage = cmd + " init BER|DER ?data? | next element ?count? | descend element | byte_offset element ?offset? | tag element | size element | length element"
	if len(args) < 3 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	sub := args[1].String()
	if sub == "init" {
		if len(args) > 4 {
			return tcl.Empty, tcl.WrongArgs(cmd + " init BER|DER ?data?")
		}
		enc := args[2].String()
		if enc != "BER" && enc != "DER" {
			return tcl.Empty, tcl.Errorf("%s: bad encoding type %q: must be BER or DER", cmd, enc)
		}
		e := asn1Elem{der: enc == "DER"}
		if len(args) == 4 {
			e.data = tcl.BytesOf(args[3])
		}
		return e.value(), nil
	}
	e := asn1ElemOf(args[2])
	switch sub {
	case "next":
		n := 1
		if len(args) == 4 {
			v, err := strconv.Atoi(args[3].String())
			if err != nil || v < 0 {
				return tcl.Empty, tcl.Errorf("%s next: expected a count but got %q", cmd, args[3].String())
			}
			n = v
		} else if len(args) > 4 {
			return tcl.Empty, tcl.WrongArgs(cmd + " next element ?count?")
		}
		for k := 0; k < n; k++ {
			t, err := asn1Read(cmd, e.data, e.off, e.der, 0)
			if err != nil {
				return tcl.Empty, err
			}
			e.off += t.size()
		}
		return e.value(), nil
	case "descend":
		t, err := asn1Read(cmd, e.data, e.off, e.der, 0)
		if err != nil {
			return tcl.Empty, err
		}
		if !t.constructed {
			return tcl.Empty, asn1Err(cmd, e.off, "cannot descend into a primitive element")
		}
		e.off += t.hdr
		return e.value(), nil
	case "byte_offset":
		if len(args) == 4 {
			v, err := strconv.Atoi(args[3].String())
			if err != nil || v < 0 || v > len(e.data) {
				return tcl.Empty, tcl.Errorf("%s byte_offset: bad offset %q: must be 0 to %d", cmd, args[3].String(), len(e.data))
			}
			e.off = v
			return e.value(), nil
		}
		return tcl.Int(int64(e.off)), nil
	case "tag", "size", "length":
		if len(args) != 3 {
			if sub == "length" {
				return tcl.Empty, tcl.Errorf("%s length: changing an element's length is not supported", cmd)
			}
			return tcl.Empty, tcl.WrongArgs(cmd + " " + sub + " element")
		}
		t, err := asn1Read(cmd, e.data, e.off, e.der, 0)
		if err != nil {
			return tcl.Empty, err
		}
		switch sub {
		case "tag":
			return tcl.Int(t.tag), nil
		case "size":
			return tcl.Int(int64(t.size())), nil
		}
		return tcl.Int(int64(t.length)), nil
	}
	return tcl.Empty, tcl.Errorf("%s: bad option %q: must be init, next, descend, byte_offset, tag, size or length", cmd, sub)
}
