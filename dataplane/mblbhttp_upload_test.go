package dataplane

import (
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
)

// startSumMember answers every request with "n=<body bytes>
// sha=<sha256 of the body> collected=<X-Collected>": a real backend that
// says what it received of an upload.
func startSumMember(t *testing.T, addr string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := sha256.New()
		n, _ := io.Copy(h, r.Body)
		fmt.Fprintf(w, "n=%d sha=%s collected=%s", n, hex.EncodeToString(h.Sum(nil)), r.Header.Get("X-Collected"))
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

// uploadRule collects the start of /collect uploads: HTTP_REQUEST_DATA
// runs once with at most the 1000 bytes asked for, and tells the member
// how many it saw. Of /replace uploads it replaces bytes 10 to 29 of the
// collected start with "ABC": the rest of the body follows unchanged.
const uploadRule = `when HTTP_REQUEST {
    if { [HTTP::path] starts_with "/collect" || [HTTP::path] eq "/replace" } { HTTP::collect 1000 }
}
when HTTP_REQUEST_DATA {
    if { [HTTP::path] eq "/replace" } {
        HTTP::payload replace 10 20 "ABC"
    } else {
        log local0. "collected [string length [HTTP::payload]]"
        HTTP::header insert X-Collected [string length [HTTP::payload]]
    }
    HTTP::release
}`

// TestHTTPUploadCurl uploads 5 MiB with curl (Content-Length and
// chunked, where curl also sends Expect: 100-continue) through an HTTP
// virtual whose message limit is the default 1 MiB: per connection,
// with OneConnect, and through client-ssl; the member reports the byte
// count and checksum it received. A rule's HTTP::collect 1000 of such an
// upload sees 1000 bytes, once, and its HTTP::payload replace of part of
// them reaches the member in their place, the rest of the body after it
// (Content-Length adjusted, or chunked).
func TestHTTPUploadCurl(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl is not installed: the upload test needs it")
	}
	startSumMember(t, "127.0.235.41:80")
	body := bodyPattern(5 << 20)
	sum := sha256.Sum256(body)
	want := fmt.Sprintf("n=%d sha=%s", len(body), hex.EncodeToString(sum[:]))
	replaced := append(append(append([]byte(nil), body[:10]...), "ABC"...), body[30:]...)
	rsum := sha256.Sum256(replaced)
	wantReplaced := fmt.Sprintf("n=%d sha=%s collected=", len(replaced), hex.EncodeToString(rsum[:]))
	file := filepath.Join(t.TempDir(), "upload.bin")
	if err := os.WriteFile(file, body, 0o600); err != nil {
		t.Fatal(err)
	}
	cert, key, _ := testCert(t, "www.example")
	for _, tc := range []struct {
		name, vs string
		oc, tls  bool
	}{
		{"per-connection", "127.0.235.5:80", false, false},
		{"oneconnect", "127.0.235.6:80", true, false},
		{"client-ssl", "127.0.235.7:443", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := newPlane(t)
			cfg := l7Config(t, tc.vs, tc.oc, mblb.HTTPOptions{}, "", "127.0.235.41:80")
			var lg *ruleLog
			cfg.Virtuals["/Common/vs"].Rules, lg = compileRules(t, uploadRule)
			scheme := "http"
			if tc.tls {
				cfg.Virtuals["/Common/vs"].TLS = clientSSL(t, cert, key)
				scheme = "https"
			}
			mustApply(t, p, cfg)
			for _, up := range []struct {
				path    string
				chunked bool
				extra   string
			}{{"/up", false, ""}, {"/up", true, ""}, {"/collect", false, " collected=1000"},
				{"/replace", false, "replaced"}, {"/replace", true, "replaced"}} {
				args := []string{"-sS", "-k", "--max-time", "30", "--data-binary", "@" + file,
					"-H", "Content-Type: application/octet-stream", scheme + "://" + tc.vs + up.path}
				if up.chunked {
					args = append(args, "-H", "Transfer-Encoding: chunked")
				}
				out, err := exec.Command(curl, args...).CombinedOutput()
				w := want + up.extra
				switch up.extra {
				case "":
					w += " collected="
				case "replaced":
					w = wantReplaced
				}
				if err != nil || string(out) != w {
					t.Fatalf("curl %s (chunked %v): %q %v, want %q", up.path, up.chunked, out, err, w)
				}
			}
			if got := strings.Join(lg.Lines(), "\n"); strings.Count(got, "collected 1000") != 1 || strings.Count(got, "collected") != 1 {
				t.Fatalf("HTTP_REQUEST_DATA log %q, want one collected 1000", got)
			}
		})
	}
}

