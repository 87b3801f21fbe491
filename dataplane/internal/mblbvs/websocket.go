package mblbvs

import (
	"errors"

	"github.com/openltm/openltm/dataplane/httpx"
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/wsframe"
	"github.com/openltm/openltm/rules"
)

// The websocket profile's events. WS_REQUEST runs after HTTP_REQUEST for
// a request that asks to upgrade to WebSocket, WS_RESPONSE after
// HTTP_RESPONSE for the member's 101; what they decide (WS::enabled,
// WS::masking) goes back to the engine with the message. The frame
// events run on the tunnel's relays (dataplane/wsframe), one direction
// each, under the rules' lock like every other event of the client.

// handlesWS reports whether prog has a websocket event.
func handlesWS(prog *rules.Program) (handshake, frames bool) {
	handshake = prog.Handles(rules.WSRequest) || prog.Handles(rules.WSResponse)
	for _, ev := range [...]rules.Event{rules.WSClientFrame, rules.WSClientData, rules.WSClientFrameDone,
		rules.WSServerFrame, rules.WSServerData, rules.WSServerFrameDone} {
		frames = frames || prog.Handles(ev)
	}
	return handshake, frames
}

// wsHandshake runs WS_REQUEST or WS_RESPONSE over x when the virtual has
// a websocket profile and the rules handle it, and hands WS::enabled and
// WS::masking to the engine. Under r.mu.
func (h *httpRules) wsHandshake(x *mblb.HTTPEvent, ev rules.Event, head *rules.HTTPHead) error {
	r := h.mblbRules
	prog := irules.Program(r.rules)
	if prog == nil || !prog.Handles(ev) || x.Decided() {
		return nil
	}
	ws := r.RuleSession(prog).WebSocket()
	if ws == nil {
		return nil
	}
	if ev == rules.WSRequest {
		*ws = rules.WSState{}
	}
	if err := h.event(x, ev, head); err != nil {
		return err
	}
	x.SetWebSocket(!ws.Off, ws.Masking, ws.MaskingSet)
	return nil
}

// isWebSocketRequest reports whether the request head b (hd) asks for a
// WebSocket upgrade on a virtual with the websocket profile.
func (h *httpRules) isWebSocketRequest(b []byte, hd *httpx.Head) bool {
	return h.f.mv.cfg.Request.HTTP.WebSocket != nil && mblb.IsWebSocketUpgrade(b, hd)
}

// wantsWebSocket reports whether the request the rules hold asked to
// upgrade to WebSocket.
func wantsWebSocket(req *rules.HTTPHead) bool {
	v, ok := req.Header("upgrade")
	return ok && httpx.ContainsToken(v, "websocket")
}

// WebSocketHooks implements mblb.WebSocketHandler: the frame events of
// the client's upgraded connection, when the rules have any.
func (h *httpRules) WebSocketHooks() wsframe.Hooks {
	if !h.handlesFrames {
		return nil
	}
	return wsHooks{h}
}

// wsHooks runs the frame events.
type wsHooks struct{ h *httpRules }

// errWSRule ends an upgraded connection whose frame rule rejected or
// dropped it: the relay resets both ends.
var errWSRule = errors.New("a websocket rule ended the connection")

func (w wsHooks) Frame(f *wsframe.Frame) error {
	return w.run(f, rules.WSClientFrame, rules.WSServerFrame)
}

func (w wsHooks) Data(f *wsframe.Frame) error {
	return w.run(f, rules.WSClientData, rules.WSServerData)
}

func (w wsHooks) Done(f *wsframe.Frame) error {
	return w.run(f, rules.WSClientFrameDone, rules.WSServerFrameDone)
}

// run runs the client's or the server's event of a frame with the frame
// at hand for the WS:: commands.
func (w wsHooks) run(f *wsframe.Frame, client, server rules.Event) error {
	ev := client
	if f.Side() == wsframe.FromServer {
		ev = server
	}
	r := w.h.mblbRules
	prog := irules.Program(r.rules)
	if prog == nil || !prog.Handles(ev) {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	ws := r.RuleSession(prog).WebSocket()
	if ws == nil {
		return nil
	}
	ws.Frame = f
	err := r.runEvent(ev)
	ws.Frame = nil
	w.h.ClearActions()
	if err != nil {
		return err
	}
	if r.verdict == irules.Reject || r.verdict == irules.Drop {
		return errWSRule
	}
	return nil
}
