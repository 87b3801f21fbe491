package rules

import (
	"strings"
	"testing"
)

// TestXMLEvent: XML_CONTENT_BASED_ROUTING sees XML_count, XML_queries
// and XML_values for the request at hand (an earlier request's entries
// gone), and XML::payload reads and replaces its document.
func TestXMLEvent(t *testing.T) {
	const doc = `<a><b>x</b></a>`
	cases := []struct {
		name, body string
		queries    []string
		values     []string
		log        string
		out        string // the document after the rule ("": unchanged)
		err        string
	}{
		{name: "variables", queries: []string{"//b", "/a"}, values: []string{"x", "x"},
			body: `set l {}; for {set i 0} {$i < $XML_count} {incr i} { lappend l $XML_queries($i)=$XML_values($i) }; log local0. $l`, log: "//b=x /a=x"},
		{name: "earlier entries gone", queries: []string{"//b"}, values: []string{"x"},
			body: `log local0. "$XML_count [info exists XML_queries(1)] [array size XML_values]"`, log: "1 0 1"},
		{name: "payload", queries: []string{"//b"}, values: []string{"x"},
			body: `log local0. "[XML::payload] [XML::payload length] [XML::payload 3] [XML::payload 3 4] [XML::payload 99 1]|"`, log: "<a><b>x</b></a> 15 <a> <b>x |"},
		{name: "payload replace", queries: []string{"//b"}, values: []string{"x"},
			body: `XML::payload replace 6 1 yz`, out: `<a><b>yz</b></a>`},
		{name: "payload replace past the end", queries: []string{"//b"}, values: []string{"x"},
			body: `XML::payload replace 11 99 {/a>}`, out: `<a><b>x</b></a>`[:11] + "/a>"},
		{name: "bad replace", queries: []string{"//b"}, values: []string{"x"},
			body: `XML::payload replace 99 1 z`, err: "bad offset or length"},
		{name: "bad form", queries: []string{"//b"}, values: []string{"x"},
			body: `XML::payload a b c`, err: "wrong # args"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := mustCompile(t, "xml", "when XML_CONTENT_BASED_ROUTING { "+c.body+" }")
			if u := r.Unsupported(); len(u) > 0 {
				t.Fatalf("refused as not implemented: %v", u)
			}
			var logged []string
			p := NewProgram(&Env{Log: func(_, l string) { logged = append(logged, l) }}, r)
			s := p.NewConnState(newFakeConn())
			defer s.Release()
			// An earlier request with more matches.
			if err := s.BeginXML([]byte("<z/>"), []string{"/z", "//z", "z"}, []string{"", "", ""}); err != nil {
				t.Fatal(err)
			}
			s.EndXML()
			if err := s.BeginXML([]byte(doc), c.queries, c.values); err != nil {
				t.Fatal(err)
			}
			err := s.Run(XMLContentBasedRouting)
			got, replaced := s.EndXML()
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				if replaced {
					t.Fatal("document replaced by a failed command")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.log != "" && (len(logged) == 0 || !strings.HasSuffix(logged[len(logged)-1], ">: "+c.log)) {
				t.Fatalf("logged %q, want %q", logged, c.log)
			}
			if c.out == "" {
				if replaced {
					t.Fatalf("document replaced: %s", got)
				}
				return
			}
			if !replaced || string(got) != c.out {
				t.Fatalf("document %q (replaced %v), want %q", got, replaced, c.out)
			}
		})
	}
}

// TestXMLSwitch: XML::disable and XML::enable turn the profile off and
// on for the connection; XML::payload outside the event is an error.
func TestXMLSwitch(t *testing.T) {
	r := mustCompile(t, "xml", `when CLIENT_ACCEPTED { XML::disable }
when CLIENT_DATA { XML::enable }
when CLIENT_CLOSED { XML::payload }`)
	p := NewProgram(&Env{}, r)
	s := p.NewConnState(newFakeConn())
	defer s.Release()
	if s.XMLDisabled() {
		t.Fatal("disabled before any rule ran")
	}
	if err := s.Run(ClientAccepted); err != nil || !s.XMLDisabled() {
		t.Fatalf("XML::disable: %v, disabled %v", err, s.XMLDisabled())
	}
	if err := s.Run(ClientData); err != nil || s.XMLDisabled() {
		t.Fatalf("XML::enable: %v, disabled %v", err, s.XMLDisabled())
	}
	if err := s.Run(ClientClosed); err == nil || !strings.Contains(err.Error(), "works in XML_CONTENT_BASED_ROUTING") {
		t.Fatalf("XML::payload outside the event: %v", err)
	}
}

// TestXMLNeeds: XML_CONTENT_BASED_ROUTING and the parser events need an
// xml profile.
func TestXMLNeeds(t *testing.T) {
	r := mustCompile(t, "xml", "when HTTP_REQUEST { }\nwhen XML_CONTENT_BASED_ROUTING { pool p }\nwhen XML_BEGIN_ELEMENT { }\nwhen XML_EVENT { }")
	n := r.XMLNeeds()
	if len(n) != 3 || n[0].Name != "XML_CONTENT_BASED_ROUTING" || n[0].Line != 2 || n[1].Name != "XML_BEGIN_ELEMENT" || n[2].Name != "XML_EVENT" || n[2].Line != 4 {
		t.Fatalf("XMLNeeds = %+v", n)
	}
}
