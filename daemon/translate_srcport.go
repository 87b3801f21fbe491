package daemon

import (
	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
)

// virtualSourcePortSet gives the data paths the virtual's own
// source-port (K11004): change, its server connections take any port;
// preserve-strict, they keep the client's port or are reset; preserve
// (the default), they keep it when free and take another when not. It
// applies to the address the virtual's source-address-translation
// (automap, snatpool, none), a rule's snat or an ltm nat of the client
// gives (a nat has no source-port of its own); an ltm snat that
// translates the connection decides by its own source-port instead
// (state.snatSource). With an http2 profile on the server side,
// preserve-strict is refused (translate_http2.go).
func (t *translator) virtualSourcePortSet(o *objects.Object, v *dataplane.Virtual) {
	switch virtualSourcePort.Str(o) {
	case "change":
		v.SNAT.ChangePort = true
	case "preserve-strict":
		v.SNAT.StrictPort = true
	}
}

// virtualSourcePortUnread warns of a virtual's source-port change or
// preserve-strict on the paths whose server connections do not take
// their source from the virtual's translation: source-address-translation
// lsn (the lsn pool's translation gives the port) and a message-routing
// (mrf) virtual, whose peer connections take their transport-config's
// translation.
func (t *translator) virtualSourcePortUnread(o *objects.Object, v *dataplane.Virtual) {
	if !v.SNAT.ChangePort && !v.SNAT.StrictPort {
		return
	}
	sp := virtualSourcePort.Str(o)
	switch {
	case v.SNAT.Type == dataplane.SNATLSN:
		t.note(o, "source-port %s is kept but not acted on: with source-address-translation lsn, the lsn pool's translation gives the server connections' port", sp)
	case v.MRF != nil:
		t.note(o, "source-port %s is kept but not acted on: the message-routing peer connections take their source from the transport-config's translation", sp)
	}
}
