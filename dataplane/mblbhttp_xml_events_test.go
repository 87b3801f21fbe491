package dataplane

import (
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/unicode"

	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/xmlcbr"
)

// startXMLEventsServer answers each request with its label and the
// headers the rule inserted: label|X-City|X-City-At|X-Trace|body length.
func startXMLEventsServer(t *testing.T, addr, label string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		io.WriteString(w, strings.Join([]string{label, r.Header.Get("X-City"), r.Header.Get("X-City-At"),
			strings.TrimSpace(r.Header.Get("X-Trace")), strings.Repeat("#", min(len(b), 3))}, "|"))
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

const xmlEventsRule = `
when HTTP_REQUEST {
    pool /Common/pool
    set trace ""
}
when XML_BEGIN_ELEMENT {
    if { [XML::element] eq "stop" } { HTTP::respond 403 content "stopped at [XML::address]" }
}
when XML_CDATA {
    if { [XML::element] eq "city" } {
        HTTP::header insert X-City [XML::element text]
        HTTP::header insert X-City-At [XML::address]
        if { [XML::element text] eq "Zürich" } { pool /Common/zurich }
    }
}
when XML_EVENT { append trace "[XML::event] " }
when XML_END_DOCUMENT { HTTP::header insert X-Trace $trace }
`

// TestHTTPXMLParserEvents: curl posts XML documents in several
// encodings to an http virtual with an xml profile; the parser events
// run over each in document order, XML::element and XML::address read
// the element, a pool picked there is where the request goes, and
// HTTP::respond there answers the client. A body that is not a
// well-formed document raises no event and goes on unchanged.
func TestHTTPXMLParserEvents(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl is not installed")
	}
	const vs, general, zurich = "127.164.0.10:80", "127.164.0.11:80", "127.164.0.12:80"
	startXMLEventsServer(t, general, "general")
	startXMLEventsServer(t, zurich, "zurich")
	prof, err := xmlcbr.Compile("/Common/xml", nil, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	cfg := mblbConfig(vs, &MBLB{Request: mblb.Framing{Mode: mblb.HTTP, HTTP: mblb.HTTPOptions{XML: prof}}}, general)
	za := ap(zurich)
	cfg.Pools["/Common/zurich"] = &Pool{Name: "/Common/zurich", LBMode: RoundRobin,
		Members: []Member{{Node: "/Common/" + za.Addr().String(), Addr: za}}}
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, xmlEventsRule)
	p, _ := newPlane(t)
	mustApply(t, p, cfg)

	enc := func(e encoding.Encoding, s string) []byte {
		b, err := e.NewEncoder().Bytes([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// (XML_EVENT runs after XML_END_DOCUMENT, which sent the trace on.)
	const trace = "BEGIN_DOCUMENT BEGIN_ELEMENT BEGIN_ELEMENT CDATA END_ELEMENT END_ELEMENT"
	doc := func(label string) string {
		return `<?xml version="1.0" encoding="` + label + `"?>` + "\n<order>\n  <city>Zürich</city>\n</order>\n"
	}
	dir := t.TempDir()
	for _, c := range []struct {
		name  string
		body  []byte
		code  string
		reply string
	}{
		{"UTF-8", []byte(doc("UTF-8")), "200", "zurich|Zürich|/order/city|" + trace + "|###"},
		{"ISO-8859-1", enc(charmap.ISO8859_1, doc("ISO-8859-1")), "200", "zurich|Zürich|/order/city|" + trace + "|###"},
		{"UTF-16LE with a BOM", enc(unicode.UTF16(unicode.LittleEndian, unicode.UseBOM), doc("UTF-16")), "200", "zurich|Zürich|/order/city|" + trace + "|###"},
		{"UTF-16BE without a BOM", enc(unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM), doc("UTF-16BE")), "200", "zurich|Zürich|/order/city|" + trace + "|###"},
		{"Shift_JIS", enc(japanese.ShiftJIS, `<?xml version="1.0" encoding="Shift_JIS"?><order><city>東京</city></order>`), "200", "general|東京|/order/city|" + trace + "|###"},
		{"second city", []byte("<order><city/><city>Zürich</city></order>"), "200",
			"zurich|Zürich|/order/city[2]|BEGIN_DOCUMENT BEGIN_ELEMENT BEGIN_ELEMENT END_ELEMENT BEGIN_ELEMENT CDATA END_ELEMENT END_ELEMENT|###"},
		{"answered in the walk", []byte("<order><items><stop/></items><city>Zürich</city></order>"), "403", "stopped at /order/items/stop"},
		{"malformed", []byte("<order><city>Zürich</order>"), "200", "general||||###"},
		{"unknown encoding", []byte(doc("x-nothing")), "200", "general||||###"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".xml")
			if err := os.WriteFile(f, c.body, 0o600); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(curl, "-sS", "--max-time", "20", "-o", "-", "-w", "\n%{http_code}",
				"-H", "Content-Type: text/xml", "--data-binary", "@"+f, "http://"+vs+"/").CombinedOutput()
			if err != nil {
				t.Fatalf("curl: %v\n%s", err, out)
			}
			s := string(out)
			nl := strings.LastIndexByte(s, '\n')
			if got, code := s[:nl], s[nl+1:]; code != c.code || got != c.reply {
				t.Fatalf("answer %s %q, want %s %q", code, got, c.code, c.reply)
			}
		})
	}
}

