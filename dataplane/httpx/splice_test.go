package httpx

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// splicer is what the two framers share for these tests.
type splicer interface {
	Splice(dst, b []byte, k int, repl []byte) ([]byte, int, error)
	Eat(b []byte) (int, error)
	Body(b []byte) (int, bool, error)
}

func TestSplice(t *testing.T) {
	chunked := func(chunks ...string) string {
		var b strings.Builder
		for _, c := range chunks {
			b.WriteString(strconv.FormatInt(int64(len(c)), 16) + "\r\n" + c + "\r\n")
		}
		return b.String() + "0\r\n\r\n"
	}
	data := strings.Repeat("0123456789", 6) // 60 bytes
	tests := []struct {
		name     string
		response bool
		chunks   []string // nil: Content-Length
		held     int      // body bytes (as sent) that have arrived
		k        int
		repl     string
		err      error
	}{
		{name: "length, shorter", held: 20, k: 10, repl: "abc"},
		{name: "length, longer", held: 20, k: 10, repl: strings.Repeat("x", 40)},
		{name: "length, emptied", held: 20, k: 20, repl: ""},
		{name: "length, nothing collected", held: 20, k: 0, repl: "pre"},
		{name: "length, more than held", held: 20, k: 21, err: ErrSpliceShort},
		{name: "length, all of it", held: 60, k: 60, repl: "whole"},
		{name: "length, response", response: true, held: 30, k: 30, repl: "R"},
		{name: "chunked, inside a chunk", chunks: []string{data[:25], data[25:]}, held: 40, k: 10, repl: "abc"},
		{name: "chunked, at a chunk's end, line end in", chunks: []string{data[:10], data[10:]}, held: 20, k: 10, repl: "abc"},
		{name: "chunked, at a chunk's end, line end not in", chunks: []string{data[:10], data[10:]}, held: 14, k: 10, repl: "abc"},
		{name: "chunked, at a chunk's end, CR in", chunks: []string{data[:10], data[10:]}, held: 15, k: 10, repl: ""},
		{name: "chunked, emptied inside a chunk", chunks: []string{data[:25], data[25:]}, held: 40, k: 10, repl: ""},
		{name: "chunked, emptied at a chunk's end", chunks: []string{data[:10], data[10:]}, held: 14, k: 10, repl: ""},
		{name: "chunked, across chunks", chunks: []string{data[:5], data[5:12], data[12:]}, held: 30, k: 15, repl: "XYZ"},
		{name: "chunked, nothing collected", chunks: []string{data}, held: 10, k: 0, repl: "pre"},
		{name: "chunked, extensions", chunks: []string{data[:30], data[30:]}, held: 50, k: 31, repl: "e"},
		{name: "chunked, more than held", chunks: []string{data}, held: 10, k: 20, err: ErrSpliceShort},
		{name: "chunked, response", response: true, chunks: []string{data[:25], data[25:]}, held: 40, k: 25, repl: "abc"},
	}
	for _, tc := range tests {
		for _, step := range []int{1, 3, 1 << 20} {
			var body, head string
			if tc.chunks == nil {
				body = data
				head = "Content-Length: " + strconv.Itoa(len(data)) + "\r\n\r\n"
			} else {
				body = chunked(tc.chunks...)
				if strings.Contains(tc.name, "extensions") {
					body = strings.Replace(body, "\r\n", ";ext=1\r\n", 1)
				}
				head = "Transfer-Encoding: chunked\r\n\r\n"
			}
			var f splicer
			var err error
			if tc.response {
				rf := &ResponseFramer{Max: 16, Stream: true}
				head = "HTTP/1.1 200 OK\r\n" + head
				_, _, err = rf.Frame([]byte(head + body[:tc.held]))
				f = rf
			} else {
				rf := &RequestFramer{Max: 16, Stream: true}
				head = "POST / HTTP/1.1\r\nHost: h\r\n" + head
				_, _, err = rf.Frame([]byte(head + body[:tc.held]))
				f = rf
			}
			if !errors.Is(err, ErrStreamBody) {
				t.Fatalf("%s: Frame: %v", tc.name, err)
			}
			out, n, err := f.Splice(nil, []byte(body[:tc.held]), tc.k, []byte(tc.repl))
			if !errors.Is(err, tc.err) {
				t.Fatalf("%s: Splice: %v, want %v", tc.name, err, tc.err)
			}
			if tc.err != nil {
				break
			}
			// The rest streams through Eat and Body in parts of step.
			rest := body[n:]
			done := false
			if rest == "" {
				// All of it was taken: Body with no bytes ends it.
				if _, d, err := f.Body(nil); err != nil || !d {
					t.Fatalf("%s: Body(nil) after taking the whole body: %v %v", tc.name, d, err)
				}
				done = true
			}
			for i := 0; i < 1000 && len(rest) > 0 && !done; i++ {
				p := []byte(rest[:min(step, len(rest))])
				e, err := f.Eat(p)
				if err != nil {
					t.Fatalf("%s/%d: Eat: %v", tc.name, step, err)
				}
				rest = rest[e:]
				p = p[e:]
				if len(p) == 0 {
					continue
				}
				m, d, err := f.Body(p)
				if err != nil {
					t.Fatalf("%s/%d: Body: %v", tc.name, step, err)
				}
				out = append(out, p[:m]...)
				rest = rest[m:]
				done = d
			}
			if !done || rest != "" {
				t.Fatalf("%s/%d: the body did not end (left %q)", tc.name, step, rest)
			}
			want := tc.repl + data[tc.k:]
			got := string(out)
			if tc.chunks != nil {
				// A valid chunked body, as a fresh framer reads it.
				var cs chunkStream
				if m, d, err := cs.feed(out); err != nil || !d || m != len(out) {
					t.Fatalf("%s/%d: %q is not one chunked body: %d %v %v", tc.name, step, out, m, d, err)
				}
				dc, err := Dechunk(nil, out)
				if err != nil {
					t.Fatalf("%s/%d: Dechunk %q: %v", tc.name, step, out, err)
				}
				got = string(dc)
			}
			if got != want {
				t.Fatalf("%s/%d: body %q, want %q", tc.name, step, got, want)
			}
		}
	}
}

