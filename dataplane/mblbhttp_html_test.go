package dataplane

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/htmlfilter"
	"github.com/openltm/openltm/dataplane/mblb"
)

// htmlPage is the member's page; htmlParts are the pieces it is written
// in, cut inside a tag, an attribute value and a comment, so that each
// spans two reads of the engine.
const htmlPage = `<html><head><title>t</title></head><body><!-- secret --><a href="/one" id="x">1</a><img src="a.png"><a href='/two'>2</a></body></html>`

var htmlParts = []string{`<html><he`, `ad><title>t</title></head><body><!-- sec`, `ret --><a hr`, `ef="/one" id="x">1</a><img s`, `rc="a.png"><a href='/tw`, `o'>2</a></body></html>`}

// startHTMLMember answers GET path with htmlPage: /split with a
// Content-Length, /chunked chunked, each part written on its own;
// /whole in one write; /plain as text/plain; /gzip with a
// Content-Encoding. X-AE tells what Accept-Encoding the request came
// with.
func startHTMLMember(t *testing.T, addr string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func(c net.Conn) {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, req.Body)
					ae := req.Header.Get("Accept-Encoding")
					if ae == "" {
						ae = "none"
					}
					ctype, extra := "text/html; charset=utf-8", ""
					switch req.URL.Path {
					case "/plain":
						ctype = "text/plain"
					case "/gzip":
						extra = "Content-Encoding: gzip\r\n"
					}
					head := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: %s\r\nX-AE: %s\r\n%s", ctype, ae, extra)
					switch req.URL.Path {
					case "/split", "/plain", "/gzip":
						c.Write([]byte(head + fmt.Sprintf("Content-Length: %d\r\n\r\n", len(htmlPage))))
						for _, p := range htmlParts {
							time.Sleep(5 * time.Millisecond)
							c.Write([]byte(p))
						}
					case "/chunked":
						c.Write([]byte(head + "Transfer-Encoding: chunked\r\n\r\n"))
						for _, p := range htmlParts {
							time.Sleep(5 * time.Millisecond)
							fmt.Fprintf(c, "%x\r\n%s\r\n", len(p), p)
						}
						c.Write([]byte("0\r\n\r\n"))
					default:
						c.Write([]byte(head + fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(htmlPage), htmlPage)))
					}
				}
			}(c)
		}
	}()
}

const htmlEventRule = `
when HTML_TAG_MATCHED {
    if { [HTML::tag attribute value href] eq "/two" } {
        HTML::tag attribute replace href "/2"
        HTML::tag attribute insert rel nofollow
    }
}
`

// TestHTTPHTMLProfile: with an html profile, the member's HTML answer
// reaches the client as the html rules and HTML_TAG_MATCHED left it,
// whether it came whole, streamed with a Content-Length or chunked, its
// tags and comment split between reads; the client gets a length that
// fits (a new Content-Length, or chunked). Requests reach the member
// without Accept-Encoding; other content types and encoded answers pass
// untouched.
func TestHTTPHTMLProfile(t *testing.T) {
	const vs, member = "127.102.0.10:80", "127.102.0.11:80"
	startHTMLMember(t, member)
	rs, err := htmlfilter.Compile([]htmlfilter.Rule{
		{Name: "/Common/inject", Kind: htmlfilter.TagPrependHTML, TagName: "/head", Text: `<script src="/x.js"></script>`},
		{Name: "/Common/nocomment", Kind: htmlfilter.CommentRemove},
		{Name: "/Common/noid", Kind: htmlfilter.TagRemoveAttribute, TagName: "a", RemoveAttr: "id"},
		{Name: "/Common/noimg", Kind: htmlfilter.TagRemove, TagName: "img"},
		{Name: "/Common/ev", Kind: htmlfilter.TagRaiseEvent, TagName: "a", AttrName: "href"},
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg := mblbConfig(vs, &MBLB{Request: mblb.Framing{Mode: mblb.HTTP, HTTP: mblb.HTTPOptions{
		HTML: &mblb.HTMLOptions{Profile: "/Common/html", Rules: rs, Types: []string{"text/html", "text/xhtml"}}}}}, member)
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, htmlEventRule)
	p, _ := newPlane(t)
	mustApply(t, p, cfg)

	edited := `<html><head><title>t</title><script src="/x.js"></script></head><body><a href="/one">1</a><a href="/2" rel="nofollow">2</a></body></html>`
	cases := []struct {
		path, want string
		chunked    bool
	}{
		{"/whole", edited, false},
		{"/split", edited, true},
		{"/chunked", edited, true},
		{"/plain", htmlPage, false},
		{"/gzip", htmlPage, false},
	}
	cl := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true}}
	defer cl.CloseIdleConnections()
	for round := 0; round < 2; round++ { // the second round reuses the connection
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/%d", c.path, round), func(t *testing.T) {
				req, _ := http.NewRequest("GET", "http://"+vs+c.path, nil)
				req.Header.Set("Accept-Encoding", "gzip")
				resp, err := cl.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil {
					t.Fatal(err)
				}
				if string(b) != c.want {
					t.Errorf("body\n got %s\nwant %s", b, c.want)
				}
				if ae := resp.Header.Get("X-AE"); ae != "none" {
					t.Errorf("the member got Accept-Encoding %q", ae)
				}
				if chunked := len(resp.TransferEncoding) > 0; chunked != c.chunked || !chunked && resp.ContentLength != int64(len(c.want)) {
					t.Errorf("framing: chunked %v length %d, want chunked %v", chunked, resp.ContentLength, c.chunked)
				}
			})
		}
	}
}

