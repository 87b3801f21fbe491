package mblbvs

import (
	"github.com/openltm/openltm/dataplane/httpx"
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/xmlcbr"
	"github.com/openltm/openltm/rules"
)

// The xml profile (xmlcbr.Profile): a request whose Content-Type is XML
// has its body parsed, after HTTP_REQUEST and HTTP_REQUEST_DATA (which
// may replace it) and before the request is balanced, and the profile's
// XPath queries evaluated over it; when one matches,
// XML_CONTENT_BASED_ROUTING runs, and the pool (or node, or virtual) it
// picks is where the request goes. Without that event in the virtual's
// rules nothing is parsed.
//
// A body still arriving when the head is in (a slow client, or one that
// waited for 100 Continue) is read whole first when max-buffer-size
// allows it. What is not parsed goes on unchanged, to the pool the
// rules left (the virtual's): a body longer than max-buffer-size, or
// too long for the engine to hold whole (its max-message-size, 1 MB with
// the head), which streams on; and a body that is not a well-formed document,
// unless abort-on-error resets the client's connection for it [M:
// F5 documents neither behaviour].

//
// The parser events (XML_BEGIN_DOCUMENT ... XML_EVENT, rules/
// commands_xml_events.go) run over the same document, before
// XML_CONTENT_BASED_ROUTING, when the rules handle one of them: the
// document is walked once more for them, in document order, and the
// walk stops once a rule decided the request.

// xmlState is a client's xml profile state: the matches of the request
// at hand and the de-chunked body, reused from request to request; cbr
// and walk say which of the profile's events the rules handle.
type xmlState struct {
	matches   []xmlcbr.Match
	queries   []string
	values    []string
	buf       []byte
	node      rules.XMLNode
	cbr, walk bool
}

// handlesXML reports whether prog handles one of the xml profile's
// events, and returns the client's state for them then (nil
// otherwise: the requests then cost nothing more).
func handlesXML(prog *rules.Program) *xmlState {
	st := &xmlState{cbr: prog.Handles(rules.XMLContentBasedRouting)}
	for ev := rules.XMLBeginDocument; ev <= rules.XMLEvent; ev++ {
		st.walk = st.walk || prog.Handles(ev)
	}
	if !st.cbr && !st.walk {
		return nil
	}
	return st
}

// xmlSide reports whether the xml profile reads x: a request of a
// client whose rules have the event, with an XML content type, not
// turned off by XML::disable.
func (h *httpRules) xmlSide(x *mblb.HTTPEvent) bool {
	if h.xml == nil || x.Decided() || x.IsResponse() {
		return false
	}
	if s := h.RuleSession(irules.Program(h.rules)); s.XMLDisabled() {
		return false
	}
	ct, ok := h.Request.Header("Content-Type")
	return ok && xmlcbr.IsXMLType(ct)
}

// xmlAwait asks the engine, for a streamed XML body (Partial: still
// arriving, or sent after a 100 Continue) that max-buffer-size allows,
// for the whole of it before the request goes on; OnHTTPRequestData
// then runs the profile. True when it asked.
func (h *httpRules) xmlAwait(x *mblb.HTTPEvent) bool {
	if !x.Partial() || !x.CanAwait() || !h.xmlSide(x) {
		return false
	}
	p := h.f.mv.cfg.Request.HTTP.XML
	if x.Head().Chunked {
		// Up to one byte past the maximum: a longer body is not
		// parsed once that much is in.
		if _, err := httpx.Dechunk(nil, x.Body()); err == nil {
			return false
		}
		x.Await(p.MaxBufferSize + 1)
		return true
	}
	cl := x.Head().ContentLength
	if cl < 0 || cl > int64(p.MaxBufferSize) || len(x.Body()) >= int(cl) {
		return false
	}
	x.Await(int(cl))
	return true
}

// xmlEvent evaluates the profile's queries over the request's body and
// runs XML_CONTENT_BASED_ROUTING when one matched; a document the rule
// replaced (XML::payload replace) is the body sent on. The caller holds
// the rule lock.
func (h *httpRules) xmlEvent(x *mblb.HTTPEvent) error {
	if !h.xmlSide(x) {
		return nil
	}
	p := h.f.mv.cfg.Request.HTTP.XML
	body, k, ok := wholeBody(x, &h.xml.buf)
	if !ok || len(body) == 0 || len(body) > p.MaxBufferSize {
		// Not all there (longer than the engine holds), or over
		// max-buffer-size: it goes on unparsed.
		return nil
	}
	st := h.xml
	if st.walk {
		malformed, err := h.xmlWalk(x, body)
		if err != nil || x.Decided() {
			return err
		}
		if malformed {
			if !st.cbr {
				h.f.mv.vs.Prof.XML.Count(0, xmlcbr.ErrMalformed) // show ltm profile xml
			}
			if p.AbortOnError {
				x.Reject() // the client's connection is reset
			}
			return nil
		}
	}
	if !st.cbr {
		return nil
	}
	var err error
	st.matches, err = p.Evaluate(body, st.matches[:0])
	h.f.mv.vs.Prof.XML.Count(len(st.matches), err) // show ltm profile xml
	if err != nil {
		if p.AbortOnError {
			x.Reject() // the client's connection is reset
		}
		return nil
	}
	if len(st.matches) == 0 {
		return nil
	}
	st.queries, st.values = st.queries[:0], st.values[:0]
	for _, m := range st.matches {
		st.queries = append(st.queries, m.Query)
		st.values = append(st.values, m.Value)
	}
	s := h.RuleSession(irules.Program(h.rules))
	if err := s.BeginXML(body, st.queries, st.values); err != nil {
		s.EndXML()
		return err
	}
	err = h.event(x, rules.XMLContentBasedRouting, &h.Request)
	doc, replaced := s.EndXML()
	if err != nil || x.Decided() || !replaced {
		return err
	}
	if x.Partial() {
		x.ReplaceStart(k, doc)
	} else {
		x.SetBody(doc)
	}
	return nil
}

// xmlWalk runs the parser events over the request's document, each
// event's own handlers then XML_EVENT's, until the document ends, a
// rule fails or the request is decided; malformed says the body is not
// a well-formed document (no event ran). The caller holds the rule
// lock.
func (h *httpRules) xmlWalk(x *mblb.HTTPEvent, body []byte) (malformed bool, err error) {
	st := h.xml
	s := h.RuleSession(irules.Program(h.rules))
	n := &st.node
	werr := xmlcbr.Walk(body, func(w *xmlcbr.Node) bool {
		*n = rules.XMLNode{Event: rules.XMLBeginDocument + rules.Event(w.Kind), Name: w.Name, Path: w.Path,
			Text: w.Text, Depth: w.Depth, Attrs: w.Attrs}
		s.SetXMLNode(n)
		err = h.event(x, n.Event, &h.Request)
		if err == nil && !x.Decided() {
			err = h.event(x, rules.XMLEvent, &h.Request)
		}
		s.SetXMLNode(nil)
		return err == nil && !x.Decided()
	})
	*n = rules.XMLNode{} // (nothing of the document kept past it)
	return werr != nil, err
}
