package rules

import (
	"strings"
	"testing"
)

// TestHTTPCookieCrypt: HTTP::cookie encrypt in HTTP_RESPONSE and
// decrypt in HTTP_REQUEST give the member back the value it set; a value
// that does not decrypt is left as it is and answers "".
func TestHTTPCookieCrypt(t *testing.T) {
	f := newHTTPFake(t, testRequest, testResponse)
	enc, err := evalIn(t, f, nil, HTTPResponse, "HTTP::cookie encrypt sid k3y 256")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(enc, "!") {
		t.Fatalf("encrypt gave %q", enc)
	}
	if !strings.Contains(f.resp.String(), "Set-Cookie: sid="+enc+"; Path=/; HttpOnly\r\n") {
		t.Fatalf("the response's cookie: %q", f.resp.String())
	}
	// The client sends it back: the member gets the clear value.
	req := strings.Replace(testRequest, "JSESSIONID=abc123", "sid="+enc, 1)
	for _, c := range []struct {
		script, want, cookie string
	}{
		{"HTTP::cookie decrypt sid k3y 256", "xyz", "sid=xyz"},
		{"HTTP::cookie decrypt sid k3y", "", "sid=" + enc},       // another key length
		{"HTTP::cookie decrypt sid wrong 256", "", "sid=" + enc}, // another phrase
		{"HTTP::cookie decrypt theme k3y 256", "", "theme=dark"}, // never encrypted
		{"HTTP::cookie decrypt absent k3y 256", "", "sid=" + enc},
	} {
		f := newHTTPFake(t, req, "")
		got, err := evalIn(t, f, nil, HTTPRequest, c.script)
		if err != nil {
			t.Fatalf("%s: %v", c.script, err)
		}
		if got != c.want || !strings.Contains(f.req.String(), c.cookie) {
			t.Errorf("%s: %q, head %q; want %q with %q", c.script, got, f.req.String(), c.want, c.cookie)
		}
	}
	for _, c := range []struct{ script, err string }{
		{"HTTP::cookie encrypt sid", "wrong # args"},
		{"HTTP::cookie encrypt sid k 64", `key length "64" must be 128, 192 or 256`},
	} {
		f := newHTTPFake(t, testRequest, testResponse)
		if _, err := evalIn(t, f, nil, HTTPResponse, c.script); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: %v, want %q", c.script, err, c.err)
		}
	}
}
