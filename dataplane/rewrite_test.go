package dataplane

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/h2gw"
	"github.com/openltm/openltm/dataplane/htmlfilter"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/rewrite"
)

// startRewriteMember is an application that knows only its own URI
// space (http://addr/internal/): it redirects, sets a
// cookie for its path and host, serves a page with links to itself (in
// parts, so that it goes chunked and may arrive in pieces), a script,
// and echoes what reached it.
func startRewriteMember(t *testing.T, addr string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	self := "http://" + addr + "/internal/"
	host, _, _ := net.SplitHostPort(addr)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/internal/login":
			w.Header().Set("Set-Cookie", "sid=42; Path=/internal/; Domain="+host+"; HttpOnly")
			w.Header().Set("Location", self+"home")
			w.WriteHeader(http.StatusFound)
		case "/internal/page":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, `<html><head><link href="/internal/s.css" rel="stylesheet"></head><body>`)
			w.(http.Flusher).Flush()
			for i := 0; i < 50; i++ {
				fmt.Fprintf(w, `<a href="%sp%d">p%d</a> <img src="/internal/i%d.png">`, self, i, i, i)
			}
			io.WriteString(w, `<a href="http://elsewhere.example/x">out</a></body></html>`)
		case "/internal/app.js":
			w.Header().Set("Content-Type", "application/javascript")
			io.WriteString(w, `fetch("`+self+`api/v1"); var p = '/internal/img/';`)
		case "/internal/gz":
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("Content-Encoding", "gzip")
			io.WriteString(w, "not really gzip "+self)
		default:
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprintf(w, "host=%s uri=%s ae=%q xff=%s proto=%s referer=%s", r.Host, r.RequestURI,
				r.Header.Get("Accept-Encoding"), r.Header.Get("X-Forwarded-For"), r.Header.Get("X-Forwarded-Proto"), r.Header.Get("Referer"))
		}
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

// TestHTTPRewriteURITranslation: a virtual with a uri-translation
// rewrite profile shows clients http://www.example.com/app/ for a member
// that lives at http://127.101.0.11:8080/internal/: requests are mapped
// (path, Host, Referer; X-Forwarded-For and -Proto added; no
// Accept-Encoding, so that bodies come readable), and responses mapped
// back (Location, Set-Cookie, links in HTML and JavaScript, with the
// body's new length), over keep-alive connections; an encoded body
// passes as it is.
func TestHTTPRewriteURITranslation(t *testing.T) {
	const member = "127.101.0.11:8080"
	startRewriteMember(t, member)
	must := func(s string) rewrite.URI {
		u, err := rewrite.ParseURI(s)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	rw := &rewrite.Profile{Name: "/Common/rw",
		Rules: []rewrite.Rule{{Name: "app", Client: must("http://www.example.com/app/"), Server: must("http://" + member + "/internal/"), Request: true, Response: true}},
		XFF:   true, XFProto: true, RequestHeaders: true, Content: true, ResponseHeaders: true}
	vs := "127.101.0.1:80"
	cfg := mblbConfig(vs, &MBLB{Request: mblb.Framing{Mode: mblb.HTTP, HTTP: mblb.HTTPOptions{Rewrite: rw}}}, member)
	p, _ := newPlane(t)
	mustApply(t, p, cfg)

	cl := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string, hdr ...string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", "http://"+vs+path, nil)
		req.Host = "www.example.com"
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := cl.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("GET %s: body: %v", path, err)
		}
		return resp, string(b)
	}
	for round := 0; round < 3; round++ {
		_, body := get("/app/echo?q=1", "Referer", "http://www.example.com/app/page")
		if want := `host=` + member + ` uri=/internal/echo?q=1 ae="" xff=127.0.0.1 proto=http referer=http://` + member + `/internal/page`; body != want {
			// (the client dials from the default loopback source)
			if !strings.HasPrefix(body, `host=`+member+` uri=/internal/echo?q=1 ae="" xff=127.`) || !strings.HasSuffix(body, `proto=http referer=http://`+member+`/internal/page`) {
				t.Fatalf("echo: %q, want %q", body, want)
			}
		}
		resp, _ := get("/app/login")
		if got := resp.Header.Get("Location"); resp.StatusCode != 302 || got != "http://www.example.com/app/home" {
			t.Fatalf("login: %d Location %q", resp.StatusCode, got)
		}
		if got := resp.Header.Get("Set-Cookie"); got != "sid=42; Path=/app/; Domain=www.example.com; HttpOnly" {
			t.Fatalf("login: Set-Cookie %q", got)
		}
		resp, body = get("/app/page")
		if strings.Contains(body, member) || strings.Contains(body, "/internal/") {
			t.Fatalf("page still names the member: %q", body)
		}
		for _, want := range []string{`<link href="/app/s.css" rel="stylesheet">`, `<a href="http://www.example.com/app/p49">p49</a>`, `<img src="/app/i0.png">`, `<a href="http://elsewhere.example/x">out</a></body></html>`} {
			if !strings.Contains(body, want) {
				t.Fatalf("page lacks %s: %q", want, body)
			}
		}
		if resp.ContentLength != int64(len(body)) && resp.ContentLength != -1 {
			t.Fatalf("page: Content-Length %d for %d bytes", resp.ContentLength, len(body))
		}
		_, body = get("/app/app.js")
		if want := `fetch("http://www.example.com/app/api/v1"); var p = '/app/img/';`; body != want {
			t.Fatalf("script: %q, want %q", body, want)
		}
		_, body = get("/app/gz", "Accept-Encoding", "gzip") // (read as it comes)
		if body != "not really gzip http://"+member+"/internal/" {
			t.Fatalf("encoded body changed: %q", body)
		}
		// A host no rule covers goes as it came.
		req, _ := http.NewRequest("GET", "http://"+vs+"/internal/echo", nil)
		req.Host = "other.example"
		r2, err := cl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r2.Body)
		r2.Body.Close()
		if !strings.HasPrefix(string(b), "host=other.example uri=/internal/echo ") {
			t.Fatalf("unmatched host: %q", b)
		}
	}
}

