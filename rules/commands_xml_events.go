package rules

import (
	"encoding/xml"

	"github.com/openltm/openltm/rules/tcl"
)

// The xml profile's parser events. F5's vocabulary has the events
// XML_BEGIN_DOCUMENT, XML_BEGIN_ELEMENT, XML_CDATA, XML_END_ELEMENT,
// XML_END_DOCUMENT and XML_EVENT and the commands XML::address,
// XML::collect, XML::element, XML::event, XML::eventid, XML::parse,
// XML::release, XML::soap and XML::subscribe from BIG-IP 9's xml profile,
// but documents none of them past its name (later versions list them as
// deprecated, 17.5 as unavailable). openltm runs the events and gives the
// three reading commands a meaning a rule's author would expect of a
// streaming parser [M]:
//
//   - the events run over a request's XML document (the one the xml
//     profile would route on), after HTTP_REQUEST and HTTP_REQUEST_DATA
//     and before XML_CONTENT_BASED_ROUTING, in document order:
//     XML_BEGIN_DOCUMENT once, XML_BEGIN_ELEMENT at each start tag (an
//     empty element's too), XML_CDATA over each run of its character
//     data that is not white space alone, XML_END_ELEMENT at each end
//     tag, XML_END_DOCUMENT once; XML_EVENT after each of them. There is
//     no profile setting to ask for them (none is documented): a rule
//     that handles one is the asking;
//   - XML::event is the name of the parser event at hand (BEGIN_DOCUMENT,
//     BEGIN_ELEMENT, CDATA, END_ELEMENT, END_DOCUMENT), the same in
//     XML_EVENT as in the event itself;
//   - XML::element is the element at hand: its name as the document
//     writes it (prefix:local), `XML::element attribute NAME` one of its
//     attributes (empty when it has none of that name),
//     `XML::element attributes` all of them as a name value list (start
//     tags only), `XML::element depth` its depth (1 for the root) and
//     `XML::element text` the character data of XML_CDATA;
//   - XML::address is the element's address: its path of names from the
//     root, with the position among same-named siblings past the first
//     (/Envelope/Body/Item[2]), an XPath a query could select it by.
//
// A pool or node a rule picks there is where the request goes (a later
// pick wins, XML_CONTENT_BASED_ROUTING's among them); HTTP::respond,
// reject or drop there decide the request and end the walk.
// XML::collect, XML::eventid, XML::parse, XML::release, XML::soap and
// XML::subscribe (buffering, subscription and SOAP controls F5 never
// described) are kept with a warning.

// IsXMLParser reports one of the xml profile's parser events.
func (e Event) IsXMLParser() bool { return e >= XMLBeginDocument && e <= XMLEvent }

// XMLNode is the parser event an xml profile's event runs over.
type XMLNode struct {
	// Event is the event's own (XMLBeginDocument ... XMLEndDocument).
	Event Event
	// Name, Path and Depth are the element's (none for the document's
	// events); Attrs its attributes, at a start tag; Text the
	// character data, XMLCData only.
	Name, Path, Text string
	Depth            int
	Attrs            []xml.Attr
}

// SetXMLNode readies the parser event n for the xml profile's events:
// the caller runs n.Event, then XML_EVENT, each when the rules handle
// it, and clears it with SetXMLNode(nil). The commands read n in
// between.
func (s *ConnState) SetXMLNode(n *XMLNode) { s.xmlState().node = n }

// xmlUnsupported are BIG-IP 9's XML:: commands openltm keeps with a
// warning.
var xmlUnsupported = map[string]string{
	"XML::collect":   "F5 documents nothing of BIG-IP 9's XML buffering control but its name",
	"XML::release":   "F5 documents nothing of BIG-IP 9's XML buffering control but its name",
	"XML::eventid":   "F5 documents nothing of BIG-IP 9's XML event subscriptions but their names",
	"XML::subscribe": "F5 documents nothing of BIG-IP 9's XML event subscriptions but their names",
	"XML::parse":     "F5 documents nothing of BIG-IP 9's XML::parse but its name; the xml profile parses each XML request by itself",
	"XML::soap":      "F5 documents nothing of BIG-IP 9's XML::soap but its name",
}

func registerXMLEvents(t *tcl.Commands) {
	t.Register("XML::event", cmdXMLEvent)
	t.Register("XML::element", cmdXMLElement)
	t.Register("XML::address", cmdXMLAddress)
	registerUnsupported(t, xmlUnsupported)
}

// xmlNodeOf is the parser event at hand, or the error of a command run
// outside the xml profile's parser events.
func xmlNodeOf(in *tcl.Interp, name string) (*XMLNode, error) {
	s := sessionOf(in)
	if s == nil || s.xml == nil || s.xml.node == nil {
		return nil, tcl.Errorf("%s works in the xml profile's parser events (XML_BEGIN_DOCUMENT ... XML_EVENT)", name)
	}
	return s.xml.node, nil
}

var xmlNodeNames = [...]string{"BEGIN_DOCUMENT", "BEGIN_ELEMENT", "CDATA", "END_ELEMENT", "END_DOCUMENT"}

// cmdXMLEvent is XML::event: the parser event's name.
func cmdXMLEvent(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs("XML::event")
	}
	n, err := xmlNodeOf(in, "XML::event")
	if err != nil {
		return tcl.Empty, err
	}
	return tcl.Str(xmlNodeNames[n.Event-XMLBeginDocument]), nil
}

const xmlElementUsage = "XML::element ?name? | attribute NAME | attributes | depth | text"

// cmdXMLElement is XML::element over the element at hand.
func cmdXMLElement(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	n, err := xmlNodeOf(in, "XML::element")
	if err != nil {
		return tcl.Empty, err
	}
	if len(args) == 1 {
		return tcl.Str(n.Name), nil
	}
	switch op := args[1].String(); {
	case op == "name" && len(args) == 2:
		return tcl.Str(n.Name), nil
	case op == "depth" && len(args) == 2:
		return tcl.Int(int64(n.Depth)), nil
	case op == "text" && len(args) == 2:
		return tcl.Str(n.Text), nil
	case op == "attributes" && len(args) == 2:
		l := make([]tcl.Value, 0, 2*len(n.Attrs))
		for _, a := range n.Attrs {
			l = append(l, tcl.Str(attrName(a.Name)), tcl.Str(a.Value))
		}
		return tcl.List(l...), nil
	case op == "attribute" && len(args) == 3:
		want := args[2].String()
		for _, a := range n.Attrs {
			if attrName(a.Name) == want {
				return tcl.Str(a.Value), nil
			}
		}
		return tcl.Empty, nil
	}
	return tcl.Empty, tcl.WrongArgs(xmlElementUsage)
}

// attrName is an attribute's name as written (prefix:local).
func attrName(n xml.Name) string {
	if n.Space == "" {
		return n.Local
	}
	return n.Space + ":" + n.Local
}

// cmdXMLAddress is XML::address: the element's path from the root.
func cmdXMLAddress(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs("XML::address")
	}
	n, err := xmlNodeOf(in, "XML::address")
	if err != nil {
		return tcl.Empty, err
	}
	return tcl.Str(n.Path), nil
}
