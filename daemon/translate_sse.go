package daemon

import (
	"fmt"
	"strconv"

	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/rules"
)

var (
	profileSSE    = schema.MustKind("ltm profile sse")
	sseMaxMsg     = profileSSE.MustProp("max-buffered-msg-bytes")
	sseMaxName    = profileSSE.MustProp("max-field-name-size")
	sseMaxMsgHigh = 16 << 20
)

// sseOptions is the virtual's sse profile as the HTTP engine applies it:
// nil without one.
func (t *translator) sseOptions(o *objects.Object) (*mblb.SSEOptions, error) {
	p := t.profile(o, profileSSE)
	if p == nil {
		return nil, nil
	}
	opts := &mblb.SSEOptions{Profile: p.Name}
	for _, c := range []struct {
		prop *objects.Prop
		dst  *int
		max  int
	}{{sseMaxMsg, &opts.Limits.MaxEvent, sseMaxMsgHigh}, {sseMaxName, &opts.Limits.MaxName, 65535}} {
		v := c.prop.Effective(t.cfg, p)
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > c.max {
			return nil, fmt.Errorf("profile %s: %s %q is out of range: 1 to %d", p.Name, c.prop.Name, v, c.max)
		}
		*c.dst = n
	}
	return opts, nil
}

// sseNeedsHTTP refuses an sse profile on a virtual server without an
// http profile: it reads HTTP response bodies [M: BIG-IP's message is
// not documented; this one is ours].
func (t *translator) sseNeedsHTTP(o *objects.Object) bool { return t.needsHTTPProfile(o, profileSSE) }

// sseNeeds refuses a rule list whose SSE_RESPONSE needs an sse profile
// the virtual server lacks (01070394 [M]).
func (t *translator) sseNeeds(o *objects.Object, list []*rules.Rule) bool {
	return t.profileNeeds(o, list, profileSSE, "SSE", (*rules.Rule).SSENeeds) // translate_stream.go
}
