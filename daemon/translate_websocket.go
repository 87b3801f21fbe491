package daemon

import (
	"fmt"
	"strconv"

	"github.com/openltm/openltm/dataplane/wsframe"
	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/rules"
)

var (
	profileWebSocket = schema.MustKind("ltm profile websocket")
	wsMasking        = profileWebSocket.MustProp("masking")
	wsCompression    = profileWebSocket.MustProp("compression")
	wsWindowBits     = profileWebSocket.MustProp("window-bits")
	wsNoDelay        = profileWebSocket.MustProp("no-delay")
)

// webSocketOptions is the virtual's websocket profile as the HTTP engine
// applies it: nil without one.
func (t *translator) webSocketOptions(o *objects.Object) (*wsframe.Options, error) {
	p := t.profile(o, profileWebSocket)
	if p == nil {
		return nil, nil
	}
	m, ok := wsframe.ParseMasking(wsMasking.Effective(t.cfg, p))
	if !ok {
		return nil, fmt.Errorf("profile %s: masking %q is not one of preserve, unmask, selective, remask", p.Name, wsMasking.Effective(t.cfg, p))
	}
	bits, err := t.wsWindowBits(p)
	if err != nil {
		return nil, fmt.Errorf("profile %s: %v", p.Name, err)
	}
	return &wsframe.Options{Profile: p.Name, Masking: m, NoCompression: wsCompression.Effective(t.cfg, p) == "disabled",
		WindowBits: bits, Nagle: wsNoDelay.Effective(t.cfg, p) == "disabled"}, nil
}

// wsWindowBits is a websocket profile's effective window-bits, 8 to 15
// as RFC 7692 allows (and BIG-IP [M]).
func (t *translator) wsWindowBits(p *objects.Object) (int, error) {
	v := wsWindowBits.Effective(t.cfg, p)
	n, err := strconv.Atoi(v)
	if err != nil || n < wsframe.MinWindowBits || n > wsframe.MaxWindowBits {
		return 0, fmt.Errorf("window-bits %q is out of range: %d to %d", v, wsframe.MinWindowBits, wsframe.MaxWindowBits)
	}
	return n, nil
}

// webSocketProfile checks a websocket profile whether or not a virtual
// uses it: a window-bits out of range is refused when the profile is
// made or changed.
func (t *translator) webSocketProfile(o *objects.Object) {
	if _, err := t.wsWindowBits(o); err != nil {
		t.skip(o, "%v", err)
	}
}

// webSocketNeedsHTTP refuses a websocket profile on a virtual server
// without an http profile: the upgrade it frames is an HTTP exchange,
// and BIG-IP refuses the combination too [M: its message is ours].
func (t *translator) webSocketNeedsHTTP(o *objects.Object) bool {
	return t.needsHTTPProfile(o, profileWebSocket)
}

// wsNeeds refuses a rule list whose WS_ events or WS:: commands need a
// websocket profile the virtual server lacks (01070394 [M]).
func (t *translator) wsNeeds(o *objects.Object, list []*rules.Rule) bool {
	return t.profileNeeds(o, list, profileWebSocket, "WEBSOCKET", (*rules.Rule).WebSocketNeeds) // translate_stream.go
}
