package rules

import (
	"strings"

	"github.com/openltm/openltm/rules/tcl"
)

// CompressState is what a rule's COMPRESS:: commands asked of the HTTP
// message in hand, on a virtual server with an http-compression profile.
// The host takes it (Take) after HTTP_REQUEST, for the answer to that
// request, and after HTTP_RESPONSE, where it overrides the request's; a
// choice never carries over to the next request. Without the profile it
// is nil and the commands are errors, as BIG-IP refuses such a rule.
type CompressState struct {
	// Set is 1 after COMPRESS::enable, which compresses whatever the
	// profile's URI and content-type lists and min-size say (never for
	// a client that does not accept a coding); -1 after
	// COMPRESS::disable; 0 leaves the profile to decide.
	Set int8
	// Prefer is COMPRESS::method prefer's coding ("gzip", "deflate";
	// "" the profile's method-prefer).
	Prefer string
	// Level is COMPRESS::gzip level (1-9; 0 the profile's gzip-level).
	Level int
}

// Take returns the choice and clears it for the next message.
func (st *CompressState) Take() CompressState {
	c := *st
	*st = CompressState{}
	return c
}

// SetCompress gives the connection a compression state: the virtual
// server has an http-compression profile.
func (s *ConnState) SetCompress() { s.compress = &CompressState{} }

// Compress is the connection's compression state; nil without an
// http-compression profile. The host reads it under the lock its events
// run under.
func (s *ConnState) Compress() *CompressState { return s.compress }

func registerCompress(t *tcl.Commands) {
	t.Register("COMPRESS::enable", cmdCompressSwitch("COMPRESS::enable", 1))
	t.Register("COMPRESS::disable", cmdCompressSwitch("COMPRESS::disable", -1))
	t.Register("COMPRESS::method", cmdCompressMethod)
	t.Register("COMPRESS::gzip", cmdCompressGzip)
	t.Register("COMPRESS::buffer_size", cmdCompressKept("COMPRESS::buffer_size", 1))
	t.Register("COMPRESS::nodelay", cmdCompressKept("COMPRESS::nodelay", 0))
	for _, n := range t.Names() {
		if strings.HasPrefix(n, "COMPRESS::") {
			cmd := t.Lookup(n)
			cmd.Compile = needHook(n, func(r *Rule) *[]HTTPNeed { return &r.compressNeeds }, cmd.Compile)
		}
	}
}

// compressOf returns the connection's compression state, or the error
// of a command run where there is none.
func compressOf(in *tcl.Interp, cmd string) (*CompressState, error) {
	s, _, err := sess(in, cmd)
	if err != nil {
		return nil, err
	}
	if s.compress == nil {
		return nil, tcl.Errorf("%s: the virtual server has no http-compression profile", cmd)
	}
	return s.compress, nil
}

// cmdCompressSwitch is COMPRESS::enable and COMPRESS::disable, for the
// message in hand.
func cmdCompressSwitch(name string, set int8) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 1 {
			return tcl.Empty, tcl.WrongArgs(name)
		}
		st, err := compressOf(in, name)
		if err != nil {
			return tcl.Empty, err
		}
		st.Set = set
		return tcl.Empty, nil
	}
}

// cmdCompressMethod is COMPRESS::method prefer gzip|deflate: the coding
// used when the client accepts both equally.
func cmdCompressMethod(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 3 || args[1].String() != "prefer" {
		return tcl.Empty, tcl.WrongArgs("COMPRESS::method prefer gzip|deflate")
	}
	st, err := compressOf(in, "COMPRESS::method")
	if err != nil {
		return tcl.Empty, err
	}
	switch m := args[2].String(); m {
	case "gzip", "deflate":
		st.Prefer = m
	default:
		return tcl.Empty, tcl.Errorf("COMPRESS::method prefer: %q is not gzip or deflate", m)
	}
	return tcl.Empty, nil
}

// cmdCompressGzip is COMPRESS::gzip level N (1 to 9). Its memory_level
// and window_size forms are accepted and change nothing: the
// compressor's memory and window are fixed [M].
func cmdCompressGzip(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 3 {
		return tcl.Empty, tcl.WrongArgs("COMPRESS::gzip level|memory_level|window_size value")
	}
	st, err := compressOf(in, "COMPRESS::gzip")
	if err != nil {
		return tcl.Empty, err
	}
	n, err := args[2].Int64()
	if err != nil {
		return tcl.Empty, err
	}
	switch args[1].String() {
	case "level":
		if n < 1 || n > 9 {
			return tcl.Empty, tcl.Errorf("COMPRESS::gzip level %d is out of range: 1 to 9", n)
		}
		st.Level = int(n)
	case "memory_level", "window_size":
	default:
		return tcl.Empty, tcl.Errorf("COMPRESS::gzip: %q is not level, memory_level or window_size", args[1].String())
	}
	return tcl.Empty, nil
}

// cmdCompressKept is a COMPRESS:: command taking nargs arguments that is
// accepted and changes nothing: buffer_size (openltm sends a body it has
// whole with its Content-Length, and one that streams chunked, whatever
// the buffer) and nodelay (every part that arrives is flushed to the
// client already).
func cmdCompressKept(name string, nargs int) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 1+nargs {
			if nargs == 0 {
				return tcl.Empty, tcl.WrongArgs(name)
			}
			return tcl.Empty, tcl.WrongArgs(name + " size")
		}
		_, err := compressOf(in, name)
		return tcl.Empty, err
	}
}
