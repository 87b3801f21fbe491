package dataplane

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/openltm/openltm/dataplane/h2gw"
	"github.com/openltm/openltm/dataplane/mblb"
)

// pushClient is an HTTP/2 client on x/net's framer that accepts pushes
// (net/http's client refuses them): it sends one GET and reads the
// answer and whatever is pushed with it.
type pushClient struct {
	t   *testing.T
	c   net.Conn
	bw  *bufio.Writer
	fr  *http2.Framer
	dec *hpack.Decoder
	enc *hpack.Encoder
	buf bytes.Buffer
}

// dialPush opens a prior-knowledge HTTP/2 connection to vs with
// SETTINGS_ENABLE_PUSH as push says.
func dialPush(t *testing.T, vs string, push bool) *pushClient {
	t.Helper()
	c, err := net.DialTimeout("tcp", vs, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(20 * time.Second))
	pc := &pushClient{t: t, c: c, bw: bufio.NewWriter(c), dec: hpack.NewDecoder(4096, nil)}
	pc.fr = http2.NewFramer(pc.bw, c)
	pc.fr.ReadMetaHeaders = pc.dec
	pc.enc = hpack.NewEncoder(&pc.buf)
	io.WriteString(pc.bw, h2gw.Preface)
	enable := uint32(0)
	if push {
		enable = 1
	}
	pc.fr.WriteSettings(http2.Setting{ID: http2.SettingEnablePush, Val: enable})
	pc.bw.Flush()
	return pc
}

// get sends GET path on stream id and reads frames until it and every
// stream promised meanwhile ended; it returns the promises ("on->id
// path", in order) and each stream's answer ("status body").
func (pc *pushClient) get(id uint32, path string) (promises []string, answers map[uint32]string) {
	pc.t.Helper()
	return pc.do(id, "GET", path, "")
}

// do is get with another method and a body.
func (pc *pushClient) do(id uint32, method, path, reqBody string) (promises []string, answers map[uint32]string) {
	pc.t.Helper()
	pc.buf.Reset()
	fields := [][2]string{{":method", method}, {":scheme", "http"}, {":authority", "www.example"}, {":path", path}, {"accept", "text/html"}}
	if reqBody != "" {
		fields = append(fields, [2]string{"content-length", fmt.Sprint(len(reqBody))})
	}
	for _, f := range fields {
		pc.enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	pc.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: pc.buf.Bytes(), EndStream: reqBody == "", EndHeaders: true})
	if reqBody != "" {
		pc.fr.WriteData(id, true, []byte(reqBody))
	}
	pc.bw.Flush()
	answers = map[uint32]string{}
	open := map[uint32]bool{id: true}
	status := map[uint32]string{}
	body := map[uint32]string{}
	for len(open) > 0 {
		f, err := pc.fr.ReadFrame()
		if err != nil {
			pc.t.Fatalf("reading frames (promises %v, answers %v): %v", promises, answers, err)
		}
		var end uint32
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				pc.fr.WriteSettingsAck()
				pc.bw.Flush()
			}
		case *http2.PushPromiseFrame:
			fields, err := pc.dec.DecodeFull(f.HeaderBlockFragment())
			if err != nil {
				pc.t.Fatal(err)
			}
			var p []string
			for _, hf := range fields {
				p = append(p, hf.Name+"="+hf.Value)
			}
			promises = append(promises, fmt.Sprintf("%d->%d %s", f.StreamID, f.PromiseID, strings.Join(p, " ")))
			open[f.PromiseID] = true
		case *http2.MetaHeadersFrame:
			if status[f.StreamID] == "" {
				status[f.StreamID] = f.PseudoValue("status")
			}
			if f.StreamEnded() {
				end = f.StreamID
			}
		case *http2.DataFrame:
			body[f.StreamID] += string(f.Data())
			if n := uint32(len(f.Data())); n > 0 {
				pc.fr.WriteWindowUpdate(0, n)
				pc.fr.WriteWindowUpdate(f.StreamID, n)
				pc.bw.Flush()
			}
			if f.StreamEnded() {
				end = f.StreamID
			}
		case *http2.RSTStreamFrame:
			end = f.StreamID
			body[end] = "RST_STREAM " + f.ErrCode.String()
		case *http2.GoAwayFrame:
			pc.t.Fatalf("GOAWAY %v", f.ErrCode)
		}
		if end != 0 && open[end] {
			delete(open, end)
			answers[end] = status[end] + " " + body[end]
		}
	}
	return promises, answers
}

