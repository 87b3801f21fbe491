package objects

import (
	"fmt"
	"strings"
)

// ParseLWSSeparator reads an http profile's lws-separator, written with
// the escapes \r, \n and \t (as `"\r\n\t"`), into the bytes that fold a
// long inserted header: a line end followed by spaces or tabs, the only
// folding HTTP/1.1 members parse (RFC 9112's obs-fold). none is no
// folding (""); anything else is refused, so that a profile never makes
// requests members cannot read.
func ParseLWSSeparator(s string) (string, error) {
	if s == "none" || s == "" {
		return "", nil
	}
	sep := strings.NewReplacer(`\r`, "\r", `\n`, "\n", `\t`, "\t").Replace(s)
	rest, ok := strings.CutPrefix(sep, "\r\n")
	if !ok {
		rest, ok = strings.CutPrefix(sep, "\n")
	}
	if !ok || rest == "" || strings.Trim(rest, " \t") != "" {
		return "", fmt.Errorf(`lws-separator %q: a line end followed by spaces or tabs ("\r\n\t", "\r\n "), or none`, s)
	}
	return "\r\n" + rest, nil
}

// FoldHeader folds one header line ("Name: value", no line end) at its
// spaces so that each physical line stays within width columns where a
// space allows it, joining the parts with sep (ParseLWSSeparator). A part
// with no space within width is broken at its first space after it; a
// value with no space is left whole.
func FoldHeader(line, sep string, width int) string {
	if sep == "" || width <= 0 || len(line) <= width {
		return line
	}
	indent := strings.TrimLeft(sep, "\r\n")
	colon := strings.IndexByte(line, ':') + 2 // never break between the name and its value
	var b strings.Builder
	cur := line
	first := true
	for {
		avail := width
		if !first {
			avail -= len(indent)
		}
		if len(cur) <= avail {
			break
		}
		floor := 0
		if first {
			floor = colon
		}
		cut := -1
		for i := min(avail, len(cur)-1); i > floor; i-- {
			if cur[i] == ' ' {
				cut = i
				break
			}
		}
		if from := max(avail, floor+1); cut < 0 && from < len(cur) {
			if j := strings.IndexByte(cur[from:], ' '); j >= 0 {
				cut = from + j
			}
		}
		if cut < 0 {
			break
		}
		b.WriteString(cur[:cut])
		b.WriteString(sep)
		cur = strings.TrimLeft(cur[cut:], " ")
		first = false
	}
	b.WriteString(cur)
	return b.String()
}
