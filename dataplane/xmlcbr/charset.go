package xmlcbr

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/ianaindex"
	"golang.org/x/text/encoding/unicode"
)

// Documents in other encodings than UTF-8 are read as an XML processor
// reads them (XML 1.0, section 4.3.3 and appendix F): a UTF-16 document
// is known by its byte order mark, or by the "<?" its declaration starts
// with, and transcoded to UTF-8 before it is parsed; any other encoding
// is the one its declaration names (ISO-8859-1, windows-1252, Shift_JIS,
// ...), by the IANA name XML uses, and decoded as the parser reads it. A
// document whose declaration names an encoding openltm has no decoder
// for, or contradicts its byte order mark, is not well-formed [M: BIG-IP's
// parser reads every encoding XML names; F5 does not list them].

// utf16Of reports the byte order of a document that is UTF-16: by its byte
// order mark, or by the "<" of its first markup with a zero byte beside
// it. ok is false for every other document.
func utf16Of(body []byte) (order unicode.Endianness, bom, ok bool) {
	switch {
	case bytes.HasPrefix(body, []byte{0xfe, 0xff}):
		return unicode.BigEndian, true, true
	case bytes.HasPrefix(body, []byte{0xff, 0xfe}):
		return unicode.LittleEndian, true, true
	case len(body) >= 2 && body[0] == 0 && body[1] != 0:
		return unicode.BigEndian, false, true
	case len(body) >= 2 && body[0] != 0 && body[1] == 0:
		return unicode.LittleEndian, false, true
	}
	return unicode.BigEndian, false, false
}

// toUTF8 returns body in UTF-8 when it is UTF-16 (transcoded says so),
// else body itself. A UTF-16 document of an odd length, or with a lone
// surrogate, is not well-formed.
func toUTF8(body []byte) (out []byte, transcoded bool, err error) {
	order, bom, ok := utf16Of(body)
	if !ok {
		return body, false, nil
	}
	if len(body)%2 != 0 {
		return nil, false, ErrMalformed
	}
	policy := unicode.IgnoreBOM
	if bom {
		policy = unicode.ExpectBOM
	}
	d := unicode.UTF16(order, policy).NewDecoder()
	out, err = d.Bytes(body)
	if err != nil || bytes.ContainsRune(out, '\uFFFD') && !bytes.Contains(body, replacementUTF16(order)) {
		// (The decoder writes U+FFFD for a lone surrogate rather
		// than fail; one the document did not carry is an error.)
		return nil, false, ErrMalformed
	}
	return out, true, nil
}

// replacementUTF16 is U+FFFD in UTF-16 of the given order.
func replacementUTF16(order unicode.Endianness) []byte {
	if order == unicode.BigEndian {
		return []byte{0xff, 0xfd}
	}
	return []byte{0xfd, 0xff}
}

// charsetReader returns the parser's decoder for the encoding a
// declaration names. transcoded says the document was UTF-16 and is
// UTF-8 now: then only a UTF-16 name agrees with it.
func charsetReader(transcoded bool) func(label string, input io.Reader) (io.Reader, error) {
	return func(label string, input io.Reader) (io.Reader, error) {
		l := strings.ToLower(strings.TrimSpace(label))
		if transcoded {
			if l == "utf-16" || l == "utf-16be" || l == "utf-16le" || l == "iso-10646-ucs-2" {
				return input, nil
			}
			return nil, fmt.Errorf("xmlcbr: a UTF-16 document declares encoding %q", label)
		}
		switch l {
		case "utf-8", "utf8", "us-ascii", "ascii":
			return input, nil
		case "utf-16", "utf-16be", "utf-16le":
			// The bytes were not UTF-16 (utf16Of said so).
			return nil, fmt.Errorf("xmlcbr: a document not in UTF-16 declares encoding %q", label)
		}
		enc, err := ianaindex.IANA.Encoding(label)
		if err != nil || enc == nil {
			return nil, fmt.Errorf("xmlcbr: encoding %q is not known", label)
		}
		if enc == encoding.Nop {
			return input, nil
		}
		return enc.NewDecoder().Reader(input), nil
	}
}
