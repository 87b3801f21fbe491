package daemon

import (
	"fmt"
	"strconv"

	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/rules"
)

var (
	profileJSON       = schema.MustKind("ltm profile json")
	jsonMaxBytes      = profileJSON.MustProp("maximum-bytes")
	jsonMaxEntries    = profileJSON.MustProp("maximum-entries")
	jsonMaxNonJSON    = profileJSON.MustProp("maximum-non-json-bytes")
	jsonMaxBytesLimit = 16 << 20
)

// jsonOptions is the virtual's json profile as the HTTP engine applies
// it: nil without one.
func (t *translator) jsonOptions(o *objects.Object) (*mblb.JSONOptions, error) {
	p := t.profile(o, profileJSON)
	if p == nil {
		return nil, nil
	}
	opts, err := t.jsonLimits(p)
	if err != nil {
		return nil, fmt.Errorf("profile %s: %w", p.Name, err)
	}
	return opts, nil
}

// jsonLimits reads a json profile's maximums: each a count from 1, and
// maximum-bytes no more than the 16 MB a message may hold [M: BIG-IP's
// bounds are not documented].
func (t *translator) jsonLimits(p *objects.Object) (*mblb.JSONOptions, error) {
	opts := &mblb.JSONOptions{Profile: p.Name}
	for _, c := range []struct {
		prop *objects.Prop
		dst  *int
		max  int
	}{{jsonMaxBytes, &opts.MaxBytes, jsonMaxBytesLimit}, {jsonMaxEntries, &opts.MaxEntries, 1 << 30}, {jsonMaxNonJSON, new(int), 1 << 30}} {
		v := c.prop.Effective(t.cfg, p)
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > c.max {
			return nil, fmt.Errorf("%s %q is out of range: 1 to %d", c.prop.Name, v, c.max)
		}
		*c.dst = n
	}
	return opts, nil
}

// jsonProfile checks a json profile whether or not a virtual uses it.
func (t *translator) jsonProfile(o *objects.Object) {
	if _, err := t.jsonLimits(o); err != nil {
		t.skip(o, "%v", err)
	}
}

// jsonNeedsHTTP refuses a json profile on a virtual server without an
// http profile: it parses HTTP bodies, and BIG-IP refuses the
// combination too [M: its message is ours].
func (t *translator) jsonNeedsHTTP(o *objects.Object) bool { return t.needsHTTPProfile(o, profileJSON) }

// jsonNeeds refuses a rule list whose JSON_ events need a json profile
// the virtual server lacks (01070394 [M]).
func (t *translator) jsonNeeds(o *objects.Object, list []*rules.Rule) bool {
	return t.profileNeeds(o, list, profileJSON, "JSON", (*rules.Rule).JSONNeeds) // translate_stream.go
}
