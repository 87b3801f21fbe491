package daemon

import (
	"fmt"
	"math"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/objects"
)

// The fasthttp and ntlm profiles (objects/kinds_fasthttp.go).
var (
	profileFastHTTP = schema.MustKind("ltm profile fasthttp")
	profileNTLM     = schema.MustKind("ltm profile ntlm")

	fhMaxSize      = profileFastHTTP.MustProp("connpool-max-size")
	fhMaxReuse     = profileFastHTTP.MustProp("connpool-max-reuse")
	fhIdleOverride = profileFastHTTP.MustProp("connpool-idle-timeout-override")
	fhXFF          = profileFastHTTP.MustProp("insert-xforwarded-for")
	fhHeaderInsert = profileFastHTTP.MustProp("header-insert")
	fhMaxHeader    = profileFastHTTP.MustProp("max-header-size")
	fhMaxRequests  = profileFastHTTP.MustProp("max-requests")
	fhHTTP10       = profileFastHTTP.MustProp("force-http-10-response")
	fhIdle         = profileFastHTTP.MustProp("idle-timeout")
)

// fastHTTP gives a virtual its fasthttp profile: the HTTP path of http
// virtuals (dataplane/mblb) with the profile's own OneConnect pool.
// BIG-IP puts fasthttp in the place of the tcp, http and one-connect
// profiles, and runs it on TCP virtuals only [M: the messages are
// openltm's]. connpool-max-reuse 0 is no limit, as on BIG-IP; the pool
// keeps connections for one-connect's max-age default [M]. It returns
// false when the virtual was left out.
func (t *translator) fastHTTP(o *objects.Object, v *dataplane.Virtual, prof *objects.Object) (*dataplane.MBLB, bool) {
	for _, k := range []*objects.Kind{profileTCP, profileFastL4, profileHTTP, profileOneConnect, profileMBLB, profileNTLM} {
		if other := t.profile(o, k); other != nil {
			return nil, t.refuse("profile %s (fasthttp) cannot be used with %s profile %s on the virtual server (%s)", prof.Name, k.Words[len(k.Words)-1], other.Name, o.Name)
		}
	}
	if v.IsUDP() {
		return nil, t.refuse("profile %s (fasthttp) requires ip-protocol tcp on the virtual server (%s)", prof.Name, o.Name)
	}
	get := func(p *objects.Prop) string { return p.Effective(t.cfg, prof) }
	opts := mblb.HTTPOptions{
		InsertXFF:      get(fhXFF) == "enabled",
		MaxHeaderSize:  atoi(get(fhMaxHeader)),
		MaxHeaderCount: -1, // fasthttp has no such bound
		MaxRequests:    atoi(get(fhMaxRequests)),
		ForceHTTP10:    get(fhHTTP10) == "enabled",
		// Client closes do not close the pooled member connections.
		Transformations: true,
		Scheme:          "http",
	}
	if opts.MaxHeaderSize <= 0 {
		return nil, t.refuse("profile %s (fasthttp): max-header-size %s: expected a number of bytes of at least 1", prof.Name, get(fhMaxHeader))
	}
	hi := get(fhHeaderInsert)
	var err error
	if opts.HeaderInsert, err = headerInsert(hi); err != nil { // translate_http.go
		return nil, t.refuse("profile %s (fasthttp): %v", prof.Name, err)
	}
	oc := &dataplane.OneConnect{Profile: prof.Name, MaxSize: atoi(get(fhMaxSize)), MaxReuse: atoi(get(fhMaxReuse)), LimitType: "none"}
	if oc.MaxSize <= 0 {
		return nil, t.refuse("profile %s (fasthttp): connpool-max-size %s: expected a number of connections of at least 1", prof.Name, get(fhMaxSize))
	}
	if oc.MaxReuse <= 0 {
		oc.MaxReuse = math.MaxInt32
	}
	if n := atoi(get(fhIdleOverride)); n > 0 {
		oc.IdleTimeoutOverride = secondsOf(int64(n))
	}
	v.IdleTimeout = seconds(get(fhIdle))
	return &dataplane.MBLB{Profile: prof.Name, Request: mblb.Framing{Mode: mblb.HTTP, HTTP: opts}, OneConnect: oc}, true
}

// ntlm turns on the ntlm profile's binding of authenticated member
// connections. BIG-IP's NTLM profile works with the http and one-connect
// profiles (without one-connect nothing is shared, so nothing needs
// binding); openltm refuses it without them [M: the message is
// openltm's].
func (t *translator) ntlm(o *objects.Object, opts *mblb.HTTPOptions) bool {
	p := t.profile(o, profileNTLM)
	if p == nil {
		return true
	}
	if t.profile(o, profileOneConnect) == nil {
		return t.refuse("profile %s (ntlm) requires an http profile and a one-connect profile on the virtual server (%s)", p.Name, o.Name)
	}
	opts.NTLM = true
	return true
}

// ntlmNeedsHTTP refuses an ntlm profile on a virtual without an http
// profile (a fasthttp virtual refuses it in fastHTTP).
func (t *translator) ntlmNeedsHTTP(o *objects.Object) bool {
	p := t.profile(o, profileNTLM)
	if p == nil || t.profile(o, profileHTTP) != nil || t.profile(o, profileFastHTTP) != nil {
		return true
	}
	return t.refuse("%s", fmt.Sprintf("profile %s (ntlm) requires an http profile and a one-connect profile on the virtual server (%s)", p.Name, o.Name))
}
