package rules

import (
	"strconv"

	"github.com/openltm/openltm/rules/tcl"
)

// The xml profile's rule side. XML_CONTENT_BASED_ROUTING runs over a
// request whose XML body matched the profile's XPath queries, with the
// variables F5 gives it: XML_count (how many queries matched),
// XML_queries(i) and XML_values(i) for i from 0 (the query and the value
// it selected). XML::payload reads and edits the document in that event;
// XML::disable and XML::enable turn the profile off and on for the
// connection's requests.
//
// The profile's parser events (XML_BEGIN_DOCUMENT ... XML_EVENT) and the
// commands that read them are in commands_xml_events.go.

// XMLState is a connection's xml profile state.
type XMLState struct {
	// off: XML::disable turned the profile off for the connection.
	off bool
	// doc is the document of the running XML_CONTENT_BASED_ROUTING (nil
	// outside it); replaced says XML::payload replace changed it.
	doc      []byte
	replaced bool
	inEvent  bool
	// node is the parser event at hand (commands_xml_events.go), nil
	// outside the parser events.
	node *XMLNode
}

func (s *ConnState) xmlState() *XMLState {
	if s.xml == nil {
		s.xml = &XMLState{}
	}
	return s.xml
}

// XMLDisabled reports whether XML::disable turned the xml profile off
// for the connection (and no XML::enable turned it on again).
func (s *ConnState) XMLDisabled() bool { return s.xml != nil && s.xml.off }

// BeginXML readies XML_CONTENT_BASED_ROUTING over doc: XML_count,
// XML_queries and XML_values are set from queries and values (one
// entry per match, in order), replacing those of an earlier request.
func (s *ConnState) BeginXML(doc []byte, queries, values []string) error {
	x := s.xmlState()
	x.doc, x.replaced, x.inEvent = doc, false, true
	_ = s.in.UnsetVar("XML_queries")
	_ = s.in.UnsetVar("XML_values")
	if _, err := s.in.SetVar("XML_count", tcl.Int(int64(len(queries)))); err != nil {
		return err
	}
	for i := range queries {
		k := strconv.Itoa(i)
		if _, err := s.in.SetVar("XML_queries("+k+")", tcl.Str(queries[i])); err != nil {
			return err
		}
		if _, err := s.in.SetVar("XML_values("+k+")", tcl.Str(values[i])); err != nil {
			return err
		}
	}
	return nil
}

// EndXML ends the event BeginXML readied: doc is the document as the
// rules left it, replaced whether XML::payload replace changed it.
func (s *ConnState) EndXML() (doc []byte, replaced bool) {
	x := s.xmlState()
	doc, replaced = x.doc, x.replaced
	x.doc, x.replaced, x.inEvent = nil, false, false
	return doc, replaced
}

func registerXML(t *tcl.Commands) {
	t.Register("XML::enable", cmdXMLSwitch(false))
	t.Register("XML::disable", cmdXMLSwitch(true))
	t.Register("XML::payload", cmdXMLPayload)
}

// cmdXMLSwitch is XML::disable (off) and XML::enable: the xml profile
// stops (starts again) parsing the connection's request bodies, the
// request at hand included when its body is not parsed yet [M: F5 says
// only that disable turns the XML filter to passthrough].
func cmdXMLSwitch(off bool) tcl.CmdFunc {
	name := "XML::enable"
	if off {
		name = "XML::disable"
	}
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 1 {
			return tcl.Empty, tcl.WrongArgs(name)
		}
		s := sessionOf(in)
		if s == nil {
			return tcl.Empty, tcl.Errorf("%s: no connection", name)
		}
		s.xmlState().off = off
		return tcl.Empty, nil
	}
}

// cmdXMLPayload is `XML::payload ?length? | offset length | length |
// replace offset length data` over the document of
// XML_CONTENT_BASED_ROUTING; a replaced document goes to the member in
// the request's place, with its new Content-Length.
func cmdXMLPayload(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const name = "XML::payload"
	s := sessionOf(in)
	if s == nil || s.xml == nil || !s.xml.inEvent {
		return tcl.Empty, tcl.Errorf("%s works in XML_CONTENT_BASED_ROUTING", name)
	}
	x := s.xml
	data := x.doc
	a := args[1:]
	if len(a) == 0 {
		return tcl.Bytes(data), nil
	}
	if a[0].String() == "length" && len(a) == 1 {
		return tcl.Int(int64(len(data))), nil
	}
	if a[0].String() == "replace" {
		if len(a) != 4 {
			return tcl.Empty, tcl.WrongArgs(name + " replace offset length data")
		}
		off, err1 := a[1].Int64()
		n, err2 := a[2].Int64()
		if err1 != nil || err2 != nil || off < 0 || n < 0 || off > int64(len(data)) {
			return tcl.Empty, tcl.Errorf("%s replace: bad offset or length (the document is %d bytes)", name, len(data))
		}
		n = min(n, int64(len(data))-off)
		repl := tcl.BytesOf(a[3])
		out := make([]byte, 0, len(data)-int(n)+len(repl))
		out = append(out, data[:off]...)
		out = append(out, repl...)
		out = append(out, data[off+n:]...)
		x.doc, x.replaced = out, true
		return tcl.Empty, nil
	}
	var off, size int64
	var err error
	switch len(a) {
	case 1:
		size, err = a[0].Int64()
	case 2:
		off, err = a[0].Int64()
		if err == nil {
			size, err = a[1].Int64()
		}
	default:
		return tcl.Empty, tcl.WrongArgs(name + " ?offset? ?length? | length | replace offset length data")
	}
	if err != nil || off < 0 || size < 0 {
		return tcl.Empty, tcl.Errorf("%s: expected length, offset length, \"length\" or \"replace\"", name)
	}
	if off >= int64(len(data)) {
		return tcl.Empty, nil
	}
	end := len(data)
	if size < int64(len(data))-off {
		end = int(off + size)
	}
	return tcl.Bytes(data[off:end]), nil
}
