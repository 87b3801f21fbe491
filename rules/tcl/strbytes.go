package tcl

// recentStrings is how many strings StrBytes remembers per interpreter,
// and recentMax the longest it keeps, so that a pooled interpreter holds
// on to a few hundred bytes at most.
const (
	recentStrings = 8
	recentMax     = 256
)

// StrBytes makes a string value from bytes the host will reuse (a request
// head's buffer), as Str(string(b)) does, but returns a string this
// interpreter made recently when the bytes are the same, so that commands
// handing out header values that repeat from request to request (Host,
// often the path) do not allocate each time.
func (in *Interp) StrBytes(b []byte) Value {
	if len(b) == 0 {
		return Empty
	}
	if len(b) > recentMax {
		return Str(string(b))
	}
	for _, s := range in.recent {
		if s == string(b) { // compared without converting
			return Str(s)
		}
	}
	s := string(b)
	in.recent[in.recentNext] = s
	in.recentNext = (in.recentNext + 1) % recentStrings
	return Str(s)
}
