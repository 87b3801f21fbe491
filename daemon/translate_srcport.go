package daemon

import "github.com/openltm/openltm/objects"

// virtualSourcePortKept warns of a virtual's own source-port change or
// preserve-strict, which the data paths do not read: its server
// connections keep the client's port where the source address has it
// free and take another where not (preserve), whatever the setting. An
// ltm snat's source-port is acted on (translate_snat.go); with an http2
// profile on the server side, preserve-strict is refused instead
// (translate_http2.go).
func (t *translator) virtualSourcePortKept(o *objects.Object) {
	if sp := virtualSourcePort.Str(o); sp == "change" || sp == "preserve-strict" {
		t.note(o, "source-port %s is kept but not acted on: the virtual's server connections keep the client's port when their source address has it free and take another when not (preserve); an ltm snat's source-port is acted on", sp)
	}
}
