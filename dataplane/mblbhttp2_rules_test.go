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

	"golang.org/x/net/http2"

	"github.com/openltm/openltm/dataplane/h2gw"
	"github.com/openltm/openltm/dataplane/mblb"
)

// TestHTTP2Commands: the HTTP2:: commands on an HTTP/2 client's streams
// (cleartext, prior knowledge): each request's stream id and priority,
// the connection's request count, its pseudo-headers, :path replaced,
// the response's stream and :status, and HTTP2::disconnect, after which
// the client's next request opens a new connection; an HTTP/1.1 client
// of the same virtual reads 0 everywhere; and HTTP2::disable in
// CLIENT_ACCEPTED refuses a client's HTTP/2 (GOAWAY HTTP_1_1_REQUIRED)
// while HTTP/1.1 still goes.
func TestHTTP2Commands(t *testing.T) {
	const vs = "127.89.3.1:80"
	h2Member(t, "127.89.3.11:80", "M")
	rule := `when CLIENT_ACCEPTED {
		if { [IP::client_addr] eq "127.89.3.50" } { HTTP2::disable }
	}
	when HTTP_REQUEST {
		if { [HTTP::path] eq "/pri" } { HTTP2::stream priority 200 }
		HTTP::header insert X-Rule "a=[HTTP2::active] v=[HTTP2::version] s=[HTTP2::stream id] p=[HTTP2::stream priority] n=[HTTP2::requests] c=[HTTP2::concurrency] [HTTP2::header :method] [HTTP2::header :scheme] [HTTP2::header :authority] [HTTP2::header :path]"
		if { [HTTP::path] eq "/moved" } { HTTP2::header replace :path /elsewhere }
		if { [HTTP::path] eq "/bye" } { HTTP2::disconnect }
	}
	when HTTP_RESPONSE {
		HTTP::header insert X-Stream "[HTTP2::stream] [HTTP2::header :status]"
	}`
	cfg := l7Config(t, vs, true, mblb.HTTPOptions{}, rule, "127.89.3.11:80")
	cfg.Virtuals["/Common/vs"].HTTP2 = &HTTP2{Always: true}
	p, _ := newPlane(t)
	mustApply(t, p, cfg)

	client := h2Client(t)
	get := func(c *http.Client, path string) (string, string, error) {
		t.Helper()
		resp, err := c.Get("http://" + vs + path)
		if err != nil {
			return "", "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.Proto + " " + resp.Header.Get("X-Stream"), string(b), nil
	}
	steps := []struct {
		client    *http.Client
		path      string
		proto     string // and X-Stream
		wantTrail string // the end of what the member saw
	}{
		{client, "/a", "HTTP/2.0 1 200", "GET /a xff= rule=a=1 v=2 s=1 p=15 n=1 c=1 GET http " + vs + " /a body=0"},
		{client, "/pri", "HTTP/2.0 3 200", "GET /pri xff= rule=a=1 v=2 s=3 p=200 n=2 c=1 GET http " + vs + " /pri body=0"},
		{client, "/moved", "HTTP/2.0 5 200", "GET /elsewhere xff= rule=a=1 v=2 s=5 p=15 n=3 c=1 GET http " + vs + " /moved body=0"},
		{client, "/bye", "HTTP/2.0 7 200", "GET /bye xff= rule=a=1 v=2 s=7 p=15 n=4 c=1 GET http " + vs + " /bye body=0"},
		// A new connection: the last one went away.
		{client, "/again", "HTTP/2.0 1 200", "GET /again xff= rule=a=1 v=2 s=1 p=15 n=1 c=1 GET http " + vs + " /again body=0"},
		{http.DefaultClient, "/old", "HTTP/1.1 0", "GET /old xff= rule=a=0 v=0 s=0 p=0 n=0 c=0 body=0"},
	}
	for _, st := range steps {
		proto, body, err := get(st.client, st.path)
		if err != nil {
			t.Fatalf("%s: %v", st.path, err)
		}
		if proto != st.proto || !strings.HasSuffix(body, st.wantTrail) {
			t.Errorf("%s: %s %q, want %s ...%q", st.path, proto, body, st.proto, st.wantTrail)
		}
	}

	// HTTP2::disable in CLIENT_ACCEPTED, for the client from 127.89.3.50.
	from := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.89.3.50")}, Timeout: 5 * time.Second}
	h1 := &http.Transport{DialContext: from.DialContext}
	t.Cleanup(h1.CloseIdleConnections)
	// The preface is answered SETTINGS, then GOAWAY HTTP_1_1_REQUIRED.
	c, err := from.Dial("tcp", vs)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte(h2gw.Preface + "\x00\x00\x00\x04\x00\x00\x00\x00\x00")) // and an empty SETTINGS
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	fr := http2.NewFramer(io.Discard, c)
	var got []string
	for range 3 {
		f, err := fr.ReadFrame()
		if err != nil {
			got = append(got, "end")
			break
		}
		if g, ok := f.(*http2.GoAwayFrame); ok {
			got = append(got, "GOAWAY "+g.ErrCode.String())
		} else {
			got = append(got, f.Header().Type.String())
		}
	}
	if strings.Join(got, " ") != "SETTINGS GOAWAY HTTP_1_1_REQUIRED end" {
		t.Errorf("HTTP/2 after HTTP2::disable: %v, want SETTINGS, GOAWAY HTTP_1_1_REQUIRED, the end", got)
	}
	if proto, body, err := get(&http.Client{Transport: h1, Timeout: 10 * time.Second}, "/one"); err != nil || proto != "HTTP/1.1 0" || !strings.Contains(body, "GET /one xff= rule=a=0") {
		t.Errorf("HTTP/1.1 after HTTP2::disable: %s %q %v", proto, body, err)
	}
}

