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
// What is not parsed goes on unchanged to the virtual's default pool
// [M: BIG-IP's profile has no setting for it]: a body that is not a
// well-formed document, and one too long for the engine to hold whole
// (the HTTP engine's message size, 1 MB with the head by default),
// which streams on.

// xmlState is a client's xml profile state: the matches of the request
// at hand and the de-chunked body, reused from request to request.
type xmlState struct {
	matches []xmlcbr.Match
	queries []string
	values  []string
	buf     []byte
}

// handlesXML reports whether prog handles the xml profile's event.
func handlesXML(prog *rules.Program) bool {
	return prog.Handles(rules.XMLContentBasedRouting)
}

// xmlEvent evaluates the profile's queries over the request's body and
// runs XML_CONTENT_BASED_ROUTING when one matched; a document the rule
// replaced (XML::payload replace) is the body sent on. The caller holds
// the rule lock.
func (h *httpRules) xmlEvent(x *mblb.HTTPEvent) error {
	p := h.f.mv.cfg.Request.HTTP.XML
	if h.xml == nil || p == nil || x.Decided() || x.IsResponse() {
		return nil
	}
	s := h.RuleSession(irules.Program(h.rules))
	if s.XMLDisabled() {
		return nil
	}
	if ct, ok := h.Request.Header("Content-Type"); !ok || !xmlcbr.IsXMLType(ct) {
		return nil
	}
	if x.Partial() {
		// Longer than the engine holds: it streams on unparsed.
		return nil
	}
	body, ok := h.xmlBody(x)
	if !ok || len(body) == 0 {
		return nil
	}
	st := h.xml
	var err error
	st.matches, err = p.Evaluate(body, st.matches[:0])
	if err != nil || len(st.matches) == 0 {
		return nil
	}
	st.queries, st.values = st.queries[:0], st.values[:0]
	for _, m := range st.matches {
		st.queries = append(st.queries, m.Query)
		st.values = append(st.values, m.Value)
	}
	if err := s.BeginXML(body, st.queries, st.values); err != nil {
		s.EndXML()
		return err
	}
	err = h.event(x, rules.XMLContentBasedRouting, &h.Request)
	doc, replaced := s.EndXML()
	if err != nil || x.Decided() || !replaced {
		return err
	}
	x.SetBody(doc)
	return nil
}

// xmlBody is the request's whole body: a replacement an earlier event
// made, else the held body de-chunked; ok false when it is not whole.
func (h *httpRules) xmlBody(x *mblb.HTTPEvent) (body []byte, ok bool) {
	if b, _, ok := x.NewBody(); ok {
		return b, true
	}
	if x.Head().Chunked {
		var err error
		h.xml.buf, err = httpx.Dechunk(h.xml.buf[:0], x.Body())
		if err != nil {
			return nil, false
		}
		return h.xml.buf, true
	}
	return x.Body(), true
}
