package daemon

import (
	"strconv"
	"time"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/rtsp"
	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/rules"
)

// The rtsp profile as TCP virtuals apply it (dataplane/internal/l4/rtsp.go).
var (
	profileRTSP   = schema.MustKind("ltm profile rtsp")
	rtspIdle      = profileRTSP.MustProp("idle-timeout")
	rtspMaxHeader = profileRTSP.MustProp("max-header-size")
	rtspMaxQueued = profileRTSP.MustProp("max-queued-data")
)

// rtsp gives a TCP virtual its rtsp profile. BIG-IP refuses the profile
// without a tcp profile and beside an http, ftp, sip, fix or mqtt
// profile, which would parse the same bytes [M: the messages are
// openltm's]. The proxy modes (proxy, proxy-header, rtp-port, rtcp-port:
// two virtuals relaying between themselves), the redirects, session
// reconnection and ALG logging are kept with the schema's warning
// (objects/kinds_rtsp.go). Where the
// message reader does not run (TLS, stream, mblb, rules that read the
// flow's bytes) the virtual passes RTSP through as plain TCP, with a
// warning. It returns false when the virtual was left out.
func (t *translator) rtsp(o *objects.Object, v *dataplane.Virtual) bool {
	p := t.profile(o, profileRTSP)
	if p == nil {
		return true
	}
	for _, k := range []*objects.Kind{profileHTTP, profileFTP, profileSIP, profileMQTT, profileFIX} {
		if other := t.profile(o, k); other != nil {
			return t.refuse("profile %s (rtsp) cannot be used with %s profile %s on the virtual server (%s)", p.Name, k.Words[len(k.Words)-1], other.Name, o.Name)
		}
	}
	if t.profile(o, profileTCP) == nil || v.IsUDP() {
		return t.refuse("profile %s (rtsp) requires a tcp profile on the virtual server (%s)", p.Name, o.Name)
	}
	num := func(pr *objects.Prop, min int) (int, bool) {
		s := pr.Effective(t.cfg, p)
		n, err := strconv.Atoi(s)
		if err != nil || n < min {
			t.refuse("profile %s (rtsp): %s %q must be a number of at least %d (virtual server %s)", p.Name, pr.Name, s, min, o.Name)
			return 0, false
		}
		return n, true
	}
	idle, ok1 := num(rtspIdle, 0)
	maxHeader, ok2 := num(rtspMaxHeader, 64)
	maxQueued, ok3 := num(rtspMaxQueued, 0)
	if !ok1 || !ok2 || !ok3 {
		return false
	}
	opt := &rtsp.Options{Profile: p.Name, Idle: time.Duration(idle) * time.Second, MaxHeader: maxHeader, MaxBody: maxQueued}
	if opt.MaxBody == 0 {
		opt.MaxBody = rtsp.DefaultMaxBody
	}
	without := func(why string) bool {
		t.keep(o, "profile %s: openltm's RTSP gateway %s; the virtual passes RTSP through without it", p.Name, why)
		return true
	}
	if why := plainGatewayBlocked(v); why != "" { // translate_ftp.go
		return without(why)
	}
	v.RTSP = opt
	return true
}

// rtspNeeds refuses a rule list whose RTSP_ events need an rtsp profile
// the virtual server lacks (01070394 [M]).
func (t *translator) rtspNeeds(o *objects.Object, list []*rules.Rule) bool {
	return t.profileNeeds(o, list, profileRTSP, "RTSP", (*rules.Rule).RTSPNeeds) // translate_stream.go
}
