package httpx

import "testing"

// TestAppendChunks: data goes in chunks of at most size bytes (the last
// one shorter), or as one chunk with no size; no data, no chunk.
func TestAppendChunks(t *testing.T) {
	for _, c := range []struct {
		data string
		size int
		want string
	}{
		{"abcdefghij", 4, "4\r\nabcd\r\n4\r\nefgh\r\n2\r\nij\r\n"},
		{"abcdefgh", 4, "4\r\nabcd\r\n4\r\nefgh\r\n"},
		{"abc", 4, "3\r\nabc\r\n"},
		{"abcdefghijklmnopq", 0, "11\r\nabcdefghijklmnopq\r\n"},
		{"abc", -1, "3\r\nabc\r\n"},
		{"", 4, ""},
	} {
		if got := string(AppendChunks(nil, []byte(c.data), c.size)); got != c.want {
			t.Errorf("%q size %d: %q, want %q", c.data, c.size, got, c.want)
		}
	}
}
