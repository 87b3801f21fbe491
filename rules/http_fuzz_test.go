package rules

import (
	"bytes"
	"slices"
	"testing"

	"github.com/openltm/openltm/dataplane/httpx"
)

// FuzzHTTPHead checks that any head httpx accepts is written back as it
// came when unedited, and still parses, with the edits visible, after
// header and target edits.
func FuzzHTTPHead(f *testing.F) {
	f.Add([]byte(testRequest), false)
	f.Add([]byte(testResponse), true)
	f.Add([]byte("GET / HTTP/1.0\n\n"), false)
	f.Add([]byte("HTTP/1.1 200\r\n\r\n"), true)
	f.Add([]byte("POST /a?b HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"), false)
	f.Fuzz(func(t *testing.T, b []byte, response bool) {
		var h HTTPHead
		if err := h.Reset(b, response); err != nil {
			return
		}
		end := h.Head().HeaderEnd
		if want := validatedFields(h.data); !slices.Equal(h.fields, want) {
			t.Fatalf("fields indexed %v, the validating walk gives %v, for %q", h.fields, want, b[:end])
		}
		if got := h.AppendTo(nil); !bytes.Equal(got, b[:end]) {
			t.Fatalf("unedited head changed:\n%q\n%q", got, b[:end])
		}
		n := h.HeaderCount("")
		h.InsertHeader("X-Fuzz", "1")
		h.RemoveHeader("cookie")
		if !response {
			h.SetQuery("q=1")
		} else {
			h.SetVersion("1.0")
		}
		out := h.AppendTo(nil)
		var h2 HTTPHead
		if err := h2.Reset(out, response); err != nil {
			t.Fatalf("edited head does not parse: %v\n%q", err, out)
		}
		if v, ok := h2.Header("x-fuzz"); !ok || string(v) != "1" {
			t.Fatalf("inserted header lost: %q", out)
		}
		if h2.HeaderCount("cookie") != 0 || h2.HeaderCount("") > n+1 {
			t.Fatalf("fields: %d before, %q after", n, out)
		}
		if !response && string(h2.Query()) != "q=1" {
			t.Fatalf("query %q in %q", h2.Query(), out)
		}
		if _, err := httpx.ParseRequest(out); !response && err != nil {
			t.Fatalf("httpx refuses %q: %v", out, err)
		}
	})
}

// validatedFields indexes the fields of head d with httpx.Fields (the
// framer's validating walk), as ResetParsed did before it indexed them
// in one pass of its own: the two must agree on every accepted head.
func validatedFields(d []byte) []hfield {
	var out []hfield
	httpx.Fields(d, len(d), func(name, value []byte, start, stop int) bool {
		vo := start + bytes.IndexByte(d[start:stop], ':') + 1
		for vo < stop && (d[vo] == ' ' || d[vo] == '\t') {
			vo++
		}
		out = append(out, hfield{
			line:  span{int32(start), int32(stop)},
			name:  span{int32(start), int32(start + len(name))},
			value: span{int32(vo), int32(vo + len(value))},
		})
		return true
	})
	return out
}

// FuzzHTTPFramingKept: whatever field a rule sets or removes, with any
// name and value, a head that says it kept its framing parses to the
// facts it arrived with.
func FuzzHTTPFramingKept(f *testing.F) {
	f.Add([]byte(testRequest), false, "X-Tag", "/a", uint8(0))
	f.Add([]byte("POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc"), false, "content-length", "", uint8(2))
	f.Add([]byte(testResponse), true, "Set-Cookie", "a=b", uint8(1))
	f.Add([]byte("GET / HTTP/1.1\r\n\r\n"), false, "X:Y", "v", uint8(0))
	f.Fuzz(func(t *testing.T, b []byte, response bool, name, value string, op uint8) {
		var h HTTPHead
		if err := h.Reset(b, response); err != nil {
			return
		}
		switch op % 3 {
		case 0:
			h.InsertHeader(name, value)
		case 1:
			h.ReplaceHeader(name, value)
		default:
			h.RemoveHeader(name)
		}
		if h.FramingKept() {
			checkFactsKept(t, &h)
		}
	})
}
