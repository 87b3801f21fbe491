package mblbvs

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"slices"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/openltm/openltm/dataplane/h2gw"
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/rules"
)

// The HTTP2:: iRule commands (rules.HTTP2Conn, rules.HTTP2Switch). An
// HTTP/2 client's requests reach the engine as HTTP/1.1 on its lanes
// (http2.go), each lane an engine session that numbers its requests in
// the order the gateway handed them; the gateway's h2gw.Lane tells the
// stream behind each number, so the rules find a request's stream by the
// session its event is on (mblb.HTTPEvent.Session) and its number there.

var (
	_ rules.HTTP2Conn   = (*httpRules)(nil)
	_ rules.HTTP2Switch = (*mblbRules)(nil)
)

// h2Request is the lane and the number there of the request the running
// HTTP event is about; nil when the client does not speak HTTP/2 or the
// event has no request of its own. Under the rules' lock.
func (h *httpRules) h2Request() (*h2gw.Lane, uint64) {
	r := h.mblbRules
	if !r.h2 || r.hx == nil || r.f.lanes == nil {
		return nil, 0
	}
	sess := r.hx.Session()
	if sess == nil {
		return nil, 0
	}
	l, ok := r.f.lanes.byConn.Load(sess)
	if !ok {
		return nil, 0
	}
	return l.(*h2gw.Lane), r.hx.RequestNum()
}

// HTTP2Active implements rules.HTTP2Conn.
func (h *httpRules) HTTP2Active() bool { return h.h2 }

// HTTP2Stream implements rules.HTTP2Conn.
func (h *httpRules) HTTP2Stream() (uint32, uint8, bool) {
	l, n := h.h2Request()
	if l == nil {
		return 0, 0, false
	}
	return l.Stream(n)
}

// SetHTTP2Priority implements rules.HTTP2Conn.
func (h *httpRules) SetHTTP2Priority(weight uint8) bool {
	l, n := h.h2Request()
	return l != nil && l.SetWeight(n, weight)
}

// h2Lane is any lane of the client, for what is the connection's: nil
// for an HTTP/1 client.
func (h *httpRules) h2Lane() *h2gw.Lane {
	if !h.h2 || h.f.lanes == nil {
		return nil
	}
	return h.f.lanes.lane
}

// HTTP2Concurrency implements rules.HTTP2Conn.
func (h *httpRules) HTTP2Concurrency() int {
	if l := h.h2Lane(); l != nil {
		return l.Concurrency()
	}
	return 0
}

// HTTP2Requests implements rules.HTTP2Conn.
func (h *httpRules) HTTP2Requests() int {
	if l := h.h2Lane(); l != nil {
		return l.Requests()
	}
	return 0
}

// HTTP2Disconnect implements rules.HTTP2Conn.
func (h *httpRules) HTTP2Disconnect() bool {
	l := h.h2Lane()
	if l != nil {
		l.Disconnect()
	}
	return l != nil
}

var _ rules.HTTP2Pusher = (*httpRules)(nil)

// HTTP2Push implements rules.HTTP2Pusher: the push goes to the gateway
// of the lane the request came on, promised on its stream (h2gw
// push.go); the promised request then reaches the engine on a lane like
// the client's own, and its HTTP_REQUEST runs. Only what a rule pushes
// is allocated here.
func (h *httpRules) HTTP2Push(p *rules.HTTP2Push) bool {
	l, n := h.h2Request()
	if l == nil {
		return false
	}
	push := &h2gw.Push{Scheme: h.HTTP2Scheme(), Authority: p.Authority, Path: p.Path,
		Header: pushFields(p.Header), Local: p.Local}
	if p.Priority >= 0 {
		push.Weight, push.HasWeight = uint8(p.Priority), true
	}
	if p.Local {
		push.Body = []byte(p.Content)
		push.RespHeader = pushFields(p.RespHeader)
	}
	return l.Push(n, push)
}

// pushFields turns a rule's fields into HPACK's.
func pushFields(f [][2]string) []hpack.HeaderField {
	if len(f) == 0 {
		return nil
	}
	out := make([]hpack.HeaderField, len(f))
	for i, kv := range f {
		out[i] = hpack.HeaderField{Name: kv[0], Value: kv[1]}
	}
	return out
}

// HTTP2Scheme implements rules.HTTP2Conn.
func (h *httpRules) HTTP2Scheme() string {
	if fc := h.f.front; fc != nil && !fc.clear {
		return "https"
	}
	return "http"
}

