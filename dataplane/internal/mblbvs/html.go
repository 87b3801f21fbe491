package mblbvs

import (
	"github.com/openltm/openltm/dataplane/htmlfilter"
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/rules"
)

// HTMLPass implements mblb.HTTPHTMLHandler: the html profile's pass for
// the response whose HTTP_RESPONSE ran last, nil when a rule's
// HTML::disable switched it off; HTML_TAG_MATCHED and
// HTML_COMMENT_MATCHED run from it when the rules handle them, and
// HTML::disable and HTML::enable there switch the rest of the body.
func (h *httpRules) HTMLPass(rs *htmlfilter.Rules) *htmlfilter.Pass {
	r := h.mblbRules
	r.mu.Lock()
	defer r.mu.Unlock()
	prog := irules.Program(r.rules) // (an httpRules has a program)
	st := r.RuleSession(prog).HTML()
	if st == nil {
		return rs.New(nil, nil)
	}
	if st.TakeOff() {
		return nil
	}
	var p *htmlfilter.Pass
	var onTag func(*htmlfilter.Tag)
	var onComment func(*htmlfilter.Comment)
	if rs.TagEvents && prog.Handles(rules.HTMLTagMatched) {
		onTag = func(t *htmlfilter.Tag) {
			h.htmlEvent(p, rules.HTMLTagMatched, func(s *rules.ConnState) error { return s.RunHTMLTag(t) })
		}
	}
	if rs.CommentEvents && prog.Handles(rules.HTMLCommentMatched) {
		onComment = func(c *htmlfilter.Comment) {
			h.htmlEvent(p, rules.HTMLCommentMatched, func(s *rules.ConnState) error { return s.RunHTMLComment(c) })
		}
	}
	p = rs.New(onTag, onComment)
	return p
}

// htmlEvent runs one HTML_ event under the rules' lock (the server
// connection's reader calls it in the middle of the body). A rule that
// fails, rejects or drops ends the client.
func (h *httpRules) htmlEvent(p *htmlfilter.Pass, ev rules.Event, run func(*rules.ConnState) error) {
	r := h.mblbRules
	r.mu.Lock()
	if r.sess == nil {
		r.mu.Unlock()
		return
	}
	r.verdict = irules.GoOn
	r.httpEv = ev
	err := run(r.sess)
	r.httpEv = rules.RuleInit
	v := r.verdict
	if st := r.sess.HTML(); st != nil {
		p.SetEnabled(!st.Off)
	}
	r.mu.Unlock()
	if err != nil || v != irules.GoOn {
		// (Not at once: the server connection's reader is in the middle
		// of the response.)
		go r.f.sess.Close(err != nil || v == irules.Reject)
	}
}
