package mblbvs

import (
	"testing"

	"github.com/openltm/openltm/rules"
)

// TestHandlesXML: a client keeps xml profile state only when its rules
// handle one of the profile's events, and knows which of the two
// passes (queries, parser events) they need.
func TestHandlesXML(t *testing.T) {
	for _, c := range []struct {
		rule      string
		none      bool
		cbr, walk bool
	}{
		{rule: "when HTTP_REQUEST { }", none: true},
		{rule: "when XML_CONTENT_BASED_ROUTING { }", cbr: true},
		{rule: "when XML_CDATA { }", walk: true},
		{rule: "when XML_EVENT { }", walk: true},
		{rule: "when XML_CONTENT_BASED_ROUTING { }\nwhen XML_END_DOCUMENT { }", cbr: true, walk: true},
	} {
		r, err := rules.Compile("x", c.rule)
		if err != nil {
			t.Fatal(err)
		}
		st := handlesXML(rules.NewProgram(&rules.Env{}, r))
		switch {
		case c.none && st != nil:
			t.Errorf("%q: state %+v, want none", c.rule, st)
		case !c.none && (st == nil || st.cbr != c.cbr || st.walk != c.walk):
			t.Errorf("%q: state %+v, want cbr %v walk %v", c.rule, st, c.cbr, c.walk)
		}
	}
}
