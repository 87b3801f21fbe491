package dataplane

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/icap/icaptest"
	"github.com/openltm/openltm/dataplane/mblb"
)

// patternReader gives n bytes of bodyPattern's pattern without holding
// them: the client sends a body of several MiB from nothing.
type patternReader struct{ i, n int }

func (r *patternReader) Read(p []byte) (int, error) {
	if r.i >= r.n {
		return 0, io.EOF
	}
	k := min(len(p), r.n-r.i)
	for j := range p[:k] {
		i := r.i + j
		p[j] = byte(i%251) ^ byte(i>>12)
	}
	r.i += k
	return k, nil
}

// watchHeap samples the heap until the function it returns is called,
// which says by how much it grew at most meanwhile. The collector runs
// at 10% meanwhile, so that the heap follows what is held rather than
// garbage.
func watchHeap() func() uint64 {
	old := debug.SetGCPercent(10)
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	base, top := m.HeapAlloc, m.HeapAlloc
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tk := time.NewTicker(2 * time.Millisecond)
		defer tk.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			top = max(top, m.HeapAlloc)
			select {
			case <-stop:
				return
			case <-tk.C:
			}
		}
	}()
	return func() uint64 {
		close(stop)
		<-done
		debug.SetGCPercent(old)
		return top - base
	}
}

// TestRequestAdaptStreamed: requests of 16 MiB (over the 1 MiB message
// bound) through request-adapt from a Go client, by Content-Length and
// chunked. An ICAP server that decides on the preview sees only the
// preview (no ieof, no 100 Continue): its 204 lets the whole body stream
// on to the member intact (its checksum), without ltmd allocating
// anything near the body's size; a preview holding the blocked word gets
// the ICAP server's page and the member never sees the request; a
// request the ICAP server rewrote on the preview goes in the original's
// place. (A server that wants the rest: TestRequestAdaptStreamedRest.)
func TestRequestAdaptStreamed(t *testing.T) {
	startSumMember(t, "127.66.130.11:80")
	decide := icapListen(t, "127.66.130.21:1344", icaptest.Config{Block: "EICAR", Header: "X-Scan", Value: "clean", Add: "X-Collected: icap", DecidePreview: true})
	const size = 16 << 20
	pat := bodyPattern(size)
	sum, sha1024 := sha256.Sum256(pat), sha256.Sum256(pat[:1024])
	p, lg := newPlane(t)
	for _, tc := range []struct {
		name    string
		icap    *icaptest.Server
		chunked bool
		prefix  string // the body starts with it
		scan    bool   // the request carries X-Scan, which the ICAP server rewrites
		status  int    // 0: the client is reset
		want    string
		counted string
	}{
		{"Content-Length, 204 after the preview", decide, false, "", false, 200, "n=16777216 sha=" + hex.EncodeToString(sum[:]), "unmodified"},
		{"chunked, 204 after the preview", decide, true, "", false, 200, "n=16777216 sha=" + hex.EncodeToString(sum[:]), "unmodified"},
		{"blocked in the preview", decide, false, "EICAR", false, 403, "blocked by the ICAP service", "answered"},
		// The ICAP server's request, decided on the preview, goes in
		// the original's place: its body is the preview it saw.
		{"modified on the preview", decide, false, "", true, 200, "n=1024 sha=" + hex.EncodeToString(sha1024[:]) + " collected=icap", "modified"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mustApply(t, p, adaptConfig(t, "127.66.130.1:80", "127.66.130.11:80", adapt(mblb.AdaptReset, 1024), nil, tc.icap.Addr()))
			tr := &http.Transport{}
			defer tr.CloseIdleConnections()
			hc := &http.Client{Transport: tr, Timeout: 60 * time.Second}
			var body io.Reader = &patternReader{n: size}
			if tc.prefix != "" {
				body = io.MultiReader(strings.NewReader(tc.prefix), &patternReader{n: size - len(tc.prefix)})
			}
			req, _ := http.NewRequest("PUT", "http://127.66.130.1:80/up", body)
			if tc.scan {
				req.Header.Set("X-Scan", "raw")
			}
			if tc.chunked {
				req.ContentLength = -1
			} else {
				req.ContentLength = size
			}
			was := p.ProfileStats(ProfileReqAdapt, "/Common/av", []string{"/Common/vs"}).Adapt
			before, _ := p.MBLBStats("/Common/vs")
			stPrev, stEOF, stCont := tc.icap.Stats.Previews.Load(), tc.icap.Stats.PreviewEOF.Load(), tc.icap.Stats.Continues.Load()
			peak := watchHeap()
			resp, err := hc.Do(req)
			grew := peak()
			if tc.status == 0 {
				if err == nil {
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					t.Fatalf("%d %q, want the client ended", resp.StatusCode, b)
				}
				if n := tc.icap.Stats.Continues.Load() - stCont; n != 1 {
					t.Fatalf("%d 100 Continue, want 1", n)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v (log %s)", err, lg)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || !strings.Contains(string(b), tc.want) {
				t.Fatalf("%d %q, want %d %q (log %s)", resp.StatusCode, b, tc.status, tc.want, lg)
			}
			if n := tc.icap.Stats.Previews.Load() - stPrev; n != 1 {
				t.Errorf("%d previews, want 1", n)
			}
			if n := tc.icap.Stats.PreviewEOF.Load() - stEOF; n != 0 {
				t.Errorf("%d previews with ieof, want none", n)
			}
			if n := tc.icap.Stats.Continues.Load() - stCont; n != 0 {
				t.Errorf("%d 100 Continue, want none", n)
			}
			now := p.ProfileStats(ProfileReqAdapt, "/Common/av", []string{"/Common/vs"}).Adapt
			if got := adaptCounted(was, now); got != tc.counted {
				t.Errorf("counted as %q, want %q", got, tc.counted)
			}
			after, _ := p.MBLBStats("/Common/vs")
			streamed := after.AdaptStreamed - before.AdaptStreamed
			if tc.counted == "unmodified" {
				if streamed != 1 {
					t.Errorf("%d requests streamed after a 204, want 1", streamed)
				}
				// The heap (client, ltmd, member and ICAP server in
				// this process) never grew by anything near the body:
				// it was never held whole. (A chunked body is held up
				// to the 1 MiB bound before it streams.)
				if grew > size/2 {
					t.Errorf("the heap grew by %d bytes while %d streamed", grew, size)
				}
				t.Logf("heap grew by at most %d bytes for a %d-byte upload", grew, size)
			} else if streamed != 0 {
				t.Errorf("%d requests streamed, want none", streamed)
			}
		})
	}
}

