package httpcompress

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"io"
	"strings"
	"testing"
)

func TestAccepts(t *testing.T) {
	for _, c := range []struct {
		in     string
		want   Accept
		prefer Coding
		choose Coding
	}{
		{"", Accept{}, Gzip, None},
		{"gzip", Accept{1000, 0}, Gzip, Gzip},
		{"deflate", Accept{0, 1000}, Gzip, Deflate},
		{"gzip, deflate, br", Accept{1000, 1000}, Gzip, Gzip},
		{"gzip, deflate", Accept{1000, 1000}, Deflate, Deflate},
		{"br", Accept{}, Gzip, None},
		{"identity", Accept{}, Gzip, None},
		{"*", Accept{1000, 1000}, Gzip, Gzip},
		{"*;q=0", Accept{}, Gzip, None},
		{"gzip;q=0, *", Accept{0, 1000}, Gzip, Deflate},
		{"gzip;q=0.5, deflate;q=0.8", Accept{500, 800}, Gzip, Deflate},
		{"GZIP ; Q=0.25", Accept{250, 0}, Gzip, Gzip},
		{"x-gzip", Accept{1000, 0}, Deflate, Gzip},
		{"gzip;q=1.0", Accept{1000, 0}, Gzip, Gzip},
		{"gzip;q=1.5", Accept{}, Gzip, None},
		{"gzip;q=0.1234", Accept{}, Gzip, None},
		{"gzip;q=abc", Accept{}, Gzip, None},
		{"gzip;q=", Accept{}, Gzip, None},
		{"gzip;level=1", Accept{1000, 0}, Gzip, Gzip},
		{" , gzip ,, ", Accept{1000, 0}, Gzip, Gzip},
	} {
		got := Accepts([]byte(c.in))
		if got != c.want {
			t.Errorf("Accepts(%q) = %+v, want %+v", c.in, got, c.want)
		}
		if ch := got.Choose(c.prefer); ch != c.choose {
			t.Errorf("Accepts(%q).Choose(%v) = %v, want %v", c.in, c.prefer, ch, c.choose)
		}
	}
}

func TestNewRefuses(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Level: 0}, "gzip-level 0 is out of range"},
		{Config{Level: 10}, "gzip-level 10 is out of range"},
		{Config{Level: 1, MinSize: -1}, "min-size -1"},
		{Config{Level: 1, ContentTypeInclude: []string{"text/(html"}}, `content-type-include "text/(html" is not a regular expression: missing closing )`},
		{Config{Level: 1, URIExclude: []string{"*.jpg"}}, `uri-exclude "*.jpg" is not a regular expression`},
		{Config{Level: 1, CPUSaverHigh: 101, CPUSaverLow: 75}, "cpu-saver-high 101 and cpu-saver-low 75 must be percents"},
		{Config{Level: 1, CPUSaverHigh: 50, CPUSaverLow: 60}, "cpu-saver-low 60 is above cpu-saver-high 50"},
	} {
		_, err := New(c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v) = %v, want an error with %q", c.cfg, err, c.want)
		}
	}
}

