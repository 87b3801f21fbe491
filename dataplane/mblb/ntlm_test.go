package mblb

import "testing"

// TestNTLMScheme: the authentication header values that name NTLM or
// Negotiate, in any case, alone or with their token; nothing else.
func TestNTLMScheme(t *testing.T) {
	for _, c := range []struct {
		v    string
		want bool
	}{
		{"NTLM", true},
		{"ntlm TlRMTVNTUAAB", true},
		{"Negotiate", true},
		{"  Negotiate YIIG", true},
		{"NTLMv2", false},
		{"Basic realm=x", false},
		{"Negotiated", false},
		{"", false},
	} {
		if got := ntlmScheme([]byte(c.v)); got != c.want {
			t.Errorf("%q: %v, want %v", c.v, got, c.want)
		}
	}
}

// TestHTTP10: force-http-10-response says an HTTP/1.1 status line as
// HTTP/1.0 and leaves the rest of the head; an HTTP/1.0 one is kept.
func TestHTTP10(t *testing.T) {
	sc := &serverConn{}
	for _, c := range []struct{ in, want string }{
		{"HTTP/1.1 200 OK\r\nA: b\r\n\r\n", "HTTP/1.0 200 OK\r\nA: b\r\n\r\n"},
		{"HTTP/1.0 404 Not Found\r\n\r\n", "HTTP/1.0 404 Not Found\r\n\r\n"},
	} {
		got, _ := sc.http10([]byte(c.in))
		if string(got) != c.want {
			t.Errorf("%q: %q, want %q", c.in, got, c.want)
		}
	}
}