// TestHTTPRewriteRules: REWRITE::disable in HTTP_REQUEST leaves a
// request and its response as they are, REWRITE::enable maps the next
// ones again, on one keep-alive connection.
func TestHTTPRewriteRules(t *testing.T) {
	const member = "127.101.0.12:8080"
	startRewriteMember(t, member)
	c, _ := rewrite.ParseURI("http://www.example.com/app/")
	s, _ := rewrite.ParseURI("http://" + member + "/internal/")
	rw := &rewrite.Profile{Name: "/Common/rw", Rules: []rewrite.Rule{{Name: "app", Client: c, Server: s, Request: true, Response: true}},
		Content: true, ResponseHeaders: true}
	vs := "127.101.0.2:80"
	cfg := mblbConfig(vs, &MBLB{Request: mblb.Framing{Mode: mblb.HTTP, HTTP: mblb.HTTPOptions{Rewrite: rw}}}, member)
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `
when HTTP_REQUEST {
    if { [HTTP::header value X-Raw] ne "" } {
        REWRITE::disable
    } else {
        REWRITE::enable
    }
}`)
	p, _ := newPlane(t)
	mustApply(t, p, cfg)
	cl := dialHTTPVS(t, vs)
	for i := 0; i < 3; i++ {
		resp, body, err := cl.do("GET /internal/echo HTTP/1.1\r\nHost: www.example.com\r\nX-Raw: 1\r\n\r\n")
		if err != nil || !strings.HasPrefix(body, "host=www.example.com uri=/internal/echo ") {
			t.Fatalf("disabled: %v %q %v", resp, body, err)
		}
		resp, _, err = cl.do("GET /internal/login HTTP/1.1\r\nHost: www.example.com\r\nX-Raw: 1\r\n\r\n")
		if err != nil || resp.Header.Get("Location") != "http://"+member+"/internal/home" {
			t.Fatalf("disabled: %v %v", resp, err)
		}
		resp, _, err = cl.do("GET /app/login HTTP/1.1\r\nHost: www.example.com\r\n\r\n")
		if err != nil || resp.Header.Get("Location") != "http://www.example.com/app/home" {
			t.Fatalf("enabled again: %v %v", resp, err)
		}
	}
}

