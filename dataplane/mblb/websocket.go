package mblb

import (
	"errors"
	"io"
	"net"

	"github.com/openltm/openltm/dataplane/httpx"
	"github.com/openltm/openltm/dataplane/wsframe"
)

// The websocket profile. A request that asks to upgrade to WebSocket
// (Upgrade: websocket) on a virtual with the profile is marked (hx.ws);
// when the member answers 101, the tunnel that follows is framed
// (dataplane/wsframe) instead of copied: each direction's relay reads
// frame headers, passes payloads on re-masked as the profile's masking
// says, and stops at each frame for the rules' WS_CLIENT_FRAME,
// WS_CLIENT_DATA, WS_CLIENT_FRAME_DONE and their server-side twins when
// the rules have them (WebSocketHandler). WS_REQUEST and WS_RESPONSE run
// with HTTP_REQUEST and HTTP_RESPONSE (HTTPEvent.SetWebSocket carries
// WS::enabled and WS::masking back). Without the profile an upgrade is
// a plain tunnel, as before.

// WebSocketHandler is implemented by an HTTPRuleHandler whose rules have
// frame events: the hooks of one client's upgraded connection (nil: none).
type WebSocketHandler interface {
	WebSocketHooks() wsframe.Hooks
}

// IsWebSocketUpgrade reports whether the request head b (h) asks to
// upgrade to WebSocket.
func IsWebSocketUpgrade(b []byte, h *httpx.Head) bool {
	if !h.Upgrade {
		return false
	}
	v := httpx.HeaderValue(b, h, "upgrade")
	return v != nil && httpx.ContainsToken(v, "websocket")
}

// wsChoice is what the rules decided of an upgrade: WS::enabled false
// (off), WS::masking's masking (when maskSet).
type wsChoice struct {
	off     bool
	mask    wsframe.Masking
	maskSet bool
}

// SetWebSocket records what WS_REQUEST or WS_RESPONSE decided: WS::enabled
// false leaves the upgraded connection a plain tunnel; masking, when set,
// replaces the profile's (WS::masking).
func (x *HTTPEvent) SetWebSocket(enabled bool, masking wsframe.Masking, maskingSet bool) {
	x.wsSet, x.ws = true, wsChoice{off: !enabled, mask: masking, maskSet: maskingSet}
}

// noteWebSocket keeps on the client what a WS_REQUEST or WS_RESPONSE
// rule decided, for the tunnel the upgrade opens.
func (s *ClientConn) noteWebSocket(x *HTTPEvent) {
	if x == nil || !x.wsSet {
		return
	}
	s.mu.Lock()
	s.ws.off = x.ws.off
	if x.ws.maskSet {
		s.ws.mask, s.ws.maskSet = x.ws.mask, true
	}
	s.mu.Unlock()
}

// limitWSWindow is the Sec-WebSocket-Extensions value that bounds the
// permessage-deflate offers of the upgrade request head to bits
// (window-bits), or nil when the offers need no change (or there are
// none). Upgrades only: it allocates.
func limitWSWindow(head []byte, bits int) []byte {
	var offers [][]byte
	httpx.Fields(head, len(head), func(name, value []byte, _, _ int) bool {
		if httpx.EqualFold(name, "sec-websocket-extensions") {
			offers = append(offers, value)
		}
		return true
	})
	if len(offers) == 0 {
		return nil
	}
	v, changed := wsframe.LimitDeflateOffer(offers, bits)
	if !changed {
		return nil
	}
	return v
}

// wsTunnel is an upgraded connection's two framed directions.
type wsTunnel struct {
	nagle    bool
	mode     wsframe.Masking
	hooks    wsframe.Hooks
	toClient *wsframe.Out
	toServer *wsframe.Out
}

// clientOut and serverOut write a relay's frames with the tunnel's
// counters.
type clientOut struct{ s *ClientConn }

func (w clientOut) Write(b []byte) (int, error) { return len(b), w.s.tunnelWrite(b) }

type serverOut struct{ sc *serverConn }

func (w serverOut) Write(b []byte) (int, error) { return len(b), w.sc.tunnelWrite(b) }

// clientIn reads the client's bytes with the tunnel's counters.
type clientIn struct{ s *ClientConn }

func (r clientIn) Read(b []byte) (int, error) {
	s := r.s
	k, err := s.c.Read(b)
	if k > 0 {
		s.active()
		s.bytesIn.Add(uint64(k))
		if s.meter != nil {
			s.meter.Received(k)
		}
	}
	return k, err
}

// serverIn reads the member's bytes with the tunnel's counters.
type serverIn struct{ sc *serverConn }

func (r serverIn) Read(b []byte) (int, error) {
	sc := r.sc
	k, err := sc.conn.Read(b)
	if k > 0 {
		sc.leg.lastActive.Store(sc.e.now())
		sc.leg.BytesIn.Add(uint64(k))
		if mt := sc.leg.Meter; mt != nil {
			mt.Received(k)
		}
	}
	return k, err
}

// wsFrameRules reports whether the client's rules have frame events:
// their payloads must then be plain, so the upgrade goes without the
// permessage-deflate offer, as with compression disabled [M: a payload
// compressed with the connection's shared window cannot be read or
// edited frame by frame].
func (s *ClientConn) wsFrameRules() bool {
	wh, ok := s.hrule.(WebSocketHandler)
	return ok && wh.WebSocketHooks() != nil
}

// webSocketTunnel is the framing of the tunnel sc opens for s, or nil for
// a plain one: the virtual has no websocket profile, the request was not
// a WebSocket upgrade, or a rule ran WS::enabled false. Under s.mu.
func (s *ClientConn) webSocketTunnel(sc *serverConn) *wsTunnel {
	o := s.e.cfg.Request.HTTP.WebSocket
	if o == nil || !sc.tunWS || s.ws.off {
		return nil
	}
	t := &wsTunnel{mode: o.Masking, nagle: o.Nagle,
		toClient: &wsframe.Out{W: clientOut{s}},
		toServer: &wsframe.Out{W: serverOut{sc}, ToServer: true}}
	if s.ws.maskSet {
		t.mode = s.ws.mask
	}
	if wh, ok := s.hrule.(WebSocketHandler); ok {
		t.hooks = wh.WebSocketHooks()
	}
	return t
}

// setNagle turns Nagle's algorithm on for a tunnel's socket (a TCP
// connection, or a TLS session over one); other connections are left.
func setNagle(c net.Conn) {
	if t, ok := c.(interface{ NetConn() net.Conn }); ok {
		if _, direct := c.(interface{ SetNoDelay(bool) error }); !direct {
			c = t.NetConn()
		}
	}
	if t, ok := c.(interface{ SetNoDelay(bool) error }); ok {
		t.SetNoDelay(false)
	}
}

// relay runs one direction of a framed tunnel; what it returns is that
// direction's end, as tunnelFrom and tunnelServer read a plain one's: nil
// when the source ended in order, errReset when the connection must be
// reset.
func (t *wsTunnel) relay(side wsframe.Side, src io.Reader, first []byte) error {
	r := &wsframe.Relay{Side: side, Mode: t.mode, Hooks: t.hooks, Src: src, Dst: t.toServer, Peer: t.toClient}
	if side == wsframe.FromServer {
		r.Dst, r.Peer = t.toClient, t.toServer
	}
	return r.Run(first)
}

// wsEnd reads a relay's end: in order (EOF at a frame boundary, or the
// rules' disconnect), or a failure.
func wsEnd(err error) (eof, disconnected bool) {
	return errors.Is(err, io.EOF), errors.Is(err, wsframe.ErrDisconnected)
}