// TestHTTPHSTSRule: HTTP::hsts changes the http profile's
// Strict-Transport-Security for the rest of the client's connection
// (HTTP/1.1 and HTTP/2 alike), and a connection the rule leaves alone
// keeps the profile's; mode enable adds it on a profile whose mode is
// disabled, with the block's other settings.
func TestHTTPHSTSRule(t *testing.T) {
	line := []byte("Strict-Transport-Security: max-age=600; includeSubDomains\r\n")
	rule := `when HTTP_REQUEST {
		switch [HTTP::path] {
			"/off" { HTTP::hsts mode disable }
			"/on" { HTTP::hsts mode enable }
			"/age" { HTTP::hsts maximum-age 60 ; HTTP::hsts preload enable ; HTTP::hsts include-subdomains disable }
		}
		HTTP::header insert X-Rule "[HTTP::hsts]"
	}`
	for i, tc := range []struct {
		name    string
		enabled bool
		h2      bool
		paths   []string
		want    []string // Strict-Transport-Security of each answer
	}{
		{"h1", true, false, []string{"/a", "/age", "/b", "/off", "/c"},
			[]string{"max-age=600; includeSubDomains", "max-age=60; preload", "max-age=60; preload", "", ""}},
		{"h2", true, true, []string{"/a", "/age", "/b", "/off", "/age", "/on"},
			[]string{"max-age=600; includeSubDomains", "max-age=60; preload", "max-age=60; preload", "", "", "max-age=60; preload"}},
		{"profile disabled", false, false, []string{"/a", "/on", "/b"},
			[]string{"", "max-age=600; includeSubDomains", "max-age=600; includeSubDomains"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := fmt.Sprintf("127.89.4.%d:80", i+1)
			member := fmt.Sprintf("127.89.4.%d:80", i+11)
			h2Member(t, member, "M")
			opts := mblb.HTTPOptions{HSTSLine: line}
			if tc.enabled {
				opts.HSTS = line
			}
			cfg := l7Config(t, vs, false, opts, rule, member)
			cfg.Virtuals["/Common/vs"].HTTP2 = &HTTP2{Always: true}
			p, _ := newPlane(t)
			mustApply(t, p, cfg)
			var protos http.Protocols
			if tc.h2 {
				protos.SetUnencryptedHTTP2(true)
			} else {
				protos.SetHTTP1(true)
			}
			tr := &http.Transport{Protocols: &protos, MaxConnsPerHost: 1}
			t.Cleanup(tr.CloseIdleConnections)
			client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
			for k, path := range tc.paths {
				resp, err := client.Get("http://" + vs + path)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if got := resp.Header.Get("Strict-Transport-Security"); got != tc.want[k] || tc.h2 != (resp.ProtoMajor == 2) {
					t.Errorf("%s: HTTP/%d %q, want %q", path, resp.ProtoMajor, got, tc.want[k])
				}
				if !strings.Contains(string(body), "rule="+tc.want[k]+" body") {
					t.Errorf("%s: the rule read %q, want %q", path, body, tc.want[k])
				}
			}
		})
	}
}

// TestHTTPReasons: HTTP::passthrough_reason and HTTP::reject_reason
// in CLIENT_CLOSED say why the client's HTTP filter went into
// passthrough (HTTP::disable) or rejected it (a request that cannot be
// read, headers past max-header-count); a client served to its end
// reads "Unknown" and "".
func TestHTTPReasons(t *testing.T) {
	const vs = "127.89.5.1:80"
	h2Member(t, "127.89.5.11:80", "M")
	rule := `when HTTP_REQUEST {
		if { [HTTP::path] eq "/reason" } { HTTP::respond 200 content "[table lookup pt]|[table lookup rj]" }
		if { [HTTP::path] eq "/disable" } { HTTP::disable }
	}
	when CLIENT_CLOSED {
		if { [IP::client_addr] ne "127.89.5.50" } {
			table set pt "[HTTP::passthrough_reason] [HTTP::passthrough_reason as_num]"
			table set rj "[HTTP::reject_reason]/[HTTP::reject_reason as_num]"
		}
	}`
	cfg := l7Config(t, vs, false, mblb.HTTPOptions{MaxHeaderCount: 8}, rule, "127.89.5.11:80")
	p, _ := newPlane(t)
	mustApply(t, p, cfg)
	reader := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.89.5.50")}, Timeout: 5 * time.Second}
	tr := &http.Transport{DialContext: reader.DialContext, DisableKeepAlives: true}
	t.Cleanup(tr.CloseIdleConnections)
	reasons := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	many := "GET / HTTP/1.1\r\nHost: x\r\n" + strings.Repeat("X-A: 1\r\n", 20) + "\r\n"
	for _, tc := range []struct {
		name, send, want string
	}{
		{"served", "GET /plain HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", "Unknown 0|/0"},
		{"HTTP::disable", "GET /disable HTTP/1.1\r\nHost: x\r\n\r\n", "iRule 1|/0"},
		{"bad request", "NOT HTTP\r\n\r\n", "Unknown 0|Bad Request/1"},
		{"excess headers", many, "Unknown 0|Excess Client Headers/3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.DialTimeout("tcp", vs, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			c.Write([]byte(tc.send))
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
				io.Copy(io.Discard, resp.Body) // an answer, or the reset
			}
			c.Close()
			got := ""
			for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
				resp, err := reasons.Get("http://" + vs + "/reason")
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if got = string(b); got == tc.want {
					break
				}
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
