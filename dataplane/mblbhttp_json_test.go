package dataplane

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
)

// startJSONEchoServer answers every request with its own body and
// Content-Type; /slow sends the head first and the body after, so the
// engine streams the answer, and /big answers a JSON body larger than
// the profile's maximum-bytes.
func startJSONEchoServer(t *testing.T, addr string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Got", string(b))
		if r.URL.Path == "/big" {
			b = []byte(`{"pad":"` + strings.Repeat("p", 300) + `"}`)
		}
		w.Header().Set("Content-Type", r.Header.Get("Content-Type"))
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		if r.URL.Path == "/slow" {
			w.WriteHeader(200)
			w.(http.Flusher).Flush()
			time.Sleep(20 * time.Millisecond)
		}
		w.Write(b)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

const jsonProfileRule = `
when JSON_REQUEST {
    set r [JSON::root]
    if { [JSON::type $r] eq "object" } {
        JSON::object set $r via string lb
        JSON::object remove $r secret
    }
}
when JSON_REQUEST_ERROR {
    HTTP::respond 400 content "bad json"
}
when JSON_REQUEST_MISSING {
    HTTP::respond 411 content "no json"
}
when JSON_RESPONSE {
    set r [JSON::root]
    if { [JSON::type $r] eq "object" } {
        JSON::object set $r answered integer [JSON::object size $r]
    }
}
`

// TestHTTPJSONProfile: with a json profile, a JSON request body reaches
// the member as JSON_REQUEST edited it, the member's JSON answer reaches
// the client as JSON_RESPONSE edited it (held or streamed), with
// Content-Length fixed; a body that does not parse or passes
// maximum-bytes runs JSON_REQUEST_ERROR, an empty one
// JSON_REQUEST_MISSING; other content types and answers over the
// maximum pass untouched.
func TestHTTPJSONProfile(t *testing.T) {
	const vs, member = "127.96.0.10:80", "127.96.0.11:80"
	startJSONEchoServer(t, member)
	cfg := mblbConfig(vs, &MBLB{Request: mblb.Framing{Mode: mblb.HTTP, HTTP: mblb.HTTPOptions{
		JSON: &mblb.JSONOptions{Profile: "/Common/json", MaxBytes: 200, MaxEntries: 8}}}}, member)
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, jsonProfileRule)
	p, _ := newPlane(t)
	mustApply(t, p, cfg)

	cases := []struct {
		name, path, ctype, body string
		chunked                 bool
		status                  int
		got, answer             string // what the member got, what the client got
	}{
		{name: "edited both ways", path: "/", ctype: "application/json", body: `{"a":1,"secret":"x"}`, status: 200,
			got: `{"a":1,"via":"lb"}`, answer: `{"a":1,"via":"lb","answered":2}`},
		{name: "streamed answer", path: "/slow", ctype: "application/json; charset=utf-8", body: `{"k":[1,2]}`, status: 200,
			got: `{"k":[1,2],"via":"lb"}`, answer: `{"k":[1,2],"via":"lb","answered":2}`},
		{name: "chunked request", path: "/", ctype: "application/json", body: `{"b":true}`, chunked: true, status: 200,
			got: `{"b":true,"via":"lb"}`, answer: `{"b":true,"via":"lb","answered":2}`},
		{name: "+json type", path: "/", ctype: "application/problem+json", body: `{"t":"x"}`, status: 200,
			got: `{"t":"x","via":"lb"}`, answer: `{"t":"x","via":"lb","answered":2}`},
		{name: "array untouched by the rule", path: "/", ctype: "application/json", body: ` [1, 2] `, status: 200, got: `[1, 2]`, answer: ` [1, 2] `},
		{name: "not JSON content type", path: "/", ctype: "text/plain", body: `{"secret":"x"}`, status: 200, got: `{"secret":"x"}`, answer: `{"secret":"x"}`},
		{name: "does not parse", path: "/", ctype: "application/json", body: `{"a":`, status: 400, answer: "bad json"},
		{name: "over maximum-bytes", path: "/", ctype: "application/json", body: `{"a":"` + strings.Repeat("x", 200) + `"}`, status: 400, answer: "bad json"},
		{name: "over maximum-entries", path: "/", ctype: "application/json", body: `[1,2,3,4,5,6,7,8,9]`, status: 400, answer: "bad json"},
		{name: "missing", path: "/", ctype: "application/json", body: ``, status: 411, answer: "no json"},
		{name: "answer over maximum-bytes passes", path: "/big", ctype: "application/json", body: `{}`, status: 200,
			got: `{"via":"lb"}`, answer: `{"pad":"` + strings.Repeat("p", 300) + `"}`},
	}
	cl := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	defer cl.CloseIdleConnections()
	for round := 0; round < 2; round++ { // the second round reuses the connection
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/%d", c.name, round), func(t *testing.T) {
				var body io.Reader = strings.NewReader(c.body)
				if c.chunked {
					body = io.MultiReader(strings.NewReader(c.body)) // no length: sent chunked
				}
				req, _ := http.NewRequest("POST", "http://"+vs+c.path, body)
				req.Header.Set("Content-Type", c.ctype)
				resp, err := cl.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil {
					t.Fatal(err)
				}
				if resp.StatusCode != c.status || string(b) != c.answer {
					t.Fatalf("answer %d %q, want %d %q", resp.StatusCode, b, c.status, c.answer)
				}
				if resp.ContentLength >= 0 && resp.ContentLength != int64(len(b)) {
					t.Fatalf("Content-Length %d for %d bytes", resp.ContentLength, len(b))
				}
				if c.got != "" && resp.Header.Get("X-Got") != c.got {
					t.Fatalf("member got %q, want %q", resp.Header.Get("X-Got"), c.got)
				}
			})
		}
	}

	// The head first, the body after it: the engine streams the
	// request, and the json profile reads it whole before it goes on.
	for _, c := range []struct{ name, head, body, want string }{
		{"split content-length", "Content-Length: 14\r\n", `{"secret":"s"}`, `{"via":"lb"}`},
		{"split chunked", "Transfer-Encoding: chunked\r\n", "6\r\n{\"a\":2\r\n1\r\n}\r\n0\r\n\r\n", `{"a":2,"via":"lb"}`},
		{"split chunked over maximum-bytes", "Transfer-Encoding: chunked\r\n", "c8\r\n" + strings.Repeat(" ", 200) + "\r\n4\r\n{ }\n\r\n0\r\n\r\n", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn, err := net.DialTimeout("tcp", vs, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(10 * time.Second))
			if _, err := conn.Write([]byte("POST / HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\n" + c.head + "\r\n")); err != nil {
				t.Fatal(err)
			}
			time.Sleep(20 * time.Millisecond)
			if _, err := conn.Write([]byte(c.body)); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if c.want == "" {
				if resp.StatusCode != 400 || string(b) != "bad json" {
					t.Fatalf("answer %d %q, want 400 bad json", resp.StatusCode, b)
				}
				return
			}
			if resp.StatusCode != 200 || resp.Header.Get("X-Got") != c.want {
				t.Fatalf("answer %d, member got %q, want %q", resp.StatusCode, resp.Header.Get("X-Got"), c.want)
			}
		})
	}

	t.Run("curl", func(t *testing.T) {
		curl, err := exec.LookPath("curl")
		if err != nil {
			t.Skip("curl is not installed")
		}
		out, err := exec.Command(curl, "-sS", "--max-time", "10", "-D", "-", "-H", "Content-Type: application/json",
			"--data-binary", `{"secret":1,"n":null}`, "http://"+vs+"/").CombinedOutput()
		if err != nil {
			t.Fatalf("curl: %v\n%s", err, out)
		}
		s := string(out)
		want := `{"n":null,"via":"lb","answered":2}`
		if !strings.HasSuffix(s, want) || !strings.Contains(s, "Content-Length: "+strconv.Itoa(len(want))) ||
			!strings.Contains(s, `X-Got: {"n":null,"via":"lb"}`) {
			t.Fatalf("curl got:\n%s\nwant the body %s", s, want)
		}
	})
}