// TestHTTPUploadGoClient sends two 3 MiB uploads on one keep-alive TLS
// connection with Go's client and a request after them.
func TestHTTPUploadGoClient(t *testing.T) {
	startSumMember(t, "127.0.235.51:80")
	cert, key, roots := testCert(t, "www.example")
	p, _ := newPlane(t)
	cfg := l7Config(t, "127.0.235.8:443", false, mblb.HTTPOptions{}, "", "127.0.235.51:80")
	cfg.Virtuals["/Common/vs"].TLS = clientSSL(t, cert, key)
	mustApply(t, p, cfg)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: "www.example"}, MaxIdleConnsPerHost: 1}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 20 * time.Second}
	body := bodyPattern(3 << 20)
	sum := sha256.Sum256(body)
	for i, n := range []int{len(body), len(body), 10} {
		req, _ := http.NewRequest("PUT", "https://127.0.235.8:443/up", strings.NewReader(string(body[:n])))
		req.Host = "www.example"
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := fmt.Sprintf("n=%d ", n)
		if n == len(body) {
			want += "sha=" + hex.EncodeToString(sum[:])
		}
		if !strings.HasPrefix(string(b), want) {
			t.Fatalf("request %d: %q, want %q", i, b, want)
		}
	}
	if c, _ := countFlows(p); c != 1 {
		t.Fatalf("client flows = %d, want one keep-alive connection", c)
	}
}

