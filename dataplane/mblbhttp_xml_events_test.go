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
