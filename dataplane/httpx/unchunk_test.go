package httpx

import (
	"math/rand"
	"strings"
	"testing"
)

func TestSetChunked(t *testing.T) {
	head := "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 12\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n"
	cases := []struct {
		chunked bool
		want    string
	}{
		{true, "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n"},
		{false, "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n\r\n"},
	}
	for _, c := range cases {
		if got := string(SetChunked(nil, []byte(head), c.chunked)); got != c.want {
			t.Errorf("chunked %v:\n%q\nwant\n%q", c.chunked, got, c.want)
		}
	}
}

// TestUnchunker feeds chunked bodies in every kind of split: the data is
// the same as Dechunk gives for the whole, and nothing after the body's
// end is taken.
func TestUnchunker(t *testing.T) {
	bodies := []string{
		"5\r\nhello\r\n0\r\n\r\n",
		"3;ext=1\r\nabc\r\nA\r\n0123456789\r\n0\r\nTrailer: x\r\n\r\n",
		"0\r\n\r\n",
		"1\r\na\r\n1\r\nb\r\n1\r\nc\r\n0\r\n\r\nGARBAGE",
	}
	rnd := rand.New(rand.NewSource(1))
	for _, b := range bodies {
		want, err := Dechunk(nil, []byte(b))
		if err != nil {
			t.Fatalf("%q: %v", b, err)
		}
		for round := 0; round < 50; round++ {
			var u Unchunker
			var got []byte
			rest := []byte(b)
			for len(rest) > 0 {
				n := 1 + rnd.Intn(len(rest))
				if got, err = u.Append(got, rest[:n]); err != nil {
					t.Fatalf("%q: %v", b, err)
				}
				rest = rest[n:]
			}
			if string(got) != string(want) {
				t.Fatalf("%q: %q, want %q", b, got, want)
			}
		}
	}
	var u Unchunker
	if _, err := u.Append(nil, []byte("zz\r\n")); err == nil || !strings.Contains(err.Error(), "malformed") {
		t.Errorf("a bad size line: %v", err)
	}
}
