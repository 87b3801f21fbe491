package rules

import (
	"encoding/xml"
	"errors"
	"strings"
	"testing"
)

// TestXMLParserEvents: each parser event runs its own handler, then
// XML_EVENT, and XML::event, XML::element and XML::address read the node
// at hand.
func TestXMLParserEvents(t *testing.T) {
	attrs := []xml.Attr{{Name: xml.Name{Local: "id"}, Value: "7"}, {Name: xml.Name{Space: "x", Local: "k"}, Value: "a b"}}
	nodes := []XMLNode{
		{Event: XMLBeginDocument},
		{Event: XMLBeginElement, Name: "s:Order", Path: "/s:Order", Depth: 1, Attrs: attrs},
		{Event: XMLCData, Name: "s:Order", Path: "/s:Order", Depth: 1, Text: "Zürich"},
		{Event: XMLEndElement, Name: "s:Order", Path: "/s:Order", Depth: 1},
		{Event: XMLEndDocument},
	}
	for _, c := range []struct {
		name, rule string
		log        []string
		err        string
	}{
		{name: "own events",
			rule: `when XML_BEGIN_DOCUMENT { log local0. "doc [XML::event]" }
when XML_BEGIN_ELEMENT { log local0. "begin [XML::element] [XML::address] [XML::element depth] [XML::element attribute id]|[XML::element attribute x:k]|[XML::element attribute none]|[XML::element attributes]" }
when XML_CDATA { log local0. "text [XML::element] [XML::element text]" }
when XML_END_ELEMENT { log local0. "end [XML::element name] [XML::event]" }
when XML_END_DOCUMENT { log local0. "done" }`,
			log: []string{"doc BEGIN_DOCUMENT", "begin s:Order /s:Order 1 7|a b||id 7 x:k {a b}", "text s:Order Zürich", "end s:Order END_ELEMENT", "done"}},
		{name: "XML_EVENT after each",
			rule: `when XML_BEGIN_ELEMENT { log local0. "own" }
when XML_EVENT { log local0. "all [XML::event] [XML::element]" }`,
			log: []string{"all BEGIN_DOCUMENT ", "own", "all BEGIN_ELEMENT s:Order", "all CDATA s:Order", "all END_ELEMENT s:Order", "all END_DOCUMENT "}},
		{name: "bad form", rule: `when XML_BEGIN_ELEMENT { XML::element bogus }`, err: "wrong # args"},
		{name: "event takes no argument", rule: `when XML_BEGIN_ELEMENT { XML::event x }`, err: "wrong # args"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := mustCompile(t, "xmlev", c.rule)
			if u := r.Unsupported(); len(u) > 0 {
				t.Fatalf("refused as not implemented: %v", u)
			}
			var logged []string
			p := NewProgram(&Env{Log: func(_, l string) { logged = append(logged, l[strings.Index(l, ">: ")+3:]) }}, r)
			s := p.NewConnState(newFakeConn())
			defer s.Release()
			var err error
			for i := range nodes {
				s.SetXMLNode(&nodes[i])
				if err = s.Run(nodes[i].Event); err == nil {
					err = s.Run(XMLEvent)
				}
				s.SetXMLNode(nil)
				if err != nil {
					break
				}
			}
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(logged, "\n") != strings.Join(c.log, "\n") {
				t.Fatalf("logged\n%s\nwant\n%s", strings.Join(logged, "\n"), strings.Join(c.log, "\n"))
			}
		})
	}
}

// TestXMLParserCommandsOutside: the reading commands fail outside the
// parser events.
func TestXMLParserCommandsOutside(t *testing.T) {
	for _, cmd := range []string{"XML::event", "XML::element", "XML::address"} {
		r := mustCompile(t, "out", "when HTTP_REQUEST { "+cmd+" }")
		p := NewProgram(&Env{}, r)
		s := p.NewConnState(newFakeConn())
		err := s.Run(HTTPRequest)
		s.Release()
		if err == nil || !strings.Contains(err.Error(), "works in the xml profile's parser events") {
			t.Fatalf("%s: %v", cmd, err)
		}
	}
}

// TestXMLUnsupported: BIG-IP 9's undocumented XML:: controls load with a
// warning that says why.
func TestXMLUnsupported(t *testing.T) {
	for _, c := range []struct{ rule, name, why string }{
		{"when XML_BEGIN_ELEMENT { XML::subscribe x }", "XML::subscribe", "event subscriptions"},
		{"when XML_BEGIN_ELEMENT { XML::collect }", "XML::collect", "buffering control"},
	} {
		r, err := Compile("u", c.rule)
		var ue *UnsupportedError
		if r == nil || !errors.As(err, &ue) {
			t.Fatalf("%s: rule %v, error %v", c.name, r, err)
		}
		u := r.Unsupported()
		if len(u) != 1 || !strings.HasPrefix(u[0], c.name) || !strings.Contains(u[0], c.why) {
			t.Fatalf("%s: unsupported %+v", c.name, u)
		}
	}
}