// TestHTTPJSONAfterCollect: the json profile parses the body as
// HTTP_REQUEST_DATA left it (HTTP::payload replace), whether the
// request came whole or streamed after its head.
func TestHTTPJSONAfterCollect(t *testing.T) {
	const vs, member = "127.96.0.20:80", "127.96.0.21:80"
	startJSONEchoServer(t, member)
	cfg := mblbConfig(vs, &MBLB{Request: mblb.Framing{Mode: mblb.HTTP, HTTP: mblb.HTTPOptions{
		JSON: &mblb.JSONOptions{Profile: "/Common/json", MaxBytes: 1000, MaxEntries: 100}}}}, member)
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `
when HTTP_REQUEST { HTTP::collect [HTTP::header Content-Length] }
when HTTP_REQUEST_DATA { HTTP::payload replace 0 [HTTP::payload length] {{"r":[1]}} }
when JSON_REQUEST { JSON::array append [JSON::object get [JSON::root] r] integer 2 }
`)
	p, _ := newPlane(t)
	mustApply(t, p, cfg)
	for _, split := range []bool{false, true} {
		conn, err := net.DialTimeout("tcp", vs, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		body := `{"original":"body of some length"}`
		head := "POST / HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
		if split {
			conn.Write([]byte(head))
			time.Sleep(20 * time.Millisecond)
			conn.Write([]byte(body))
		} else {
			conn.Write([]byte(head + body))
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			conn.Close()
			t.Fatalf("split=%v: %v", split, err)
		}
		resp.Body.Close()
		conn.Close()
		if got := resp.Header.Get("X-Got"); got != `{"r":[1,2]}` {
			t.Errorf("split=%v: member got %q, want {\"r\":[1,2]}", split, got)
		}
	}
}
