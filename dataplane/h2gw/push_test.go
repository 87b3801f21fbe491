package h2gw

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// pushEngine serves HTTP/1.1 on an engine connection as the engine
// would, and pushes as a rule would in HTTP_REQUEST: for each `push`
// query value of a request, Lane.Push with the lane's number of the
// request (a value starting with "local:" answered by the gateway).
// A request for /slow is answered once hold is closed. Each answer says
// what the engine saw.
func pushEngine(c net.Conn, hold <-chan struct{}, taken chan<- bool) {
	defer c.Close()
	lane := LaneOf(c)
	br := bufio.NewReader(c)
	for n := uint64(1); ; n++ {
		r, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		io.Copy(io.Discard, r.Body)
		for _, v := range r.URL.Query()["push"] {
			p := &Push{Scheme: "https", Authority: r.Host, Header: []hpack.HeaderField{{Name: "x-push", Value: "yes"}}}
			if path, ok := strings.CutPrefix(v, "local:"); ok {
				p.Path, p.Local, p.Body = path, true, []byte("local "+path)
				p.RespHeader = []hpack.HeaderField{{Name: "content-type", Value: "text/css"}}
			} else {
				p.Path = v
			}
			ok := lane.Push(n, p)
			if taken != nil {
				taken <- ok
			}
		}
		if r.URL.Path == "/slow" {
			select {
			case <-hold:
			case <-time.After(20 * time.Second):
			}
		}
		id, _, _ := lane.Stream(n)
		body := fmt.Sprintf("%s stream=%d host=%s x-push=%s", r.URL.Path, id, r.Host, r.Header.Get("X-Push"))
		if _, err := io.WriteString(c, ok(body)); err != nil {
			return
		}
	}
}

// startPushGateway serves one client connection through Serve with
// pushEngine behind every lane, on addr.
func startPushGateway(t *testing.T, addr string, cfg *Config, hold <-chan struct{}, taken chan<- bool) *h2conn {
	t.Helper()
	return dialGateway(t, addr, cfg, nil, func() (net.Conn, error) {
		gw, eng := Pipe()
		go pushEngine(eng, hold, taken)
		return gw, nil
	})
}

// pushTrace is what a client saw of its streams: the promises (in
// order, as "on->promised path authority x-push"), each stream's
// answer, and the order of the events that matter (a promise before
// the end of the stream it rides on).
type pushTrace struct {
	promises []string
	answers  map[uint32]string
	events   []string
}

// readPushes reads frames until every stream of want ended (or was
// reset), resetting each promised stream in reset as soon as it is
// promised.
func (h *h2conn) readPushes(want []uint32, reset ...uint32) pushTrace {
	h.t.Helper()
	tr := pushTrace{answers: map[uint32]string{}}
	ended := map[uint32]bool{}
	bodies := map[uint32]string{}
	status := map[uint32]string{}
	done := func() bool {
		for _, id := range want {
			if !ended[id] {
				return false
			}
		}
		return true
	}
	for !done() {
		f, err := h.fr.ReadFrame()
		if err != nil {
			h.t.Fatalf("reading frames (%v so far, %v): %v", tr.events, tr.promises, err)
		}
		var end uint32
		switch f := f.(type) {
		case *http2.PushPromiseFrame:
			fields, err := h.fr.ReadMetaHeaders.DecodeFull(f.HeaderBlockFragment())
			if err != nil || !f.HeadersEnded() {
				h.t.Fatalf("PUSH_PROMISE %d: %v", f.PromiseID, err)
			}
			var path, auth, x, method, scheme string
			for _, hf := range fields {
				switch hf.Name {
				case ":path":
					path = hf.Value
				case ":authority":
					auth = hf.Value
				case ":method":
					method = hf.Value
				case ":scheme":
					scheme = hf.Value
				case "x-push":
					x = hf.Value
				}
			}
			tr.promises = append(tr.promises, fmt.Sprintf("%d->%d %s %s %s %s x-push=%s", f.StreamID, f.PromiseID, method, scheme, auth, path, x))
			tr.events = append(tr.events, fmt.Sprintf("promise %d on %d", f.PromiseID, f.StreamID))
			if slices.Contains(reset, f.PromiseID) {
				h.fr.WriteRSTStream(f.PromiseID, http2.ErrCodeCancel)
				h.flush()
				ended[f.PromiseID] = true
				tr.answers[f.PromiseID] = "reset by the client"
			}
		case *http2.MetaHeadersFrame:
			if status[f.StreamID] == "" {
				status[f.StreamID] = f.PseudoValue("status")
			}
			if f.StreamEnded() {
				end = f.StreamID
			}
		case *http2.DataFrame:
			bodies[f.StreamID] += string(f.Data())
			if n := len(f.Data()); n > 0 {
				h.fr.WriteWindowUpdate(0, uint32(n))
				h.fr.WriteWindowUpdate(f.StreamID, uint32(n))
				h.flush()
			}
			if f.StreamEnded() {
				end = f.StreamID
			}
		case *http2.RSTStreamFrame:
			end = f.StreamID
			bodies[f.StreamID] = "RST_STREAM " + f.ErrCode.String()
		case *http2.GoAwayFrame:
			h.t.Fatalf("GOAWAY %v (%v)", f.ErrCode, tr.events)
		}
		if end != 0 && !ended[end] {
			ended[end] = true
			tr.answers[end] = strings.TrimSpace(status[end] + " " + bodies[end])
			tr.events = append(tr.events, fmt.Sprintf("end %d", end))
		}
	}
	return tr
}

