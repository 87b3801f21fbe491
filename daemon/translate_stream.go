package daemon

import (
	"fmt"
	"strconv"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/streamfilter"
	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/rules"
)

var (
	streamSource = profileStream.MustProp("source")
	streamTarget = profileStream.MustProp("target")
	streamChunk  = profileStream.MustProp("chunk-size")
)

// maxChunkSize bounds chunk-size [M: BIG-IP does not document a range].
const maxChunkSize = 16 << 20

// streamChunkSize is a stream profile's effective chunk-size, 0 (each
// part the filter gives as one chunk) to maxChunkSize.
func (t *translator) streamChunkSize(o *objects.Object) (int, error) {
	v := streamChunk.Effective(t.cfg, o)
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > maxChunkSize {
		return 0, fmt.Errorf("chunk-size %q must be a number from 0 to %d", v, maxChunkSize)
	}
	return n, nil
}

// streamProfile checks a stream profile whether or not a virtual uses
// it: a source or target the filter cannot use is refused when the
// profile is made or changed (skipped), not first when a virtual takes
// it, with the same message.
func (t *translator) streamProfile(o *objects.Object) {
	if _, err := streamfilter.Profile(streamSource.Effective(t.cfg, o), streamTarget.Effective(t.cfg, o)); err != nil {
		t.skip(o, "%v", err)
	}
	if _, err := t.streamChunkSize(o); err != nil {
		t.skip(o, "%v", err)
	}
}

// streamOptions reads the virtual's stream profile, for the HTTP path
// or a plain TCP virtual: nil without one. A source or target the filter cannot use is an error
// naming the profile.
func (t *translator) streamOptions(o *objects.Object) (*mblb.StreamOptions, error) {
	sp := t.profile(o, profileStream)
	if sp == nil {
		return nil, nil
	}
	e, err := streamfilter.Profile(streamSource.Effective(t.cfg, sp), streamTarget.Effective(t.cfg, sp))
	if err != nil {
		return nil, fmt.Errorf("profile %s: %v", sp.Name, err)
	}
	size, err := t.streamChunkSize(sp)
	if err != nil {
		return nil, fmt.Errorf("profile %s: %v", sp.Name, err)
	}
	return &mblb.StreamOptions{Profile: sp.Name, Expr: e, ChunkSize: size}, nil
}

// streamElsewhere keeps, not run, a message-based virtual with a stream
// profile: what BIG-IP would rewrite there (the messages' bytes before
// or after framing) is not settled, and passing the data unchanged would
// be silently different. True when the virtual has no such profile.
func (t *translator) streamElsewhere(o *objects.Object) bool {
	if sp := t.profile(o, profileStream); sp != nil {
		t.keep(o, "profile %s: openltm's stream filter does not run on message-based virtuals (an mblb profile)", sp.Name)
		return false
	}
	return true
}

// tcpStream gives a plain TCP virtual its stream profile, which rewrites
// both directions' bytes. With TLS on the virtual (and no http profile)
// it is kept, not run: openltm filters plaintext TCP only.
func (t *translator) tcpStream(o *objects.Object, v *dataplane.Virtual) bool {
	so, err := t.streamOptions(o)
	if err != nil {
		t.skip(o, "%v", err)
		return false
	}
	if so == nil {
		return true
	}
	if v.IsUDP() {
		t.keep(o, "profile %s: openltm's stream filter does not run on UDP virtuals", so.Profile)
		return false
	}
	if t.profile(o, profileClientSSL, profileServerSSL) != nil {
		t.keep(o, "profile %s: openltm's stream filter rewrites plaintext TCP or HTTP bodies; with TLS it needs an http profile on the virtual", so.Profile)
		return false
	}
	v.Stream = so
	return true
}

// streamNeeds refuses, as BIG-IP does (01070394), a rule list whose
// STREAM:: commands or STREAM_MATCHED need a stream profile the virtual
// server lacks. BIG-IP reports the first such use; so does this.
func (t *translator) streamNeeds(o *objects.Object, list []*rules.Rule) bool {
	return t.profileNeeds(o, list, profileStream, "STREAM", (*rules.Rule).StreamNeeds)
}

// profileNeeds refuses, as BIG-IP does (01070394), a rule list whose
// commands need a profile of kind the virtual server lacks (label is
// BIG-IP's name of the profile in the message); it reports the first
// such use, as BIG-IP does.
func (t *translator) profileNeeds(o *objects.Object, list []*rules.Rule, kind *objects.Kind, label string, needs func(*rules.Rule) []rules.HTTPNeed) bool {
	if t.profile(o, kind) != nil {
		return true
	}
	for _, r := range list {
		for _, n := range needs(r) {
			msg := fmt.Sprintf("01070394:3: %s in rule (%s) requires an associated %s profile on the virtual server (%s).", n.Name, r.Name, label, o.Name)
			t.skipped = append(t.skipped, msg)
			t.refused = append(t.refused, msg)
			return false
		}
	}
	return true
}
