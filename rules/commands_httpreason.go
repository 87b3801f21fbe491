package rules

import "github.com/openltm/openltm/rules/tcl"

// HTTPReasons is implemented by an HTTPConn that can say why its HTTP
// filter went into passthrough and why it rejected the client: numbers
// into PassthroughReasons and RejectReasons (0: it did not).
type HTTPReasons interface {
	HTTPPassthroughReason() int
	HTTPRejectReason() int
}

// PassthroughReasons are HTTP::passthrough_reason's answers, in F5's
// order (as_num is the index [M]); openltm's filter goes into
// passthrough for the first four only: its header limits and unknown
// methods reject instead, and pipelined data is served.
var PassthroughReasons = []string{"Unknown", "iRule", "Connect", "Web Sockets",
	"Oversize Client Headers", "Excess Client Headers", "Oversize Server Headers",
	"Excess Server Headers", "Unknown Method", "Pipelined Data"}

// RejectReasons are HTTP::reject_reason's answers [M: F5 documents
// none]: "" until the filter rejects the client.
var RejectReasons = []string{"", "Bad Request", "Oversize Client Headers", "Excess Client Headers", "Body Too Large"}

func registerHTTPReasons(t *tcl.Commands) {
	reason := func(name string, list []string, get func(HTTPReasons) int) {
		t.Register(name, func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
			asNum := len(args) == 2 && args[1].String() == "as_num"
			if len(args) > 2 || len(args) == 2 && !asNum {
				return tcl.Empty, tcl.WrongArgs(name + " ?as_num?")
			}
			_, hc, err := httpConn(in, name)
			if err != nil {
				return tcl.Empty, err
			}
			n := 0
			if r, ok := hc.(HTTPReasons); ok {
				n = get(r)
			}
			if n < 0 || n >= len(list) {
				n = 0
			}
			if asNum {
				return tcl.Int(int64(n)), nil
			}
			return tcl.Str(list[n]), nil
		})
	}
	reason("HTTP::passthrough_reason", PassthroughReasons, HTTPReasons.HTTPPassthroughReason)
	reason("HTTP::reject_reason", RejectReasons, HTTPReasons.HTTPRejectReason)
}