func TestLists(t *testing.T) {
	p, err := New(Config{
		Level:              1,
		MinSize:            1024,
		ContentTypeInclude: []string{"text/", "application/(xml|x-javascript)"},
		ContentTypeExclude: []string{"text/csv"},
		URIExclude:         []string{`\.(jpg|png)$`, "^/raw/"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ct   string
		want bool
	}{
		{"text/html", true},
		{"Text/HTML; charset=utf-8", true},
		{"application/xml", true},
		{"application/x-javascript", true},
		{"application/json", false},
		{"image/png", false},
		{"text/csv", false},
		{"", false},
	} {
		if got := p.TypeAllowed([]byte(c.ct)); got != c.want {
			t.Errorf("TypeAllowed(%q) = %v", c.ct, got)
		}
	}
	for _, c := range []struct {
		uri  string
		want bool
	}{
		{"/index.html", true},
		{"/a/b.JPG", false},
		{"/raw/x.html", false},
		{"/x?raw/", true},
	} {
		if got := p.URIAllowed([]byte(c.uri)); got != c.want {
			t.Errorf("URIAllowed(%q) = %v", c.uri, got)
		}
	}
	all, _ := New(Config{Level: 1})
	if !all.TypeAllowed(nil) || !all.URIAllowed([]byte("/anything")) {
		t.Error("empty include lists must include everything")
	}
	for _, c := range []struct {
		f         ResponseFacts
		comp, all bool
	}{
		{ResponseFacts{Status: 200, ContentLength: 5000, ContentType: []byte("text/html")}, true, true},
		{ResponseFacts{Status: 200, ContentLength: -1, ContentType: []byte("text/html")}, true, true},
		{ResponseFacts{Status: 200, ContentLength: 100, ContentType: []byte("text/html")}, true, false},
		{ResponseFacts{Status: 200, ContentLength: 0, ContentType: []byte("text/html")}, false, false},
		{ResponseFacts{Status: 404, ContentLength: 5000, ContentType: []byte("text/html")}, true, true},
		{ResponseFacts{Status: 206, ContentLength: 5000, ContentType: []byte("text/html")}, false, true},
		{ResponseFacts{Status: 302, ContentLength: 5000, ContentType: []byte("text/html")}, false, true},
		{ResponseFacts{Status: 200, ContentLength: 5000, ContentType: []byte("text/html"), ContentEncoding: []byte("gzip")}, false, true},
		{ResponseFacts{Status: 200, ContentLength: 5000, ContentType: []byte("text/html"), ContentEncoding: []byte("identity")}, true, true},
		{ResponseFacts{Status: 200, ContentLength: 5000, ContentType: []byte("text/html"), CacheControl: []byte("public, No-Transform")}, false, true},
		{ResponseFacts{Status: 200, ContentLength: 5000, ContentType: []byte("text/html"), CacheControl: []byte("max-age=60")}, true, true},
		{ResponseFacts{Status: 200, ContentLength: 5000, ContentType: []byte("text/html"), ContentRange: []byte("bytes 0-10/20")}, false, true},
		{ResponseFacts{Status: 200, ContentLength: 5000, ContentType: []byte("image/png")}, true, false},
	} {
		if got := Compressible(&c.f); got != c.comp {
			t.Errorf("Compressible(%+v) = %v", c.f, got)
		}
		if got := p.ResponseAllowed(&c.f); got != c.all {
			t.Errorf("ResponseAllowed(%+v) = %v", c.f, got)
		}
	}
}

// decode undoes a coding with the standard library's readers, which are
// what a client would use.
func decode(t *testing.T, c Coding, b []byte) []byte {
	t.Helper()
	out, err := decodeAll(t, c, b)
	if err != nil {
		t.Fatalf("%v: %v", c, err)
	}
	return out
}

// decodePrefix decodes as much as an unfinished stream gives (the
// reader then reports io.ErrUnexpectedEOF).
func decodePrefix(t *testing.T, c Coding, b []byte) []byte {
	t.Helper()
	out, _ := decodeAll(t, c, b)
	return out
}

func decodeAll(t *testing.T, c Coding, b []byte) ([]byte, error) {
	t.Helper()
	var r io.Reader
	var err error
	if c == Gzip {
		r, err = gzip.NewReader(bytes.NewReader(b))
	} else {
		r, err = zlib.NewReader(bytes.NewReader(b))
	}
	if err != nil {
		t.Fatalf("%v: %v", c, err)
	}
	return io.ReadAll(r)
}

func TestEncoder(t *testing.T) {
	page := bytes.Repeat([]byte("<p>openltm compresses what it is asked to.</p>\n"), 400)
	for _, c := range []Coding{Gzip, Deflate} {
		for _, level := range []int{1, 6, 9} {
			e := NewEncoder(c, level)
			if e.Coding() != c {
				t.Fatalf("coding %v, want %v", e.Coding(), c)
			}
			whole := e.Whole([]byte("prefix"), page)
			if !bytes.HasPrefix(whole, []byte("prefix")) {
				t.Fatal("Whole must append to dst")
			}
			whole = whole[len("prefix"):]
			if got := decode(t, c, whole); !bytes.Equal(got, page) {
				t.Fatalf("%v level %d: the round trip differs", c, level)
			}
			if len(whole) > len(page)/5 {
				t.Errorf("%v level %d: %d bytes from %d", c, level, len(whole), len(page))
			}
			// In parts, each flushed: what has come out so far decodes
			// to what went in so far (a slow stream is not held back).
			e = NewEncoder(c, level) // from the pool again
			var out []byte
			for i := 0; i < len(page); i += 1000 {
				out = e.Write(out, page[i:min(i+1000, len(page))], true)
				got := decodePrefix(t, c, out)
				if !bytes.Equal(got, page[:min(i+1000, len(page))]) {
					t.Fatalf("%v level %d: after %d bytes the flushed output gives %d", c, level, i+1000, len(got))
				}
			}
			out = e.Close(out)
			if got := decode(t, c, out); !bytes.Equal(got, page) {
				t.Fatalf("%v level %d: the parts' round trip differs", c, level)
			}
		}
	}
	// An empty body still makes a valid stream.
	e := NewEncoder(Gzip, 1)
	if got := decode(t, Gzip, e.Whole(nil, nil)); len(got) != 0 {
		t.Fatalf("empty body gave %q", got)
	}
}

func BenchmarkEncoder(b *testing.B) {
	page := bytes.Repeat([]byte("<tr><td>member</td><td>127.0.0.1:8080</td><td>up</td></tr>\n"), 280) // ~16 KiB
	var out []byte
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		out = NewEncoder(Gzip, 1).Whole(out[:0], page)
	}
	b.ReportMetric(float64(len(out))/float64(len(page)), "ratio")
}
