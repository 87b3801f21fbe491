package mblb

import (
	"io"
	"testing"
	"time"
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