// TestRequestAdaptStreamedSlowHead: a client that sends the head of a
// 3 MiB upload alone, then its body: the preview waits for the body's
// start (the read buffer may move meanwhile), and the whole body still
// reaches the member intact after the 204.
func TestRequestAdaptStreamedSlowHead(t *testing.T) {
	startSumMember(t, "127.66.130.12:80")
	srv := icapListen(t, "127.66.130.23:1344", icaptest.Config{Block: "EICAR", DecidePreview: true})
	p, lg := newPlane(t)
	mustApply(t, p, adaptConfig(t, "127.66.130.2:80", "127.66.130.12:80", adapt(mblb.AdaptReset, 1024), nil, srv.Addr()))
	const size = 3 << 20
	body := bodyPattern(size)
	sum := sha256.Sum256(body)
	c := dialHTTPVS(t, "127.66.130.2:80")
	c.c.SetDeadline(time.Now().Add(60 * time.Second))
	if _, err := io.WriteString(c.c, "PUT /slow HTTP/1.1\r\nHost: a\r\nContent-Length: 3145728\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // the head alone first, most often
	go func() {
		// The body's start in small writes, a pause within the first
		// preview's worth, then the rest.
		for i := 0; i < 4096; i += 100 {
			if _, err := c.c.Write(body[i : i+100]); err != nil {
				return
			}
			if i == 500 {
				time.Sleep(20 * time.Millisecond)
			}
		}
		c.c.Write(body[4100:])
	}()
	r, err := http.ReadResponse(c.br, nil)
	if err != nil {
		t.Fatalf("%v (log %s)", err, lg)
	}
	b, _ := io.ReadAll(r.Body)
	if want := "n=3145728 sha=" + hex.EncodeToString(sum[:]); !strings.HasPrefix(string(b), want) {
		t.Fatalf("%q, want %q (log %s)", b, want, lg)
	}
	if srv.Stats.Previews.Load() != 1 || srv.Stats.Continues.Load() != 0 {
		t.Fatalf("%d previews, %d 100 Continue; want one preview decided on", srv.Stats.Previews.Load(), srv.Stats.Continues.Load())
	}
}

// TestRequestAdaptStreamedRest: 4 MiB uploads (over the 1 MiB bound)
// to an ICAP server that wants the rest after the preview (100
// Continue), or that takes no preview: the rest of the body goes to it
// as it arrives, and its answer after the whole decides. The request
// offers no 204 then, so the server sends the body back (echoed) and
// the member gets it intact; a rewritten request carries the whole body
// too; a body with the blocked word past the preview gets the page.
func TestRequestAdaptStreamedRest(t *testing.T) {
	startSumMember(t, "127.93.1.11:80")
	wants := icapListen(t, "127.93.1.21:1344", icaptest.Config{Block: "EICAR", Header: "X-Scan", Value: "clean", Add: "X-Collected: icap"})
	late := icapListen(t, "127.93.1.22:1344", icaptest.Config{Always204: true})
	const size = 4 << 20
	sum := sha256.Sum256(bodyPattern(size))
	whole := "n=4194304 sha=" + hex.EncodeToString(sum[:])
	p, lg := newPlane(t)
	for _, tc := range []struct {
		name      string
		icap      *icaptest.Server
		down      mblb.AdaptDown
		preview   int
		chunked   bool
		blocked   bool // the word past the preview
		scan      bool // X-Scan, which the ICAP server rewrites
		status    int
		want      string
		counted   string
		continues int64
		echoed    int64
	}{
		{"Content-Length, echoed after 100 Continue", wants, mblb.AdaptReset, 1024, false, false, false, 200, whole + " collected=", "modified", 1, 1},
		{"chunked, echoed after 100 Continue", wants, mblb.AdaptReset, 1024, true, false, false, 200, whole + " collected=", "modified", 1, 1},
		{"rewritten with the whole body", wants, mblb.AdaptReset, 1024, false, false, true, 200, whole + " collected=icap", "modified", 1, 0},
		{"blocked past the preview", wants, mblb.AdaptReset, 1024, false, true, false, 403, "blocked by the ICAP service", "answered", 1, 0},
		{"no preview, the whole body streamed", wants, mblb.AdaptReset, 0, false, false, false, 200, whole + " collected=", "modified", 0, 1},
		{"no preview, chunked", wants, mblb.AdaptReset, 0, true, false, false, 200, whole + " collected=", "modified", 0, 1},
		// A 204 after the whole body: nothing was held to go on with,
		// so even service-down-action ignore resets the client.
		{"a 204 after the whole body, ignore", late, mblb.AdaptIgnore, 1024, false, false, false, 0, "", "failed", 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mustApply(t, p, adaptConfig(t, "127.93.1.1:80", "127.93.1.11:80", adapt(tc.down, tc.preview), nil, tc.icap.Addr()))
			tr := &http.Transport{}
			defer tr.CloseIdleConnections()
			hc := &http.Client{Transport: tr, Timeout: 60 * time.Second}
			var body io.Reader = &patternReader{n: size}
			if tc.blocked {
				body = io.MultiReader(&patternReader{n: 3 << 20}, strings.NewReader("EICAR"), &patternReader{n: size - 3<<20 - 5})
			}
			req, _ := http.NewRequest("PUT", "http://127.93.1.1:80/up", body)
			if tc.scan {
				req.Header.Set("X-Scan", "raw")
			}
			req.ContentLength = size
			if tc.chunked {
				req.ContentLength = -1
			}
			was := p.ProfileStats(ProfileReqAdapt, "/Common/av", []string{"/Common/vs"}).Adapt
			stCont, stEcho := tc.icap.Stats.Continues.Load(), tc.icap.Stats.Echoed.Load()
			resp, err := hc.Do(req)
			if tc.status == 0 {
				if err == nil {
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					t.Fatalf("%d %q, want the client reset", resp.StatusCode, b)
				}
				eventually(t, "the exchange counted "+tc.counted+" and the client reset", func() bool {
					return adaptCounted(was, p.ProfileStats(ProfileReqAdapt, "/Common/av", []string{"/Common/vs"}).Adapt) == tc.counted &&
						strings.Contains(lg.String(), "the streamed body is not held, reset")
				})
				return
			}
			if err != nil {
				t.Fatalf("%v (log %s)", err, lg)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || !strings.Contains(string(b), tc.want) {
				t.Fatalf("%d %q, want %d %q (log %s)", resp.StatusCode, b, tc.status, tc.want, lg)
			}
			if n := tc.icap.Stats.Continues.Load() - stCont; n != tc.continues {
				t.Errorf("%d 100 Continue, want %d", n, tc.continues)
			}
			if n := tc.icap.Stats.Echoed.Load() - stEcho; n != tc.echoed {
				t.Errorf("%d echoed, want %d", n, tc.echoed)
			}
			now := p.ProfileStats(ProfileReqAdapt, "/Common/av", []string{"/Common/vs"}).Adapt
			if got := adaptCounted(was, now); got != tc.counted {
				t.Errorf("counted as %q, want %q", got, tc.counted)
			}
		})
	}
}

// TestAdaptEventsStreamed: the ADAPT_REQUEST_ events over 2 MiB uploads
// (streamed past the bound): after a 204 to the preview (bypass) or the
// service down and ignored, over the head as it goes, its edit reaching
// the member with the whole body; after a request the ICAP server
// rewrote once it had the whole body (modify), ADAPT_REQUEST_HEADERS
// too; over the ICAP server's page (respond); and HTTP::respond there
// answers the client in the request's place.
func TestAdaptEventsStreamed(t *testing.T) {
	startSumMember(t, "127.93.2.11:80")
	decide := icapListen(t, "127.93.2.21:1344", icaptest.Config{Block: "EICAR", DecidePreview: true})
	wants := icapListen(t, "127.93.2.22:1344", icaptest.Config{Block: "EICAR", Header: "X-Scan", Value: "clean", Add: "X-Collected: icap"})
	rule := `when ADAPT_REQUEST_HEADERS { HTTP::header replace X-Collected "headers-[HTTP::header X-Scan]" }
when ADAPT_REQUEST_RESULT {
	if {[HTTP::header exists X-Respond]} {
		HTTP::respond 299 content "by rule after [ADAPT::result]"
	} elseif {![HTTP::header exists X-Collected]} {
		HTTP::header insert X-Collected [ADAPT::result]
	}
}`
	const size = 2 << 20
	sum := sha256.Sum256(bodyPattern(size))
	whole := "n=2097152 sha=" + hex.EncodeToString(sum[:])
	p, lg := newPlane(t)
	for _, tc := range []struct {
		name    string
		icap    string
		down    mblb.AdaptDown
		prefix  string
		fields  map[string]string
		chunked bool
		status  int
		want    string
	}{
		{"bypass: the head edited", decide.Addr(), mblb.AdaptReset, "", nil, false, 200, whole + " collected=bypass"},
		{"bypass, chunked", decide.Addr(), mblb.AdaptReset, "", nil, true, 200, whole + " collected=bypass"},
		{"bypass: answered by the rule", decide.Addr(), mblb.AdaptReset, "", map[string]string{"X-Respond": "1"}, false, 299, "by rule after bypass"},
		{"service down, ignored", "127.93.2.29:1344", mblb.AdaptIgnore, "", nil, false, 200, whole + " collected=bypass"},
		{"respond: the page", decide.Addr(), mblb.AdaptReset, "EICAR", nil, false, 403, "blocked by the ICAP service"},
		{"respond: answered by the rule", decide.Addr(), mblb.AdaptReset, "EICAR", map[string]string{"X-Respond": "1"}, false, 299, "by rule after respond"},
		{"modify after the whole body", wants.Addr(), mblb.AdaptReset, "", map[string]string{"X-Scan": "raw"}, false, 200, whole + " collected=headers-clean"},
		{"modify (echoed) after the whole body", wants.Addr(), mblb.AdaptReset, "", nil, true, 200, whole + " collected=headers-"},
		{"modify: answered by the rule", wants.Addr(), mblb.AdaptReset, "", map[string]string{"X-Respond": "1"}, false, 299, "by rule after modify"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := adaptConfig(t, "127.93.2.1:80", "127.93.2.11:80", adapt(tc.down, 1024), nil, tc.icap)
			cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, rule)
			mustApply(t, p, cfg)
			tr := &http.Transport{}
			defer tr.CloseIdleConnections()
			hc := &http.Client{Transport: tr, Timeout: 60 * time.Second}
			var body io.Reader = &patternReader{n: size}
			if tc.prefix != "" {
				body = io.MultiReader(strings.NewReader(tc.prefix), &patternReader{n: size - len(tc.prefix)})
			}
			req, _ := http.NewRequest("PUT", "http://127.93.2.1:80/up", body)
			for k, v := range tc.fields {
				req.Header.Set(k, v)
			}
			req.ContentLength = size
			if tc.chunked {
				req.ContentLength = -1
			}
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatalf("%v (log %s)", err, lg)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || !strings.Contains(string(b), tc.want) {
				t.Fatalf("%d %q, want %d %q (log %s)", resp.StatusCode, b, tc.status, tc.want, lg)
			}
		})
	}
}