// TestHTTPLargeResponseCollect: HTTP::collect 2000 in HTTP_RESPONSE of a
// 3 MB download (over the 1 MiB message limit) runs HTTP_RESPONSE_DATA
// once with 2000 bytes of it, and the whole body still reaches the
// client, with and without a Content-Length.
func TestHTTPLargeResponseCollect(t *testing.T) {
	startBodyMember(t, "127.0.235.61:80")
	const size = 3 << 20
	want := bodyPattern(size)
	p, _ := newPlane(t)
	cfg := l7Config(t, "127.0.235.9:80", true, mblb.HTTPOptions{}, "", "127.0.235.61:80")
	var lg *ruleLog
	cfg.Virtuals["/Common/vs"].Rules, lg = compileRules(t, `when HTTP_RESPONSE { HTTP::collect 2000 }
when HTTP_RESPONSE_DATA {
    log local0. "response data [string length [HTTP::payload]] [binary encode hex [string range [HTTP::payload] 0 3]]"
    HTTP::header insert X-Collected [string length [HTTP::payload]]
}`)
	mustApply(t, p, cfg)
	c := dialHTTPVS(t, "127.0.235.9:80")
	for i, path := range []string{fmt.Sprint("/", size), fmt.Sprint("/chunked/", size)} {
		c.c.SetDeadline(time.Now().Add(30 * time.Second))
		io.WriteString(c.c, httpReq("h", path))
		r, err := http.ReadResponse(c.br, nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		body, err := io.ReadAll(r.Body)
		if err != nil || string(body) != string(want) {
			t.Fatalf("%s: %d bytes (%v), want the member's %d", path, len(body), err, size)
		}
		if r.Header.Get("X-Collected") != "2000" {
			t.Fatalf("%s: X-Collected %q", path, r.Header.Get("X-Collected"))
		}
		lines := lg.Lines()
		if len(lines) != i+1 || !strings.Contains(lines[i], "response data 2000 "+hex.EncodeToString(want[:4])) {
			t.Fatalf("%s: HTTP_RESPONSE_DATA log %q", path, lines)
		}
	}
}

// TestHTTPUploadSendEvents: an upload's head passes LB_SELECTED and
// HTTP_REQUEST_SEND like any request's (their header edits reach the
// member, even when the connection is still being opened), and its body
// follows whole. Without OneConnect only the connection's first request
// is balanced, so only it runs LB_SELECTED.
func TestHTTPUploadSendEvents(t *testing.T) {
	startSumMember(t, "127.0.235.71:80")
	for _, oc := range []bool{false, true} {
		p, _ := newPlane(t)
		cfg := l7Config(t, "127.0.235.10:80", oc, mblb.HTTPOptions{}, `when LB_SELECTED { HTTP::header insert X-Collected lb }
when HTTP_REQUEST_SEND { HTTP::header replace X-Collected "[HTTP::header value X-Collected]-send" }`, "127.0.235.71:80")
		mustApply(t, p, cfg)
		body := bodyPattern(3 << 20)
		sum := sha256.Sum256(body)
		c := dialHTTPVS(t, "127.0.235.10:80")
		for i := 0; i < 2; i++ {
			want := fmt.Sprintf("n=%d sha=%s collected=lb-send", len(body), hex.EncodeToString(sum[:]))
			if !oc && i > 0 {
				want = strings.Replace(want, "=lb-send", "=-send", 1)
			}
			c.c.SetDeadline(time.Now().Add(20 * time.Second))
			go fmt.Fprintf(c.c, "PUT /up HTTP/1.1\r\nHost: h\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
			r, err := http.ReadResponse(c.br, nil)
			if err != nil {
				t.Fatalf("oneconnect=%v upload %d: %v", oc, i, err)
			}
			got, _ := io.ReadAll(r.Body)
			if string(got) != want {
				t.Fatalf("oneconnect=%v upload %d: %q, want %q", oc, i, got, want)
			}
		}
		p.Close()
	}
}

// TestHTTPUploadCollectMore: HTTP::collect in HTTP_REQUEST_DATA of an
// upload collects more of it and runs the event again; the replacement
// of the whole collected start then reaches the member before the rest.
func TestHTTPUploadCollectMore(t *testing.T) {
	startSumMember(t, "127.43.3.11:80")
	p, _ := newPlane(t)
	cfg := l7Config(t, "127.43.3.1:80", true, mblb.HTTPOptions{}, "", "127.43.3.11:80")
	var lg *ruleLog
	cfg.Virtuals["/Common/vs"].Rules, lg = compileRules(t, `when HTTP_REQUEST { HTTP::collect 100 }
when HTTP_REQUEST_DATA {
    log local0. "data [HTTP::payload length]"
    if { [HTTP::payload length] < 5000 } {
        HTTP::collect 5000
    } else {
        HTTP::payload replace 0 [HTTP::payload length] "new start"
        HTTP::release
    }
}`)
	mustApply(t, p, cfg)
	body := bodyPattern(3 << 20)
	c := dialHTTPVS(t, "127.43.3.1:80")
	c.c.SetDeadline(time.Now().Add(30 * time.Second))
	go fmt.Fprintf(c.c, "POST /up HTTP/1.1\r\nHost: h\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	r, err := http.ReadResponse(c.br, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(r.Body)
	sent := append([]byte("new start"), body[5000:]...)
	sum := sha256.Sum256(sent)
	if want := fmt.Sprintf("n=%d sha=%s collected=", len(sent), hex.EncodeToString(sum[:])); string(got) != want {
		t.Fatalf("member saw %q, want %q", got, want)
	}
	if l := strings.Join(lg.Lines(), "|"); !strings.Contains(l, ": data 100|") || !strings.HasSuffix(l, ": data 5000") || strings.Count(l, "<HTTP_REQUEST_DATA>") != 2 {
		t.Fatalf("HTTP_REQUEST_DATA log %q, want data 100 then data 5000", l)
	}
}

// TestHTTPLargeResponseCollectMore: HTTP::collect in HTTP_RESPONSE_DATA
// of a large download collects more and runs the event again;
// HTTP_RESPONSE_RELEASE runs once, after the last; the replacement of
// the collected start reaches the client before the rest of the body.
func TestHTTPLargeResponseCollectMore(t *testing.T) {
	startBodyMember(t, "127.43.4.11:80")
	const size = 3 << 20
	want := bodyPattern(size)
	p, _ := newPlane(t)
	cfg := l7Config(t, "127.43.4.1:80", false, mblb.HTTPOptions{}, "", "127.43.4.11:80")
	var lg *ruleLog
	cfg.Virtuals["/Common/vs"].Rules, lg = compileRules(t, `when HTTP_RESPONSE { HTTP::collect 100 }
when HTTP_RESPONSE_DATA {
    log local0. "data [HTTP::payload length]"
    if { [HTTP::payload length] < 5000 } {
        HTTP::collect 5000
    } else {
        HTTP::payload replace 0 [HTTP::payload length] "new start"
    }
}
when HTTP_RESPONSE_RELEASE { log local0. "release" }`)
	mustApply(t, p, cfg)
	c := dialHTTPVS(t, "127.43.4.1:80")
	for i, path := range []string{fmt.Sprint("/", size), fmt.Sprint("/chunked/", size)} {
		c.c.SetDeadline(time.Now().Add(30 * time.Second))
		io.WriteString(c.c, httpReq("h", path))
		r, err := http.ReadResponse(c.br, nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		body, err := io.ReadAll(r.Body)
		if err != nil || string(body) != "new start"+string(want[5000:]) {
			t.Fatalf("%s: %d bytes (%v), want the replacement and %d", path, len(body), err, size-5000)
		}
		l := strings.Join(lg.Lines(), "|")
		if strings.Count(l, ": data 100|") != i+1 || strings.Count(l, ": data 5000|") != i+1 || strings.Count(l, ": release") != i+1 {
			t.Fatalf("%s: log %q", path, l)
		}
	}
}
