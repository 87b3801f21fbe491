package persist

import "testing"

func TestHostKey(t *testing.T) {
	for _, tc := range []struct {
		name, msg, want string
		none            bool
	}{
		{"plain", "GET / HTTP/1.1\r\nHost: www.example.com\r\nAccept: */*\r\n\r\n", "www.example.com", false},
		{"port kept", "GET / HTTP/1.1\r\nUser-Agent: x\r\nhost:   shop.example:8080  \r\n\r\n", "shop.example:8080", false},
		{"case of the name", "GET / HTTP/1.1\r\nHOST: A.Example\r\n\r\n", "A.Example", false},
		{"bare LF lines", "GET / HTTP/1.1\nHost: lf.example\n\n", "lf.example", false},
		{"first of two", "GET / HTTP/1.1\r\nHost: one.example\r\nHost: two.example\r\n\r\n", "one.example", false},
		{"no host (HTTP/1.0)", "GET / HTTP/1.0\r\nAccept: */*\r\n\r\n", "", true},
		{"empty host", "GET / HTTP/1.1\r\nHost:\r\n\r\n", "", true},
		{"a header named like it", "GET / HTTP/1.1\r\nHostname: no.example\r\nX-Host: no.example\r\n\r\n", "", true},
		{"host in the body only", "POST / HTTP/1.1\r\nContent-Length: 20\r\n\r\nHost: body.example\r\n", "", true},
		{"nothing", "", "", true},
		{"request line only", "GET /", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := HostKey([]byte(tc.msg))
			if tc.none {
				if got != nil {
					t.Fatalf("HostKey = %q, want none", got)
				}
				return
			}
			if string(got) != tc.want {
				t.Fatalf("HostKey = %q, want %q", got, tc.want)
			}
		})
	}
	if m, ok := ParseMode("host"); !ok || m != Host || m.String() != "host" {
		t.Fatalf("ParseMode(host) = %v %v (%s)", m, ok, m)
	}
}
