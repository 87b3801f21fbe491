package grammar

import "errors"

// SplitStatements cuts text typed or pasted at the prompt into the
// statements it completes, so the shell knows whether to run them or to
// keep reading: a statement is complete at an unbraced newline or ';', or
// at the end of the text when nothing is left open. rest is the unfinished
// tail (an open brace, script body or quote, or a final backslash that
// continues the line), to be prefixed to the next line read; it is "" when
// everything is complete. err reports text that no further input can fix
// (a stray "}"; bytes that are not text, and then complete is empty);
// complete then holds the statements before it.
func SplitStatements(src string) (complete []string, rest string, err error) {
	if e := checkText("", []byte(src)); e != nil {
		return nil, "", e
	}
	sc := newScanner("", src, nil)
	start, end := -1, 0                // first and last byte of the current statement
	restFrom := 0                      // where the current statement may begin
	for n := 0; n <= len(src)+1; n++ { // at most one token per byte, plus EOF
		tok, lexErr := sc.Next()
		if lexErr != nil {
			var e *Error
			if errors.As(lexErr, &e) && e.Incomplete {
				return complete, src[restFrom:], nil
			}
			return complete, "", lexErr
		}
		switch {
		case tok.EOF():
			if start >= 0 {
				complete = append(complete, src[start:end])
			}
			if sc.dangling {
				if start >= 0 {
					complete = complete[:len(complete)-1]
				}
				return complete, src[restFrom:], nil
			}
			return complete, "", nil
		case tok.Type == tokEOL:
			complete = append(complete, src[start:end])
			start = -1
			restFrom = tok.Pos.Offset + 1
		default:
			if start < 0 {
				start = tok.Pos.Offset
			}
			end = tok.Pos.Offset + len(tok.Value)
		}
	}
	return complete, "", &Error{Msg: "internal error: the scanner did not progress"}
}

// Incomplete reports whether src leaves something open (a brace, a script
// body, a quote or a final backslash), so the shell shows a continuation
// prompt instead of running it.
func Incomplete(src string) bool {
	_, rest, err := SplitStatements(src)
	return err == nil && rest != ""
}
