package persist

import "testing"

func TestPayloadKey(t *testing.T) {
	for _, tc := range []struct {
		name          string
		off, length   int
		start, end    string
		limit         int
		in            string
		more          bool
		want          string
		done, present bool
	}{
		{name: "offset and length", off: 4, length: 6, in: "LOGNacct42 rest", more: true, want: "acct42", done: true, present: true},
		{name: "length not yet read", off: 4, length: 6, in: "LOGNacc", more: true},
		{name: "length never read", off: 4, length: 6, in: "LOGNacc", done: true},
		{name: "length 0: the rest read so far", off: 2, in: "> hello\n", more: true, want: "hello\n", done: true, present: true},
		{name: "between patterns", start: "user=", end: "[;\n]", in: "GET x user=bob;sid=1\n", more: true, want: "bob", done: true, present: true},
		{name: "end not yet read", start: "user=", end: "\n", in: "user=bo", more: true},
		{name: "start not found", start: "user=", end: "\n", in: "nothing here\n", more: true},
		{name: "start not found, no more", start: "user=", end: "\n", in: "nothing here\n", done: true},
		{name: "start not within the limit", start: "user=", end: "\n", limit: 8, in: "abcdefghuser=bob\n", more: true, done: true},
		{name: "start then length", start: `ID:\s*`, length: 3, in: "ID:   123456", more: true, want: "123", done: true, present: true},
		{name: "start, offset, end", start: "K=", off: 1, end: ",", in: "K=xabc,", more: true, want: "abc", done: true, present: true},
		{name: "end only", end: "\r\n", in: "alice\r\nrest", more: true, want: "alice", done: true, present: true},
		{name: "end capped by length", end: "\n", length: 2, in: "alice\n", more: true, want: "al", done: true, present: true},
		{name: "empty key", start: "a=", end: ";", in: "a=;", more: true, done: true},
		{name: "start matched at the end, waiting", start: "user=", in: "user=", more: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewPayload(tc.off, tc.length, tc.start, tc.end, tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			key, done := p.Key([]byte(tc.in), tc.more)
			if done != tc.done || (key != nil) != tc.present || string(key) != tc.want {
				t.Errorf("Key(%q) = %q, %v; want %q, %v", tc.in, key, done, tc.want, tc.done)
			}
		})
	}
}

func TestNewPayloadRefuses(t *testing.T) {
	for _, tc := range []struct {
		off, length int
		start, end  string
		limit       int
	}{
		{off: -1},
		{length: -2},
		{limit: -1},
		{limit: MaxPayloadLimit + 1},
		{start: "user=(", end: "\n"},
		{end: "[a-"},
		{off: 10, length: 10, limit: 16},
	} {
		if _, err := NewPayload(tc.off, tc.length, tc.start, tc.end, tc.limit); err == nil {
			t.Errorf("NewPayload(%+v) accepted", tc)
		}
	}
	if p, err := NewPayload(0, 4, "none", "none", 0); err != nil || p.Start != nil || p.End != nil || p.Limit != DefaultPayloadLimit {
		t.Errorf("none patterns, limit 0: %+v, %v", p, err)
	}
}
