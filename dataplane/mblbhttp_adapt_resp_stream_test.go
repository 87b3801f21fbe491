package dataplane

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/icap/icaptest"
	"github.com/openltm/openltm/dataplane/mblb"
)

// startPatternMember serves GET /n/N: N bytes of bodyPattern's pattern,
// with a Content-Length unless ?chunked, "EICAR" at byte ?at= when
// given, and X-Scan: raw with ?scan.
func startPatternMember(t *testing.T, addr string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/n/"))
		q := r.URL.Query()
		var body io.Reader = &patternReader{n: n}
		if at, err := strconv.Atoi(q.Get("at")); err == nil {
			body = io.MultiReader(&patternReader{n: at}, strings.NewReader("EICAR"), &patternReader{n: n - at - 5})
		}
		if q.Has("scan") {
			w.Header().Set("X-Scan", "raw")
		}
		if !q.Has("chunked") {
			w.Header().Set("Content-Length", strconv.Itoa(n))
		}
		io.Copy(w, body)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

// TestResponseAdaptStreamed: member responses over the 1 MiB bound
// through response-adapt, by Content-Length and chunked. An ICAP server
// that decides on the preview sees the preview only: its 204 lets a
// 16 MiB response stream on to the client intact (its checksum) without
// the heap growing by anything near its size; a page or a rewritten
// response sent on the preview replaces it (the member's body dropped).
// A server that wants the rest gets it as it arrives, and its answer
// after the whole (the response echoed, or its page) is the response.
func TestResponseAdaptStreamed(t *testing.T) {
	startPatternMember(t, "127.93.4.11:80")
	decide := icapListen(t, "127.93.4.21:1344", icaptest.Config{Block: "EICAR", Header: "X-Scan", Value: "clean", DecidePreview: true})
	wants := icapListen(t, "127.93.4.22:1344", icaptest.Config{Block: "EICAR"})
	const big, mid = 16 << 20, 4 << 20
	sumOf := func(n int) string { s := sha256.Sum256(bodyPattern(n)); return hex.EncodeToString(s[:]) }
	bigSum, midSum, kSum := sumOf(big), sumOf(mid), sumOf(1024)
	p, lg := newPlane(t)
	for _, tc := range []struct {
		name      string
		icap      *icaptest.Server
		path      string
		status    int
		sum       string // of the body the client gets ("" no check)
		has       string // the client's body contains it
		scan      string // X-Scan the client gets
		counted   string
		continues int64
		heap      bool // the heap must not grow by the body's size
	}{
		{"Content-Length, 204 after the preview", decide, "/n/16777216", 200, bigSum, "", "", "unmodified", 0, true},
		{"chunked, 204 after the preview", decide, "/n/16777216?chunked", 200, bigSum, "", "", "unmodified", 0, true},
		{"blocked in the preview", decide, "/n/16777216?at=10", 403, "", "blocked by the ICAP service", "", "modified", 0, false},
		{"rewritten on the preview", decide, "/n/16777216?scan", 200, kSum, "", "clean", "modified", 0, false},
		{"the rest wanted, echoed", wants, "/n/4194304", 200, midSum, "", "", "modified", 1, false},
		{"the rest wanted, chunked", wants, "/n/4194304?chunked", 200, midSum, "", "", "modified", 1, false},
		{"the rest wanted, blocked", wants, "/n/4194304?at=3145728", 403, "", "blocked by the ICAP service", "", "modified", 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mustApply(t, p, adaptConfig(t, "127.93.4.1:80", "127.93.4.11:80", nil, adapt(mblb.AdaptReset, 1024), tc.icap.Addr()))
			tr := &http.Transport{DisableCompression: true}
			defer tr.CloseIdleConnections()
			hc := &http.Client{Transport: tr, Timeout: 60 * time.Second}
			was := p.ProfileStats(ProfileRespAdapt, "/Common/av", []string{"/Common/vs"}).Adapt
			stCont := tc.icap.Stats.Continues.Load()
			peak := watchHeap()
			resp, err := hc.Get("http://127.93.4.1:80" + tc.path)
			if err != nil {
				peak()
				t.Fatalf("%v (log %s)", err, lg)
			}
			h := sha256.New()
			var head []byte
			n, err := io.Copy(io.MultiWriter(h, &prefixWriter{b: &head, max: 4096}), resp.Body)
			resp.Body.Close()
			grew := peak()
			if err != nil {
				t.Fatalf("after %d bytes: %v (log %s)", n, err, lg)
			}
			if resp.StatusCode != tc.status {
				t.Fatalf("%d %q, want %d (log %s)", resp.StatusCode, head, tc.status, lg)
			}
			if got := hex.EncodeToString(h.Sum(nil)); tc.sum != "" && got != tc.sum {
				t.Fatalf("%d bytes, sha %s, want %s", n, got, tc.sum)
			}
			if !strings.Contains(string(head), tc.has) || resp.Header.Get("X-Scan") != tc.scan {
				t.Fatalf("%q X-Scan=%q, want %q %q", head, resp.Header.Get("X-Scan"), tc.has, tc.scan)
			}
			if got := tc.icap.Stats.Continues.Load() - stCont; got != tc.continues {
				t.Errorf("%d 100 Continue, want %d", got, tc.continues)
			}
			now := p.ProfileStats(ProfileRespAdapt, "/Common/av", []string{"/Common/vs"}).Adapt
			if got := adaptCounted(was, now); got != tc.counted {
				t.Errorf("counted as %q, want %q", got, tc.counted)
			}
			if tc.heap {
				// (Member, ltmd, ICAP server and client share this
				// heap: the response was never held whole.)
				if grew > big/2 {
					t.Errorf("the heap grew by %d bytes while %d streamed", grew, big)
				}
				t.Logf("heap grew by at most %d bytes for a %d-byte response", grew, big)
			}
		})
	}
}

// prefixWriter keeps the first max bytes written to it.
type prefixWriter struct {
	b   *[]byte
	max int
}

func (w *prefixWriter) Write(p []byte) (int, error) {
	if k := w.max - len(*w.b); k > 0 {
		*w.b = append(*w.b, p[:min(k, len(p))]...)
	}
	return len(p), nil
}