// TestHTTPHTMLProfileHTTP10: an HTTP/1.0 client, which cannot be sent
// chunks, gets a streamed answer the rules changed ended by the close,
// and a whole one with its new Content-Length.
func TestHTTPHTMLProfileHTTP10(t *testing.T) {
	const vs, member = "127.102.0.30:80", "127.102.0.31:80"
	startHTMLMember(t, member)
	rs, _ := htmlfilter.Compile([]htmlfilter.Rule{{Name: "/Common/noimg", Kind: htmlfilter.TagRemove, TagName: "img"}})
	cfg := mblbConfig(vs, &MBLB{Request: mblb.Framing{Mode: mblb.HTTP, HTTP: mblb.HTTPOptions{
		HTML: &mblb.HTMLOptions{Profile: "/Common/html", Rules: rs, Types: []string{"text/html"}}}}}, member)
	p, _ := newPlane(t)
	mustApply(t, p, cfg)
	want := strings.Replace(htmlPage, `<img src="a.png">`, "", 1)
	for _, c := range []struct{ path, framing string }{{"/split", ""}, {"/chunked", ""}, {"/whole", fmt.Sprintf("Content-Length: %d", len(want))}} {
		conn, err := net.Dial("tcp", vs)
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(conn, "GET %s HTTP/1.0\r\nHost: x\r\n\r\n", c.path)
		b, err := io.ReadAll(conn)
		conn.Close()
		if err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		head, body, _ := strings.Cut(string(b), "\r\n\r\n")
		if body != want || strings.Contains(strings.ToLower(head), "chunked") || c.framing != "" && !strings.Contains(head, c.framing) {
			t.Errorf("%s: got\n%s\n\n%s", c.path, head, body)
		}
	}
}

// TestHTTPHTMLDisable: HTML::disable in HTTP_RESPONSE leaves that
// response as the member sent it; the next one is parsed again.
func TestHTTPHTMLDisable(t *testing.T) {
	const vs, member = "127.102.0.20:80", "127.102.0.21:80"
	startHTMLMember(t, member)
	rs, _ := htmlfilter.Compile([]htmlfilter.Rule{{Name: "/Common/noimg", Kind: htmlfilter.TagRemove, TagName: "img"}})
	cfg := mblbConfig(vs, &MBLB{Request: mblb.Framing{Mode: mblb.HTTP, HTTP: mblb.HTTPOptions{
		HTML: &mblb.HTMLOptions{Profile: "/Common/html", Rules: rs, Types: []string{"text/html"}}}}}, member)
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `when HTTP_REQUEST { set off [HTTP::header exists X-Off] }
when HTTP_RESPONSE { if { $off } { HTML::disable } }`)
	p, _ := newPlane(t)
	mustApply(t, p, cfg)
	cl := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	defer cl.CloseIdleConnections()
	for i, off := range []bool{false, true, false} {
		req, _ := http.NewRequest("GET", "http://"+vs+"/split", nil)
		if off {
			req.Header.Set("X-Off", "1")
		}
		resp, err := cl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if has := strings.Contains(string(b), "<img"); has != off {
			t.Errorf("request %d (disabled %v): body %s", i, off, b)
		}
	}
}
