package grammar

import (
	"fmt"
	"unicode/utf8"
)

// checkText refuses input that is not text at all: NUL and other control
// bytes (tab, newline, carriage return, form feed and vertical tab aside),
// DEL, or bytes that are not UTF-8 — a binary or compressed file given
// where a configuration or a script was meant. BIG-IP refuses it too.
func checkText(filename string, src []byte) *Error {
	line, col := 1, 1
	for i := 0; i < len(src); {
		c := src[i]
		size := 1
		bad := c < ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v' || c == 0x7f
		if c >= utf8.RuneSelf {
			var r rune
			r, size = utf8.DecodeRune(src[i:])
			bad = r == utf8.RuneError && size == 1
		}
		if bad {
			return &Error{
				Pos:      Pos{File: filename, Line: line, Column: col, Offset: i},
				Msg:      fmt.Sprintf("byte 0x%02x is not text; a configuration is text (is this a binary or compressed file?)", c),
				Expected: "text",
			}
		}
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
		i += size
	}
	return nil
}
