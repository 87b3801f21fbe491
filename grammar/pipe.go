package grammar

import "strings"

// SplitPipe finds where a statement's output is piped, as tmsh does with
// `list ltm pool | grep address`: the first "|" in a bare word
// outside every block and quote. It returns the command before it and the
// filter text after the "|". Pipes inside braces (iRule bodies, records)
// or quotes are part of the command. ok is false when there is no pipe, or
// the statement does not scan (the parser then reports the error).
func SplitPipe(stmt string) (command, filters string, ok bool) {
	if !strings.Contains(stmt, "|") {
		return stmt, "", false
	}
	sc := newScanner("", stmt, nil)
	depth := 0
	for n := 0; n <= len(stmt)+1; n++ { // at most one token per byte, plus EOF
		tok, err := sc.Next()
		if err != nil || tok.EOF() {
			return stmt, "", false
		}
		switch tok.Type {
		case tokLBrace:
			depth++
		case tokRBrace:
			depth--
		case tokWord:
			if i := strings.IndexByte(tok.Value, '|'); depth == 0 && i >= 0 {
				at := tok.Pos.Offset + i
				return strings.TrimRight(stmt[:at], " \t"), stmt[at+1:], true
			}
		}
	}
	return stmt, "", false
}
