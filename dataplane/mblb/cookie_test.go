package mblb

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/httpx"
)

func TestRewriteSetCookie(t *testing.T) {
	zeros := strings.Repeat("0", 120)
	m := netip.MustParseAddrPort("10.1.1.100:80")
	spec := &httpx.CookieSpec{Name: "BIGipServerweb"}
	tests := []struct {
		name, head, want string // want "" : nothing to rewrite
	}{
		{"placeholder", "HTTP/1.1 200 OK\r\nSet-Cookie: BIGipCookie=" + zeros + "; path=/app; HttpOnly\r\nContent-Length: 0\r\n\r\n",
			"HTTP/1.1 200 OK\r\nSet-Cookie: BIGipServerweb=1677787402.20480.0000; path=/app; HttpOnly\r\nContent-Length: 0\r\n\r\n"},
		{"legacy 75 zeros under the profile's name", "HTTP/1.1 200 OK\r\nset-cookie: BIGipServerweb=" + zeros[:75] + "\r\n\r\n",
			"HTTP/1.1 200 OK\r\nSet-Cookie: BIGipServerweb=1677787402.20480.0000\r\n\r\n"},
		{"an application cookie stays", "HTTP/1.1 200 OK\r\nSet-Cookie: JSESSIONID=000; path=/\r\n\r\n", ""},
		{"a value that is not zeros stays", "HTTP/1.1 200 OK\r\nSet-Cookie: BIGipCookie=0001\r\n\r\n", ""},
		{"no cookie", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := rewriteSetCookie([]byte(tc.head), spec, &CookieMode{}, m)
			if string(got) != tc.want {
				t.Errorf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestCookieHashKey(t *testing.T) {
	tests := []struct {
		offset, length int
		value, want    string
	}{
		{0, 0, "abcdef", "abcdef"},
		{2, 0, "abcdef", "cdef"},
		{0, 3, "abcdef", "abc"},
		{2, 2, "abcdef", "cd"},
		{1, 10, "abcdef", "bcdef"},
		{6, 0, "abcdef", ""},
		{9, 2, "abcdef", ""},
	}
	for _, tc := range tests {
		c := CookieMode{Method: CookieHash, HashOffset: tc.offset, HashLength: tc.length}
		if got := string(c.hashKey([]byte(tc.value))); got != tc.want {
			t.Errorf("offset %d length %d of %q = %q, want %q", tc.offset, tc.length, tc.value, got, tc.want)
		}
	}
}