// TestHTTPRewriteEvents: REWRITE_REQUEST sees the client's request and
// REWRITE_REQUEST_DONE the mapped one (an edit there reaches the
// member); REWRITE::post_process 1 there makes REWRITE_RESPONSE_DONE
// run over the rewritten body, where REWRITE::payload reads it, tells its
// length and replaces a range (the client gets the new length); without
// post_process the event does not run; REWRITE::post_process reads 0
// for each new request.
func TestHTTPRewriteEvents(t *testing.T) {
	const member = "127.108.0.11:8080"
	startRewriteMember(t, member)
	c, _ := rewrite.ParseURI("http://www.example.com/app/")
	s, _ := rewrite.ParseURI("http://" + member + "/internal/")
	rw := &rewrite.Profile{Name: "/Common/rw", Rules: []rewrite.Rule{{Name: "app", Client: c, Server: s, Request: true, Response: true}},
		Content: true, ResponseHeaders: true}
	vs := "127.108.0.1:80"
	cfg := mblbConfig(vs, &MBLB{Request: mblb.Framing{Mode: mblb.HTTP, HTTP: mblb.HTTPOptions{Rewrite: rw}}}, member)
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `
when REWRITE_REQUEST {
    set before [HTTP::uri]
}
when REWRITE_REQUEST_DONE {
    HTTP::header replace Referer "before=$before after=[HTTP::uri] pp=[REWRITE::post_process]"
    if { [HTTP::path] eq "/internal/page" } {
        REWRITE::post_process 1
    }
}
when REWRITE_RESPONSE_DONE {
    set data [REWRITE::payload]
    set at [string first {<a href="http://www.example.com/app/p0">} $data]
    HTTP::header insert X-Len [REWRITE::payload length]
    HTTP::header insert X-Head [REWRITE::payload 6]
    HTTP::header insert X-Mid [REWRITE::payload $at 9]
    REWRITE::payload replace 0 6 {<html lang="en">}
}`)
	p, _ := newPlane(t)
	mustApply(t, p, cfg)
	cl := dialHTTPVS(t, vs)
	for i := 0; i < 3; i++ {
		_, body, err := cl.do("GET /app/echo HTTP/1.1\r\nHost: www.example.com\r\n\r\n")
		if want := "referer=before=/app/echo after=/internal/echo pp=0"; err != nil || !strings.HasSuffix(body, want) {
			t.Fatalf("echo: %q %v, want ...%s", body, err, want)
		}
		resp, body, err := cl.do("GET /app/page HTTP/1.1\r\nHost: www.example.com\r\n\r\n")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(body, `<html lang="en"><head><link href="/app/s.css"`) || strings.Contains(body, "/internal/") {
			t.Fatalf("page: %q", body)
		}
		if got := resp.Header.Get("X-Len"); got != fmt.Sprint(len(body)-len(`<html lang="en">`)+len(`<html>`)) {
			t.Fatalf("X-Len %s for a body of %d", got, len(body))
		}
		if resp.Header.Get("X-Head") != "<html>" || resp.Header.Get("X-Mid") != "<a href=\"" {
			t.Fatalf("payload ranges: %q %q", resp.Header.Get("X-Head"), resp.Header.Get("X-Mid"))
		}
		if resp.ContentLength != int64(len(body)) && resp.ContentLength != -1 {
			t.Fatalf("Content-Length %d for %d bytes", resp.ContentLength, len(body))
		}
		// No post_process for the script: its body is as the profile
		// left it, no X-Len.
		resp, body, err = cl.do("GET /app/app.js HTTP/1.1\r\nHost: www.example.com\r\n\r\n")
		if err != nil || resp.Header.Get("X-Len") != "" || body != `fetch("http://www.example.com/app/api/v1"); var p = '/app/img/';` {
			t.Fatalf("script: %v %q %v", resp.Header, body, err)
		}
	}
}

// TestHTTPRewriteWithHTML: on a virtual with both a rewrite and an html
// profile, the rewrite profile maps the body first and the html profile
// works on what it left (as on BIG-IP, where the rewrite filter comes
// before html): HTML_TAG_MATCHED sees the client's URIs, the html rules'
// edits are not undone, and the client gets a length that fits.
func TestHTTPRewriteWithHTML(t *testing.T) {
	const member = "127.108.0.21:8080"
	startRewriteMember(t, member)
	c, _ := rewrite.ParseURI("http://www.example.com/app/")
	s, _ := rewrite.ParseURI("http://" + member + "/internal/")
	rw := &rewrite.Profile{Name: "/Common/rw", Rules: []rewrite.Rule{{Name: "app", Client: c, Server: s, Request: true, Response: true}},
		Content: true, ResponseHeaders: true}
	rs, err := htmlfilter.Compile([]htmlfilter.Rule{
		{Name: "/Common/inject", Kind: htmlfilter.TagPrependHTML, TagName: "/head", Text: `<script src="/app/x.js"></script>`},
		{Name: "/Common/ev", Kind: htmlfilter.TagRaiseEvent, TagName: "a", AttrName: "href"},
	})
	if err != nil {
		t.Fatal(err)
	}
	vs := "127.108.0.2:80"
	cfg := mblbConfig(vs, &MBLB{Request: mblb.Framing{Mode: mblb.HTTP, HTTP: mblb.HTTPOptions{Rewrite: rw,
		HTML: &mblb.HTMLOptions{Profile: "/Common/html", Rules: rs, Types: []string{"text/html"}}}}}, member)
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `
when HTML_TAG_MATCHED {
    if { [HTML::tag attribute value href] eq "http://www.example.com/app/p3" } {
        HTML::tag attribute insert rel nofollow
    }
}`)
	p, _ := newPlane(t)
	mustApply(t, p, cfg)
	cl := dialHTTPVS(t, vs)
	for i := 0; i < 3; i++ {
		resp, body, err := cl.do("GET /app/page HTTP/1.1\r\nHost: www.example.com\r\n\r\n")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(body, "/internal/") || strings.Contains(body, member) {
			t.Fatalf("page still names the member: %q", body)
		}
		for _, want := range []string{
			`<link href="/app/s.css" rel="stylesheet"><script src="/app/x.js"></script></head>`,
			`<a href="http://www.example.com/app/p3" rel="nofollow">p3</a>`,
			`<a href="http://www.example.com/app/p4">p4</a>`,
		} {
			if !strings.Contains(body, want) {
				t.Fatalf("page lacks %s: %q", want, body)
			}
		}
		if resp.ContentLength != int64(len(body)) && resp.ContentLength != -1 {
			t.Fatalf("Content-Length %d for %d bytes", resp.ContentLength, len(body))
		}
	}
}

