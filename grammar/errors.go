package grammar

// Error is every syntax error the package reports. It carries the position
// separately from the message so the shell can underline the offending
// column, and Expected so completion and help can offer what would have been
// valid there.
type Error struct {
	Pos Pos
	// Msg says what is wrong and, in words, what would be valid.
	Msg string
	// Expected names what would have been valid at Pos (for example `"}"`),
	// for callers that build their own hints; it is not repeated by Error().
	Expected string
	// Incomplete is true when the text is only unfinished (an open brace, an
	// open quote): the interactive shell keeps reading instead of failing.
	Incomplete bool
}

// Error renders "file:line:col: message", or "line:col: message" for text
// typed at the prompt, so the user can find the spot at once.
func (e *Error) Error() string {
	return e.Pos.String() + ": " + e.Msg
}
