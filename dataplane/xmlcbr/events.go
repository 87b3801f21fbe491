package xmlcbr

import (
	"bytes"
	"encoding/xml"
	"io"
	"strconv"
	"strings"
)

// The streaming parser events of BIG-IP's xml profile (XML_BEGIN_DOCUMENT,
// XML_BEGIN_ELEMENT, XML_CDATA, XML_END_ELEMENT, XML_END_DOCUMENT): F5
// names them but documents no more of them than their names [M: Walk
// hands them over in document order, as a SAX parser would; the
// character data of an element is one node per run of text or CDATA
// section between its tags, white space alone giving none].

// Kind is a parser event's kind.
type Kind uint8

// The kinds of Node, in the order a document gives them.
const (
	BeginDocument Kind = iota
	BeginElement
	CData
	EndElement
	EndDocument
)

// Node is what one parser event is about. Its fields are valid only
// during the callback that receives it.
type Node struct {
	Kind Kind
	// Name is the element's name as the document writes it (prefix:local),
	// for BeginElement, EndElement and the CData inside it.
	Name string
	// Attrs are the element's attributes as written, BeginElement only.
	Attrs []xml.Attr
	// Path is the element's address: the names from the root down,
	// each with its position among its parent's children of that name
	// when it is not the first (/Envelope/Body/Order[2]).
	Path string
	// Depth is the element's depth, 1 for the root.
	Depth int
	// Text is the character data, CData only.
	Text string
}

// Walk parses body, a whole well-formed document (the same as Evaluate
// takes), and calls fn for each of its parser events in order; fn
// returning false stops the walk. The error is ErrMalformed when the
// body is not a well-formed document; fn then has not been called.
func Walk(body []byte, fn func(*Node) bool) error {
	if _, err := parse(body); err != nil {
		return err
	}
	body, transcoded, err := toUTF8(body)
	if err != nil {
		return err
	}
	d := xml.NewDecoder(bytes.NewReader(body))
	d.Strict = true
	d.CharsetReader = charsetReader(transcoded)
	type level struct {
		name   string
		path   string
		counts map[string]int
	}
	stack := []level{{counts: map[string]int{}}}
	n := &Node{Kind: BeginDocument}
	if !fn(n) {
		return nil
	}
	for {
		tok, err := d.RawToken()
		if err == io.EOF {
			break
		}
		if err != nil {
			return ErrMalformed // (parse read it whole: not reached)
		}
		top := &stack[len(stack)-1]
		switch t := tok.(type) {
		case xml.StartElement:
			name := qname(t.Name)
			top.counts[name]++
			path := top.path + "/" + name
			if c := top.counts[name]; c > 1 {
				path += "[" + strconv.Itoa(c) + "]"
			}
			stack = append(stack, level{name: name, path: path, counts: map[string]int{}})
			*n = Node{Kind: BeginElement, Name: name, Attrs: t.Attr, Path: path, Depth: len(stack) - 1}
		case xml.EndElement:
			*n = Node{Kind: EndElement, Name: top.name, Path: top.path, Depth: len(stack) - 1}
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) == 1 || strings.TrimSpace(string(t)) == "" {
				continue
			}
			*n = Node{Kind: CData, Name: top.name, Path: top.path, Depth: len(stack) - 1, Text: string(t)}
		default:
			continue
		}
		if !fn(n) {
			return nil
		}
	}
	*n = Node{Kind: EndDocument}
	fn(n)
	return nil
}

func qname(n xml.Name) string {
	if n.Space == "" {
		return n.Local
	}
	return n.Space + ":" + n.Local
}