// TestHTTPRewriteHTTP2: an HTTP/2 client of a virtual with the http2
// profile and a rewrite profile gets each stream mapped as an HTTP/1.1
// client would (request path and Host from :authority, Location,
// Set-Cookie, the page's links with a length that fits), many streams at
// once on one connection, and the REWRITE_ events run per stream.
func TestHTTPRewriteHTTP2(t *testing.T) {
	const member = "127.108.0.31:8080"
	startRewriteMember(t, member)
	c, _ := rewrite.ParseURI("http://www.example.com/app/")
	s, _ := rewrite.ParseURI("http://" + member + "/internal/")
	rw := &rewrite.Profile{Name: "/Common/rw", Rules: []rewrite.Rule{{Name: "app", Client: c, Server: s, Request: true, Response: true}},
		Content: true, ResponseHeaders: true}
	vs := "127.108.0.3:80"
	cfg := mblbConfig(vs, &MBLB{Request: mblb.Framing{Mode: mblb.HTTP, HTTP: mblb.HTTPOptions{Rewrite: rw}}}, member)
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `
when REWRITE_REQUEST_DONE {
    HTTP::header replace Referer "after=[HTTP::uri]"
    REWRITE::post_process 1
}
when REWRITE_RESPONSE_DONE {
    HTTP::header insert X-Len [REWRITE::payload length]
}`)
	cfg.Virtuals["/Common/vs"].HTTP2 = &HTTP2{Always: true, Config: h2gw.Config{MaxConcurrentStreams: 8}}
	p, _ := newPlane(t)
	mustApply(t, p, cfg)
	var protos http.Protocols
	protos.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: &protos}
	t.Cleanup(tr.CloseIdleConnections)
	cl := &http.Client{Transport: tr, Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string) (*http.Response, string, error) {
		req, _ := http.NewRequest("GET", "http://"+vs+path, nil)
		req.Host = "www.example.com"
		resp, err := cl.Do(req)
		if err != nil {
			return nil, "", err
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.Proto != "HTTP/2.0" {
			return nil, "", fmt.Errorf("%s answered in %s", path, resp.Proto)
		}
		return resp, string(b), err
	}
	var wg sync.WaitGroup
	errs := make(chan error, 48)
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, body, err := get(fmt.Sprintf("/app/echo?n=%d", i))
			if want := fmt.Sprintf("host=%s uri=/internal/echo?n=%d ", member, i); err != nil || !strings.HasPrefix(body, want) ||
				!strings.HasSuffix(body, fmt.Sprintf("referer=after=/internal/echo?n=%d", i)) {
				errs <- fmt.Errorf("echo %d: %q %v", i, body, err)
				return
			}
			if resp.Header.Get("X-Len") != fmt.Sprint(len(body)) {
				errs <- fmt.Errorf("echo %d: X-Len %q for %d bytes", i, resp.Header.Get("X-Len"), len(body))
			}
			resp, _, err = get("/app/login")
			if err != nil || resp.StatusCode != 302 || resp.Header.Get("Location") != "http://www.example.com/app/home" ||
				resp.Header.Get("Set-Cookie") != "sid=42; Path=/app/; Domain=www.example.com; HttpOnly" {
				errs <- fmt.Errorf("login %d: %v %v", i, resp, err)
				return
			}
			resp, body, err = get("/app/page")
			if err != nil || strings.Contains(body, "/internal/") || !strings.Contains(body, `<a href="http://www.example.com/app/p49">p49</a>`) ||
				resp.Header.Get("X-Len") != fmt.Sprint(len(body)) {
				errs <- fmt.Errorf("page %d: %q %v", i, body, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