// SetHTTP2 implements rules.HTTP2Switch: HTTP2::disable in
// CLIENT_ACCEPTED (under the rules' lock, before the handshake).
func (r *mblbRules) SetHTTP2(enabled bool) error {
	if r.snap.Cfg.HTTP2 == nil {
		return errors.New("the virtual server has no http2 profile")
	}
	r.h2off.Store(!enabled)
	return nil
}

// withH2Switch makes cfg leave h2 out of its ALPN offer once a rule of r
// ran HTTP2::disable (h2off), for a virtual whose rules have the
// command (rules.Program.SwitchesHTTP2): the client then speaks
// HTTP/1.1. The configurations without h2 are made on that rare path.
func withH2Switch(cfg *tls.Config, r *mblbRules) *tls.Config {
	if !irules.Program(r.rules).SwitchesHTTP2() {
		return cfg
	}
	return &tls.Config{GetConfigForClient: func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
		base := cfg
		if cfg.GetConfigForClient != nil {
			c, err := cfg.GetConfigForClient(hello)
			if err != nil {
				return nil, err
			}
			if c != nil {
				base = c
			}
		}
		if !r.h2off.Load() || !slices.Contains(base.NextProtos, "h2") {
			return base, nil
		}
		c := base.Clone()
		c.NextProtos = slices.DeleteFunc(slices.Clone(base.NextProtos), func(p string) bool { return p == "h2" })
		return c, nil
	}}
}

// refuseHTTP2 answers the preface of a cleartext client whose rule ran
// HTTP2::disable: SETTINGS, then GOAWAY HTTP_1_1_REQUIRED (RFC 9113
// section 7), then FIN; what the client sent meanwhile is read (up to
// a bound, for a second at most) before the caller closes, so that the
// close does not reset the connection before the client read the
// GOAWAY.
func refuseHTTP2(c net.Conn, raw *net.TCPConn) {
	var b []byte
	w := bufWriter{&b}
	fr := http2.NewFramer(w, nil)
	fr.WriteSettings()
	fr.WriteGoAway(0, http2.ErrCodeHTTP11Required, nil)
	raw.SetWriteDeadline(time.Now().Add(time.Second))
	if _, err := c.Write(b); err != nil {
		return
	}
	raw.CloseWrite()
	raw.SetReadDeadline(time.Now().Add(time.Second))
	io.Copy(io.Discard, io.LimitReader(raw, 64<<10))
}

// bufWriter appends what is written to a slice.
type bufWriter struct{ b *[]byte }

func (w bufWriter) Write(p []byte) (int, error) {
	*w.b = append(*w.b, p...)
	return len(p), nil
}

// laneOf notes the lane of an HTTP/2 client's engine session, for the
// rules (h2Request).
func (l *h2Lanes) laneOf(sess *mblb.ClientConn, eng net.Conn) {
	if l == nil {
		return
	}
	if lane := h2gw.LaneOf(eng); lane != nil {
		l.byConn.Store(sess, lane)
	}
}

var _ rules.HTTPHSTS = (*httpRules)(nil)

// HTTPHSTS implements rules.HTTPHSTS: the connection's, once a rule set
// it, else the http profile's hsts block.
func (h *httpRules) HTTPHSTS() rules.HSTS {
	if h.hsts != nil {
		return *h.hsts
	}
	opts := &h.f.mv.cfg.Request.HTTP
	return rules.ParseHSTS(opts.HSTSLine, opts.HSTS != nil)
}

// SetHTTPHSTS implements rules.HTTPHSTS: for the rest of the client's
// connection; an HTTP/2 client's every lane, and those it opens later
// (http2.go).
func (h *httpRules) SetHTTPHSTS(v rules.HSTS) {
	h.hsts = &v
	line := v.Line()
	if h.f.sess != nil {
		h.f.sess.SetHSTS(line)
	}
	if l := h.f.lanes; l != nil {
		l.first.SetHSTS(line)
		l.byConn.Range(func(k, _ any) bool {
			k.(*mblb.ClientConn).SetHSTS(line)
			return true
		})
	}
}

var _ rules.HTTPReasons = (*httpRules)(nil)

// HTTPPassthroughReason implements rules.HTTPReasons: the client's
// session (an HTTP/2 client's first lane: its own HTTP filter goes
// into passthrough for no request).
func (h *httpRules) HTTPPassthroughReason() int {
	if s := h.f.sess; s != nil {
		return int(s.Passthrough())
	}
	return 0
}

// HTTPRejectReason implements rules.HTTPReasons.
func (h *httpRules) HTTPRejectReason() int {
	if s := h.f.sess; s != nil {
		return int(s.Rejected())
	}
	return 0
}
