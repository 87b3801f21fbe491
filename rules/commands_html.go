package rules

import (
	"github.com/openltm/openltm/dataplane/htmlfilter"
	"github.com/openltm/openltm/rules/tcl"
)

// HTMLState is a connection's html profile as its rules leave it: the
// host sets it up (ConnState.SetHTML) on a virtual server with an html
// profile, runs HTML_TAG_MATCHED and HTML_COMMENT_MATCHED through
// RunHTMLTag and RunHTMLComment, and reads Off after HTTP_RESPONSE and
// after each of those events. Without an html profile it is nil and the
// HTML:: commands are errors.
type HTMLState struct {
	// Off is HTML::disable's: the response body passes unparsed from
	// here on, until HTML::enable.
	Off     bool
	tag     *htmlfilter.Tag
	comment *htmlfilter.Comment
}

// SetHTML gives the connection the html profile's state (on) or takes
// it away.
func (s *ConnState) SetHTML(on bool) {
	if !on {
		s.html = nil
	} else if s.html == nil {
		s.html = &HTMLState{}
	}
}

// HTML is the connection's html state; nil without an html profile. The
// host reads it under the lock its events run under.
func (s *ConnState) HTML() *HTMLState { return s.html }

// TakeOff reports whether HTML::disable left the next response's body
// unparsed, and switches the profile back on for the one after [M:
// BIG-IP's page says the command applies to the current response].
func (st *HTMLState) TakeOff() bool {
	off := st.Off
	st.Off = false
	return off
}

// RunHTMLTag runs HTML_TAG_MATCHED over a tag a tag-raise-event rule
// matched; the HTML::tag commands read and edit it there.
func (s *ConnState) RunHTMLTag(t *htmlfilter.Tag) error {
	if s.html == nil || len(s.prog.handlers[HTMLTagMatched]) == 0 {
		return nil
	}
	s.html.tag = t
	err := s.Run(HTMLTagMatched)
	s.html.tag = nil
	return err
}

// RunHTMLComment runs HTML_COMMENT_MATCHED over a comment.
func (s *ConnState) RunHTMLComment(c *htmlfilter.Comment) error {
	if s.html == nil || len(s.prog.handlers[HTMLCommentMatched]) == 0 {
		return nil
	}
	s.html.comment = c
	err := s.Run(HTMLCommentMatched)
	s.html.comment = nil
	return err
}

func registerHTML(t *tcl.Commands) {
	t.Register("HTML::tag", cmdHTMLTag)
	t.Register("HTML::comment", cmdHTMLComment)
	t.Register("HTML::enable", cmdHTMLSwitch("HTML::enable", false))
	t.Register("HTML::disable", cmdHTMLSwitch("HTML::disable", true))
}

func htmlOf(in *tcl.Interp, cmd string) (*HTMLState, error) {
	s, _, err := sess(in, cmd)
	if err != nil {
		return nil, err
	}
	if s.html == nil {
		return nil, tcl.Errorf("%s: the virtual server has no html profile", cmd)
	}
	return s.html, nil
}

func cmdHTMLSwitch(name string, off bool) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 1 {
			return tcl.Empty, tcl.WrongArgs(name)
		}
		st, err := htmlOf(in, name)
		if err != nil {
			return tcl.Empty, err
		}
		st.Off = off
		return tcl.Empty, nil
	}
}

const htmlTagUsage = "HTML::tag name | remove | append HTML | prepend HTML | attribute names|count | attribute exists|value|remove NAME | attribute insert|replace NAME VALUE"

// cmdHTMLTag is HTML::tag, over the tag of HTML_TAG_MATCHED.
func cmdHTMLTag(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	st, err := htmlOf(in, "HTML::tag")
	if err != nil {
		return tcl.Empty, err
	}
	t := st.tag
	if t == nil {
		return tcl.Empty, tcl.Errorf("HTML::tag: only valid in HTML_TAG_MATCHED")
	}
	if len(args) < 2 {
		return tcl.Empty, tcl.WrongArgs(htmlTagUsage)
	}
	a := func(i int) string { return args[i].String() }
	switch op := a(1); {
	case op == "name" && len(args) == 2:
		return tcl.Str(t.Name()), nil
	case op == "remove" && len(args) == 2:
		t.Remove()
		return tcl.Empty, nil
	case op == "append" && len(args) == 3:
		t.Append(a(2))
		return tcl.Empty, nil
	case op == "prepend" && len(args) == 3:
		t.Prepend(a(2))
		return tcl.Empty, nil
	case op == "attribute" && len(args) >= 3:
		switch sub := a(2); {
		case sub == "names" && len(args) == 3:
			ns := t.AttrNames()
			l := make([]tcl.Value, len(ns))
			for i, n := range ns {
				l[i] = tcl.Str(n)
			}
			return tcl.List(l...), nil
		case sub == "count" && len(args) == 3:
			return tcl.Int(int64(len(t.AttrNames()))), nil
		case sub == "exists" && len(args) == 4:
			_, ok := t.Attr(a(3))
			return tcl.Bool(ok), nil
		case sub == "value" && len(args) == 4:
			v, _ := t.Attr(a(3))
			return tcl.Str(v), nil
		case sub == "remove" && len(args) == 4:
			t.RemoveAttr(a(3))
			return tcl.Empty, nil
		case sub == "insert" && len(args) == 5:
			t.SetAttr(a(3), a(4), true)
			return tcl.Empty, nil
		case sub == "replace" && len(args) == 5:
			t.SetAttr(a(3), a(4), false)
			return tcl.Empty, nil
		}
	}
	return tcl.Empty, tcl.WrongArgs(htmlTagUsage)
}

const htmlCommentUsage = "HTML::comment ?append HTML | prepend HTML | remove | replace TEXT?"

// cmdHTMLComment is HTML::comment, over the comment of
// HTML_COMMENT_MATCHED: without arguments the comment's text.
func cmdHTMLComment(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	st, err := htmlOf(in, "HTML::comment")
	if err != nil {
		return tcl.Empty, err
	}
	c := st.comment
	if c == nil {
		return tcl.Empty, tcl.Errorf("HTML::comment: only valid in HTML_COMMENT_MATCHED")
	}
	switch {
	case len(args) == 1:
		return tcl.Str(c.Text()), nil
	case len(args) == 2 && args[1].String() == "remove":
		c.Remove()
		return tcl.Empty, nil
	case len(args) == 3 && args[1].String() == "append":
		c.Append(args[2].String())
		return tcl.Empty, nil
	case len(args) == 3 && args[1].String() == "prepend":
		c.Prepend(args[2].String())
		return tcl.Empty, nil
	case len(args) == 3 && args[1].String() == "replace":
		c.Replace(args[2].String())
		return tcl.Empty, nil
	}
	return tcl.Empty, tcl.WrongArgs(htmlCommentUsage)
}
