package mblb

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/cookiecrypt"
)

// TestHTTPProfileHeaders: the http profile's header-insert and
// header-erase edit every request a member gets (pipelined ones and
// OneConnect's too), and its hsts block adds Strict-Transport-Security
// to responses without one.
func TestHTTPProfileHeaders(t *testing.T) {
	m := startPageMember(t, "127.0.142.11:0")
	opts := HTTPOptions{
		HeaderInsert: []byte("X-Foo: bar\r\nX-Two: 2\r\n"),
		HeaderErase:  "x-secret",
		HSTS:         []byte("Strict-Transport-Security: max-age=300; includeSubDomains\r\n"),
	}
	for _, oc := range []bool{false, true} {
		vs := startVS(t, "127.0.142.1:0", httpConfig(httpPool(m), oc, opts))
		hc := dialHTTP(t, vs)
		hc.c.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(hc.c, get("/headers", "X-Secret: s\r\nX-Foo: client\r\nX-Keep: k\r\n")+get("/headers?sts=1", "X-Secret: s\r\n"))
		r, body := readDecoded(t, hc.br, "GET")
		if want := "X-Foo=client,bar X-Keep=k X-Two=2"; body != want {
			t.Errorf("oneconnect=%v: the member got %q, want %q", oc, body, want)
		}
		if got := r.Header.Values("Strict-Transport-Security"); len(got) != 1 || got[0] != "max-age=300; includeSubDomains" {
			t.Errorf("oneconnect=%v: Strict-Transport-Security %q", oc, got)
		}
		r, body = readDecoded(t, hc.br, "GET")
		if want := "X-Foo=bar X-Two=2"; body != want {
			t.Errorf("oneconnect=%v: the pipelined request's member got %q, want %q", oc, body, want)
		}
		if got := r.Header.Values("Strict-Transport-Security"); len(got) != 1 || got[0] != "max-age=1" {
			t.Errorf("oneconnect=%v: the member's own Strict-Transport-Security became %q", oc, got)
		}
	}
}

// TestHTTPEncryptCookies: encrypt-cookies encrypts the named cookie in
// the member's Set-Cookie (its attributes and the other cookies as they
// were) and gives the member back its value; a value the client changed
// is removed, and a Cookie field left empty goes.
func TestHTTPEncryptCookies(t *testing.T) {
	m := startPageMember(t, "127.0.142.21:0")
	c, err := cookiecrypt.New("s3cret", 256)
	if err != nil {
		t.Fatal(err)
	}
	opts := HTTPOptions{CookieCrypt: &CookieEncryption{Names: []string{"sid"}, Cipher: c}}
	for _, oc := range []bool{false, true} {
		vs := startVS(t, "127.0.142.2:0", httpConfig(httpPool(m), oc, opts))
		hc := dialHTTP(t, vs)
		hc.c.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(hc.c, get("/setcookie"))
		r, body := readDecoded(t, hc.br, "GET")
		sc := r.Header.Values("Set-Cookie")
		if len(sc) != 2 || !strings.HasPrefix(sc[0], "sid=!") || !strings.HasSuffix(sc[0], "; Path=/; HttpOnly") || sc[1] != "other=1" || body != `cookie=[]` {
			t.Fatalf("oneconnect=%v: Set-Cookie %q, body %q", oc, sc, body)
		}
		enc := strings.TrimSuffix(strings.TrimPrefix(sc[0], "sid="), "; Path=/; HttpOnly")
		tampered := enc[:len(enc)-2] + "AA"
		if tampered == enc {
			tampered = enc[:len(enc)-2] + "BB"
		}
		for _, cc := range []struct{ cookie, want string }{
			{"sid=" + enc + "; other=1", `cookie=["sid=xyz; other=1"]`},
			{"other=1; sid=" + tampered, `cookie=["other=1"]`},
			{"sid=plain", `cookie=[]`},
			{"other=2", `cookie=["other=2"]`},
		} {
			io.WriteString(hc.c, get("/setcookie", "Cookie: "+cc.cookie+"\r\n"))
			if _, body := readDecoded(t, hc.br, "GET"); body != cc.want {
				t.Errorf("oneconnect=%v: Cookie %q reached the member as %s, want %s", oc, cc.cookie, body, cc.want)
			}
		}
	}
}

// TestHTTPViaAndPermitted: via-request remove takes the client's Via out
// of the request; via-response append adds the proxy's; and
// response-headers-permitted leaves a response only the fields it lists,
// and those that frame it.
func TestHTTPViaAndPermitted(t *testing.T) {
	m := startPageMember(t, "127.0.142.31:0")
	opts := HTTPOptions{
		DropRequestVia: true,
		ResponseVia:    []byte("Via: 1.1 edge1\r\n"),
		ResponseFields: &ResponseFields{Permitted: map[string]bool{"content-type": true, "strict-transport-security": true}},
	}
	vs := startVS(t, "127.0.142.3:0", httpConfig(httpPool(m), false, opts))
	hc := dialHTTP(t, vs)
	hc.c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(hc.c, get("/headers?sts=1", "Via: 1.0 client-proxy\r\nX-Keep: k\r\n"))
	r, body := readDecoded(t, hc.br, "GET")
	if body != "X-Keep=k" {
		t.Errorf("the member got %q", body)
	}
	if r.Header.Get("Date") != "" || r.Header.Get("Strict-Transport-Security") != "max-age=1" || r.Header.Get("Content-Type") == "" || r.ContentLength != int64(len(body)) {
		t.Errorf("response fields %v (length %d)", r.Header, r.ContentLength)
	}
	if got := r.Header.Values("Via"); len(got) != 1 || got[0] != "1.1 edge1" {
		t.Errorf("Via %q", got)
	}
}