// FuzzSplice checks Splice, Eat and Body together on bodies of any chunk
// sizes: whatever arrived before the collect (held), however much of the
// body the rule replaced (k) and however the rest arrives (step), the
// body that goes out reads as the replacement then the original from k.
func FuzzSplice(f *testing.F) {
	f.Add([]byte{25, 35}, uint16(40), uint16(10), uint8(3), uint8(1), true, false)
	f.Add([]byte{10, 50}, uint16(14), uint16(10), uint8(0), uint8(3), true, true)
	f.Add([]byte{60}, uint16(20), uint16(20), uint8(5), uint8(7), false, false)
	f.Fuzz(func(t *testing.T, sizes []byte, held, k uint16, repl, step uint8, chunked, response bool) {
		if len(sizes) == 0 || len(sizes) > 16 || step == 0 {
			return
		}
		var data strings.Builder
		var body strings.Builder
		for i, s := range sizes {
			if s == 0 {
				continue // a zero size would end the body
			}
			c := strings.Repeat(string(rune('a'+i%26)), int(s))
			data.WriteString(c)
			if chunked {
				body.WriteString(strconv.FormatInt(int64(len(c)), 16) + "\r\n" + c + "\r\n")
			}
		}
		if data.Len() == 0 {
			return
		}
		head := "Content-Length: " + strconv.Itoa(data.Len()) + "\r\n\r\n"
		if chunked {
			body.WriteString("0\r\n\r\n")
			head = "Transfer-Encoding: chunked\r\n\r\n"
		} else {
			body.WriteString(data.String())
		}
		all := body.String()
		h := int(held) % (len(all) + 1)
		var fr splicer
		var err error
		if response {
			rf := &ResponseFramer{Max: 16, Stream: true}
			_, _, err = rf.Frame([]byte("HTTP/1.1 200 OK\r\n" + head + all[:h]))
			fr = rf
		} else {
			rf := &RequestFramer{Max: 16, Stream: true}
			_, _, err = rf.Frame([]byte("POST / HTTP/1.1\r\nHost: h\r\n" + head + all[:h]))
			fr = rf
		}
		if !errors.Is(err, ErrStreamBody) {
			return // small enough to be framed whole, or not a stream
		}
		// The data bytes that arrived: what a rule can have collected.
		avail := h
		if chunked {
			avail = ChunkedDataLen([]byte(all[:h]))
		}
		kk := int(k) % (avail + 1)
		r := strings.Repeat("R", int(repl))
		out, n, err := fr.Splice(nil, []byte(all[:h]), kk, []byte(r))
		if err != nil {
			t.Fatalf("Splice(held %d, k %d of %d): %v", h, kk, avail, err)
		}
		rest := all[n:]
		done := rest == ""
		if done {
			if _, d, err := fr.Body(nil); err != nil || !d {
				t.Fatalf("Body(nil) after taking the whole body: %v %v", d, err)
			}
		}
		for i := 0; i < 100000 && len(rest) > 0 && !done; i++ {
			p := []byte(rest[:min(int(step), len(rest))])
			e, err := fr.Eat(p)
			if err != nil {
				t.Fatalf("Eat: %v", err)
			}
			rest, p = rest[e:], p[e:]
			if len(p) == 0 {
				continue
			}
			m, d, err := fr.Body(p)
			if err != nil {
				t.Fatalf("Body: %v", err)
			}
			out = append(out, p[:m]...)
			rest, done = rest[m:], d
		}
		if !done || rest != "" {
			t.Fatalf("the body did not end (left %q)", rest)
		}
		got := string(out)
		if chunked {
			dc, err := Dechunk(nil, out)
			if err != nil {
				t.Fatalf("Dechunk %q: %v", out, err)
			}
			got = string(dc)
		}
		if want := r + data.String()[kk:]; got != want {
			t.Fatalf("body %q, want %q (held %d, k %d)", got, want, h, kk)
		}
	})
}