// TestHTTP2Push: HTTP2::push in HTTP_REQUEST of an http virtual with
// the http2 profile and HTTP/1.1 members: a client that allows pushes
// gets the page's two promises on its stream, each promised request
// goes to the pool through the rule's HTTP_REQUEST (which sees the
// pushed stream, and whose own push does nothing there), and the
// answers come on the promised streams; one pushed from HTTP_RESPONSE,
// one from HTTP_REQUEST_DATA and one answered by the rule's -content; a client that disabled push
// gets the page alone; an HTTP/1.1 client too, without an error.
func TestHTTP2Push(t *testing.T) {
	const vs = "127.143.2.1:80"
	h2Member(t, "127.143.2.11:80", "M")
	rule := `when HTTP_REQUEST {
		HTTP::header insert X-Rule "s=[HTTP2::stream] [HTTP::header Accept-Encoding]"
		switch [HTTP::path] {
			"/" {
				HTTP2::push /style.css Accept-Encoding gzip
				HTTP2::push /app.js
			}
			"/local" { HTTP2::push /inline.js -content "var x = 1;" -- Content-Type text/javascript }
			"/form" { HTTP::collect [HTTP::header Content-Length] }
			"/style.css" { HTTP2::push /never.css }
		}
	}
	when HTTP_REQUEST_DATA {
		HTTP2::push /thanks.css x-body [HTTP::payload]
	}
	when HTTP_RESPONSE {
		if { [HTTP2::stream] == 3 } { HTTP2::push /late.png }
	}`
	cfg := l7Config(t, vs, true, mblb.HTTPOptions{}, rule, "127.143.2.11:80")
	st := new(h2gw.Stats)
	cfg.Virtuals["/Common/vs"].HTTP2 = &HTTP2{Always: true, Config: h2gw.Config{Stats: st}}
	p, _ := newPlane(t)
	mustApply(t, p, cfg)

	pc := dialPush(t, vs, true)
	promises, answers := pc.get(1, "/")
	wantPromises := []string{
		"1->2 :method=GET :scheme=http :authority=www.example :path=/style.css accept-encoding=gzip",
		"1->4 :method=GET :scheme=http :authority=www.example :path=/app.js",
	}
	if !slices.Equal(promises, wantPromises) {
		t.Errorf("promises\n%q\nwant\n%q", promises, wantPromises)
	}
	want := map[uint32]string{
		1: "200 M HTTP/1.1 GET / xff= rule=s=1 body=0",
		2: "200 M HTTP/1.1 GET /style.css xff= rule=s=2 gzip body=0",
		4: "200 M HTTP/1.1 GET /app.js xff= rule=s=4 body=0",
	}
	checkAnswers(t, answers, want)

	// Pushed from HTTP_RESPONSE (stream 3's), and from -content.
	promises, answers = pc.get(3, "/other")
	if len(promises) != 1 || !strings.HasPrefix(promises[0], "3->6 ") || !strings.HasSuffix(promises[0], ":path=/late.png") {
		t.Errorf("promises from HTTP_RESPONSE %q", promises)
	}
	checkAnswers(t, answers, map[uint32]string{
		3: "200 M HTTP/1.1 GET /other xff= rule=s=3 body=0",
		6: "200 M HTTP/1.1 GET /late.png xff= rule=s=6 body=0",
	})
	promises, answers = pc.get(5, "/local")
	if len(promises) != 1 || !strings.HasPrefix(promises[0], "5->8 ") {
		t.Errorf("promises of -content %q", promises)
	}
	checkAnswers(t, answers, map[uint32]string{
		5: "200 M HTTP/1.1 GET /local xff= rule=s=5 body=0",
		8: "200 var x = 1;",
	})
	// From HTTP_REQUEST_DATA, with the body collected.
	promises, answers = pc.do(7, "POST", "/form", "name=x")
	if len(promises) != 1 || !strings.HasPrefix(promises[0], "7->10 ") || !strings.HasSuffix(promises[0], ":path=/thanks.css x-body=name=x") {
		t.Errorf("promises from HTTP_REQUEST_DATA %q", promises)
	}
	checkAnswers(t, answers, map[uint32]string{
		7:  "200 M HTTP/1.1 POST /form xff= rule=s=7 body=6",
		10: "200 M HTTP/1.1 GET /thanks.css xff= rule=s=10 body=0",
	})
	if n := st.Pushed.Load(); n != 5 {
		t.Errorf("pushed %d, want 5", n)
	}

	// Push disabled: the page alone.
	off := dialPush(t, vs, false)
	promises, answers = off.get(1, "/")
	if len(promises) != 0 {
		t.Errorf("promises to a client that disabled push: %q", promises)
	}
	checkAnswers(t, answers, map[uint32]string{1: "200 M HTTP/1.1 GET / xff= rule=s=1 body=0"})

	// HTTP/1.1: no push, no error.
	var protos http.Protocols
	protos.SetHTTP1(true)
	tr := &http.Transport{Protocols: &protos}
	t.Cleanup(tr.CloseIdleConnections)
	resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Get("http://" + vs + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "M HTTP/1.1 GET / xff= rule=s=0 gzip body=0" {
		t.Errorf("HTTP/1.1: %d %q", resp.StatusCode, b)
	}
}

// checkAnswers compares the answers by stream.
func checkAnswers(t *testing.T, got, want map[uint32]string) {
	t.Helper()
	var ids []int
	for id := range want {
		ids = append(ids, int(id))
	}
	sort.Ints(ids)
	for _, id := range ids {
		if got[uint32(id)] != want[uint32(id)] {
			t.Errorf("stream %d: %q, want %q", id, got[uint32(id)], want[uint32(id)])
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d streams answered, want %d: %v", len(got), len(want), got)
	}
}