// TestHTTPXMLParserEventsOff: a virtual with an xml profile whose rules
// handle none of its events parses nothing (the request goes on as it
// came, to the virtual's pool).
func TestHTTPXMLParserEventsOff(t *testing.T) {
	const vs, general = "127.164.0.20:80", "127.164.0.21:80"
	startXMLEventsServer(t, general, "general")
	prof, err := xmlcbr.Compile("/Common/xml", nil, []string{"//city"}, false)
	if err != nil {
		t.Fatal(err)
	}
	cfg := mblbConfig(vs, &MBLB{Request: mblb.Framing{Mode: mblb.HTTP, HTTP: mblb.HTTPOptions{XML: prof}}}, general)
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `when HTTP_REQUEST { HTTP::header insert X-City none }`)
	p, _ := newPlane(t)
	mustApply(t, p, cfg)
	cl := &http.Client{Timeout: 20 * time.Second}
	defer cl.CloseIdleConnections()
	resp, err := cl.Post("http://"+vs+"/", "text/xml", strings.NewReader("<order><city>Zürich</city></order>"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "general|none|||###" {
		t.Fatalf("answer %q", b)
	}
}

// TestHTTPXMLEncodingsRouted: XML_CONTENT_BASED_ROUTING routes a
// document by the value its query selected whatever the encoding it
// came in (ISO-8859-1, UTF-16 with and without a byte order mark).
func TestHTTPXMLEncodingsRouted(t *testing.T) {
	const vs, general, zurich = "127.164.0.30:80", "127.164.0.31:80", "127.164.0.32:80"
	startXMLEventsServer(t, general, "general")
	startXMLEventsServer(t, zurich, "zurich")
	prof, err := xmlcbr.Compile("/Common/xml", nil, []string{"//city"}, false)
	if err != nil {
		t.Fatal(err)
	}
	cfg := mblbConfig(vs, &MBLB{Request: mblb.Framing{Mode: mblb.HTTP, HTTP: mblb.HTTPOptions{XML: prof}}}, general)
	za := ap(zurich)
	cfg.Pools["/Common/zurich"] = &Pool{Name: "/Common/zurich", LBMode: RoundRobin,
		Members: []Member{{Node: "/Common/" + za.Addr().String(), Addr: za}}}
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `
when HTTP_REQUEST { pool /Common/pool }
when XML_CONTENT_BASED_ROUTING {
    HTTP::header insert X-City $XML_values(0)
    if { $XML_values(0) eq "Zürich" } { pool /Common/zurich }
}`)
	p, _ := newPlane(t)
	mustApply(t, p, cfg)
	enc := func(e encoding.Encoding, s string) string {
		b, err := e.NewEncoder().Bytes([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	doc := func(label string) string {
		return `<?xml version="1.0" encoding="` + label + `"?><order><city>Zürich</city></order>`
	}
	cl := &http.Client{Timeout: 20 * time.Second}
	defer cl.CloseIdleConnections()
	for name, body := range map[string]string{
		"ISO-8859-1":             enc(charmap.ISO8859_1, doc("ISO-8859-1")),
		"windows-1252":           enc(charmap.Windows1252, doc("windows-1252")),
		"UTF-16BE with a BOM":    enc(unicode.UTF16(unicode.BigEndian, unicode.UseBOM), doc("UTF-16")),
		"UTF-16LE without a BOM": enc(unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM), doc("UTF-16LE")),
	} {
		t.Run(name, func(t *testing.T) {
			resp, err := cl.Post("http://"+vs+"/", "application/xml", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(b) != "zurich|Zürich|||###" {
				t.Fatalf("answer %q", b)
			}
		})
	}
}

// TestHTTPEventStreamPassesThrough: a member's text/event-stream
// response reaches the client through an http virtual event by event,
// as the member sends it (the member holds its second event until the
// client has read the first), unchanged: openltm has no sse profile, so
// SSE_RESPONSE never runs over it.
func TestHTTPEventStreamPassesThrough(t *testing.T) {
	const vs, member = "127.164.0.40:80", "127.164.0.41:80"
	gotFirst := make(chan struct{})
	ln, err := net.Listen("tcp", member)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		io.WriteString(w, "id: 1\nevent: tick\ndata: one\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-gotFirst:
		case <-time.After(20 * time.Second):
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, ": comment\ndata: two\ndata: lines\n\n")
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	cfg := mblbConfig(vs, &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}, member)
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `when HTTP_RESPONSE { HTTP::header insert X-Seen 1 }`)
	p, _ := newPlane(t)
	mustApply(t, p, cfg)

	cl := &http.Client{Timeout: 30 * time.Second}
	defer cl.CloseIdleConnections()
	req, _ := http.NewRequest("GET", "http://"+vs+"/events", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := cl.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Content-Type") != "text/event-stream" || resp.Header.Get("X-Seen") != "1" {
		t.Fatalf("headers %v", resp.Header)
	}
	first := "id: 1\nevent: tick\ndata: one\n\n"
	buf := make([]byte, len(first))
	if _, err := io.ReadFull(resp.Body, buf); err != nil || string(buf) != first {
		t.Fatalf("first event %q, %v", buf, err)
	}
	close(gotFirst)
	rest, err := io.ReadAll(resp.Body)
	if err != nil || string(rest) != ": comment\ndata: two\ndata: lines\n\n" {
		t.Fatalf("rest %q, %v", rest, err)
	}
}
