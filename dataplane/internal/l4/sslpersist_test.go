package l4

import (
	"testing"

	"github.com/openltm/openltm/dataplane/tlsprof"
)

// TestFirstBytesKeys: the keys SSL and MSRDP persistence read from a
// connection's first bytes, and when they need more.
func TestFirstBytesKeys(t *testing.T) {
	rdp := func(cookie string) []byte {
		body := []byte{0xe0, 0, 0, 0, 0, 0}
		if cookie != "" {
			body = append(body, "Cookie: "+cookie+"\r\n"...)
		}
		x224 := append([]byte{byte(len(body))}, body...)
		n := 4 + len(x224)
		return append([]byte{3, 0, byte(n >> 8), byte(n)}, x224...)
	}
	hello := append([]byte{22, 3, 3, 0, 80, 1, 0, 0, 76, 3, 3}, make([]byte, 32)...)
	hello = append(hello, 4, 0xde, 0xad, 0xbe, 0xef)
	for _, c := range []struct {
		name string
		find func([]byte) ([]byte, bool)
		in   []byte
		key  string
		done bool
	}{
		{"rdp user", rdpCookie, rdp("mstshash=alice"), "alice", true},
		{"rdp broker token", rdpCookie, rdp("msts=3640205228.15629.0000"), "msts=3640205228.15629.0000", true},
		{"rdp without a cookie", rdpCookie, rdp(""), "", true},
		{"not rdp", rdpCookie, []byte("GET / HTTP/1.1\r\n\r\n"), "", true},
		{"rdp not yet whole", rdpCookie, rdp("mstshash=alice")[:12], "", false},
		{"tls hello with an id", tlsprof.HelloSessionID, hello, "\xde\xad\xbe\xef", true},
		{"tls hello cut short", tlsprof.HelloSessionID, hello[:20], "", false},
		{"not tls", tlsprof.HelloSessionID, []byte("SSH-2.0-OpenSSH_9.2\r\n" + string(make([]byte, 40))), "", true},
		{"a short answer in plaintext", tlsprof.HelloSessionID, []byte("220 ok\r\n"), "", true},
		{"a handshake record that is no hello", tlsprof.HelloSessionID, append([]byte{22, 3, 3, 0, 80, 11}, make([]byte, 10)...), "", true},
	} {
		key, done := c.find(c.in)
		if string(key) != c.key || done != c.done {
			t.Errorf("%s: %q %v, want %q %v", c.name, key, done, c.key, c.done)
		}
	}
}

func TestRoutingToken(t *testing.T) {
	for _, c := range []struct {
		key  string
		want string
	}{
		{"msts=3640205228.15629.0000", "172.31.249.216:3389"},
		{"msts=16777343.20480.0000", "127.0.0.1:80"},
		{"msts=1.0.0000", ""},
		{"msts=x.15629.0000", ""},
		{"msts=3640205228", ""},
		{"mstshash=alice", ""},
	} {
		ap, ok := routingToken([]byte(c.key))
		got := ""
		if ok {
			got = ap.String()
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.key, got, c.want)
		}
	}
}