// TestPush: HTTP2::push as the gateway does it: PUSH_PROMISE on the
// client's stream before that stream ends, the promised request to an
// engine lane (with the rule's fields) and its answer on the promised
// stream, or the gateway's own answer; no promise to a client that
// disabled push, none past the client's stream limit; a promised
// stream the client resets leaves the connection serving; a pushed
// request's own push is not taken.
func TestPush(t *testing.T) {
	const addr = "127.143.1.1:0"
	t.Run("two pushes", func(t *testing.T) {
		cfg := &Config{Stats: new(Stats)}
		taken := make(chan bool, 16)
		h := startPushGateway(t, addr, cfg, nil, taken)
		h.handshake()
		h.headers(1, true, get("/page?push=/a.css%3Fpush=/again&push=local:/b.js")...)
		tr := h.readPushes([]uint32{1, 2, 4})
		wantPromises := []string{
			"1->2 GET https www.example /a.css?push=/again x-push=yes",
			"1->4 GET https www.example /b.js x-push=yes",
		}
		if !slices.Equal(tr.promises, wantPromises) {
			t.Errorf("promises %q, want %q", tr.promises, wantPromises)
		}
		want := map[uint32]string{
			1: "200 /page stream=1 host=www.example x-push=",
			2: "200 /a.css stream=2 host=www.example x-push=yes",
			4: "200 local /b.js",
		}
		for id, w := range want {
			if tr.answers[id] != w {
				t.Errorf("stream %d: %q, want %q", id, tr.answers[id], w)
			}
		}
		if i, j := slices.Index(tr.events, "promise 4 on 1"), slices.Index(tr.events, "end 1"); i < 0 || j < i {
			t.Errorf("events %v: the promises go before their stream ends", tr.events)
		}
		// The page's two pushes were taken; the pushed /a.css's own was
		// not (a push does not push).
		got := []bool{<-taken, <-taken, <-taken}
		if !slices.Equal(got, []bool{true, true, false}) {
			t.Errorf("pushes taken %v, want true true false", got)
		}
		// The next stream goes on, and so do promises on it.
		h.headers(3, true, get("/next?push=/c.css")...)
		tr = h.readPushes([]uint32{3, 6})
		if len(tr.promises) != 1 || tr.promises[0] != "3->6 GET https www.example /c.css x-push=yes" || tr.answers[6] != "200 /c.css stream=6 host=www.example x-push=yes" {
			t.Errorf("second page: %q %v", tr.promises, tr.answers)
		}
		if n := cfg.Stats.Pushed.Load(); n != 3 {
			t.Errorf("pushed %d, want 3", n)
		}
	})
	t.Run("push disabled", func(t *testing.T) {
		taken := make(chan bool, 16)
		h := startPushGateway(t, addr, &Config{}, nil, taken)
		h.handshake(http2.Setting{ID: http2.SettingEnablePush, Val: 0})
		h.headers(1, true, get("/page?push=/a.css&push=local:/b.js")...)
		tr := h.readPushes([]uint32{1})
		if len(tr.promises) != 0 || tr.answers[1] != "200 /page stream=1 host=www.example x-push=" {
			t.Errorf("promises %q, answer %q", tr.promises, tr.answers[1])
		}
		if got := []bool{<-taken, <-taken}; !slices.Equal(got, []bool{false, false}) {
			t.Errorf("pushes taken %v, want none", got)
		}
	})
	t.Run("client resets a promise", func(t *testing.T) {
		h := startPushGateway(t, addr, &Config{}, nil, nil)
		h.handshake()
		h.headers(1, true, get("/page?push=/a.css&push=/b.css")...)
		tr := h.readPushes([]uint32{1, 2, 4}, 2)
		if tr.answers[2] != "reset by the client" || tr.answers[4] != "200 /b.css stream=4 host=www.example x-push=yes" {
			t.Errorf("answers %v", tr.answers)
		}
		// A late reset of a promised stream that ended is no error.
		h.fr.WriteRSTStream(4, http2.ErrCodeCancel)
		h.flush()
		h.headers(3, true, get("/next")...)
		if status, body := h.response(3); status != "200" || body != "/next stream=3 host=www.example x-push=" {
			t.Errorf("after the reset: %s %q", status, body)
		}
	})
	t.Run("client stream limit", func(t *testing.T) {
		hold := make(chan struct{})
		h := startPushGateway(t, addr, &Config{}, hold, nil)
		h.handshake(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 1})
		h.headers(1, true, get("/page?push=/slow&push=/slow")...)
		tr := h.readPushes([]uint32{1})
		close(hold)
		if len(tr.promises) != 1 {
			t.Fatalf("promises %q, want one (the client allows one stream)", tr.promises)
		}
		tr = h.readPushes([]uint32{2})
		if tr.answers[2] != "200 /slow stream=2 host=www.example x-push=yes" {
			t.Errorf("the pushed answer %q", tr.answers[2])
		}
	})
	t.Run("idle even stream", func(t *testing.T) {
		h := startPushGateway(t, addr, &Config{}, nil, nil)
		h.handshake()
		h.fr.WriteRSTStream(2, http2.ErrCodeCancel) // never promised
		h.flush()
		h.expectGoAway(http2.ErrCodeProtocol)
	})
}
