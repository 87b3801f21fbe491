package daemon

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/objects"
)

// mblb fills the virtual's message-based load balancing settings from its
// mblb or http profile and its one-connect profile. It returns false when
// the virtual was skipped (t.skip says why).
//
// An http profile makes each HTTP request a message: without one-connect
// the engine still balances per connection (every request of a client
// connection to the member of its first), with it per request, as BIG-IP
// does. A one-connect profile without mblb or http is kept but not acted
// on: there is nothing to detach between requests of a plain L4 virtual.
func (t *translator) mblb(o *objects.Object, v *dataplane.Virtual) bool {
	if !t.httpProxyConnectNeedsHTTP(o) { // translate_fwdproxy.go
		return false
	}
	if gp := t.profile(o, profileGTP); gp != nil {
		return t.gtp(o, v, gp) // translate_gtp.go
	}
	if dp, v6 := t.dhcpProfile(o); dp != nil {
		return t.dhcp(o, v, dp, v6) // translate_dhcp.go
	}
	if tp := t.profile(o, profileTFTP); tp != nil {
		return t.tftp(o, v, tp) // translate_tftp.go
	}
	if rp := t.profile(o, profileRADIUS); rp != nil {
		return t.radius(o, v, rp) // translate_radius.go
	}
	if ip := t.profile(o, profileIIOP); ip != nil {
		return t.iiop(o, v, ip) // translate_iiop.go
	}
	if sp := t.profile(o, profileSIP); sp != nil {
		return t.sip(o, v, sp) // translate_sip.go
	}
	if fp := t.profile(o, profileFastHTTP); fp != nil {
		m, ok := t.fastHTTP(o, v, fp) // translate_fasthttp.go
		if ok {
			v.MBLB = m
		}
		return ok
	}
	prof := t.profile(o, profileMBLB)
	var m *dataplane.MBLB
	if prof != nil {
		if !t.streamElsewhere(o) { // translate_stream.go
			return false
		}
		var err error
		m, err = mblbSettings(func(p *objects.Prop) string { return p.Effective(t.cfg, prof) })
		if err != nil {
			t.skip(o, "profile %s: %v", prof.Name, err)
			return false
		}
	} else if prof = t.profile(o, profileHTTP); prof != nil {
		opts, ok := t.httpOptions(o, v, prof)
		if !ok || !t.ntlm(o, &opts) { // translate_fasthttp.go
			return false
		}
		m = &dataplane.MBLB{Request: mblb.Framing{Mode: mblb.HTTP, HTTP: opts}}
		if m.ExplicitProxy, ok = t.explicitProxy(o, v, prof, opts.ServerAgent, opts.MaxHeaderSize); !ok { // translate_fwdproxy.go
			return false
		}
	} else {
		return t.tcpStream(o, v) // translate_stream.go
	}
	m.Profile = prof.Name
	oc, ok := t.mblbOneConnect(o)
	if !ok {
		return false
	}
	m.OneConnect = oc
	v.MBLB = m
	return true
}

// mblbOneConnect is the one-connect profile of a message-based virtual o
// (nil without one), false when its settings are bad (o skipped, said
// why): the mblb and iiop virtuals read it alike.
func (t *translator) mblbOneConnect(o *objects.Object) (*dataplane.OneConnect, bool) {
	oc := t.profile(o, profileOneConnect)
	if oc == nil {
		return nil, true
	}
	s, err := oneConnectSettings(func(p *objects.Prop) string { return p.Effective(t.cfg, oc) })
	if err != nil {
		t.skip(o, "profile %s: %v", oc.Name, err)
		return nil, false
	}
	s.Profile = oc.Name
	return s, true
}

// warnMinConn tells of each virtual that a commit gives an mblb profile
// whose min-conn has nothing to act on: with a one-connect profile,
// connections opened ahead of need serve whoever comes only when every
// client shares them (source-mask any). Without one-connect a client
// takes one as its own.
func warnMinConn(s *objects.Schema, old, cfg *objects.Config, warn func(string)) {
	was := map[string]bool{}
	if old != nil {
		for _, m := range minConnUnused(s, old) {
			was[m] = true
		}
	}
	for _, m := range minConnUnused(s, cfg) {
		if !was[m] {
			warn(m)
		}
	}
}

// minConnUnused is warnMinConn's list for one configuration.
func minConnUnused(s *objects.Schema, cfg *objects.Config) []string {
	t := &translator{s: s, cfg: cfg}
	var out []string
	for _, o := range cfg.Of(ltmVirtual) {
		prof := t.profile(o, profileMBLB)
		if prof == nil {
			continue
		}
		n := atoi(mblbMinConn.Effective(cfg, prof))
		if n <= 0 {
			continue
		}
		oc := t.profile(o, profileOneConnect)
		if oc == nil {
			continue // each client takes one as its own (spare.go in dataplane/mblb)
		}
		st, err := oneConnectSettings(func(p *objects.Prop) string { return p.Effective(cfg, oc) })
		if err != nil || !st.SourceMask.IsValid() || st.SourceMask.IsUnspecified() {
			continue
		}
		out = append(out, about(o, "profile %s: min-conn %d is kept, and not acted on with a one-connect profile whose source-mask is not any (a connection opened ahead would serve one source group only)", prof.Name, n))
	}
	return out
}

// mblbSettings reads an mblb profile's effective properties.
func mblbSettings(get func(*objects.Prop) string) (*dataplane.MBLB, error) {
	m := &dataplane.MBLB{
		MaxMessageSize: atoi(get(mblbMaxMessage)),
		MaxInFlight:    atoi(get(mblbMaxInFlight)),
		DisableRetry:   get(mblbRetry) == "disabled",
		PropagateAbort: get(mblbIsolateAbort) == "disabled",
		// The other isolate-* switches (isolate.go in dataplane/mblb).
		PropagateServerClose: get(mblbIsolateServer) == "disabled",
		PropagateExpire:      get(mblbIsolateExpire) == "disabled",
		KeepOnClientClose:    get(mblbIsolateClient) == "enabled",
	}
	if rt := get(mblbRespTimeout); rt != "" && rt != "none" && rt != "0" {
		m.ResponseTimeout = seconds(rt)
	}
	if st := get(mblbShutdown); st != "" && st != "0" {
		n, err := strconv.Atoi(st)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("shutdown-timeout %q: want seconds", st)
		}
		m.ShutdownTimeout = secondsOf(int64(n))
	}
	if mc := get(mblbMinConn); mc != "" && mc != "0" {
		n, err := strconv.Atoi(mc)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("min-conn %q: want a count of connections", mc)
		}
		m.MinConn = n
	}
	// The water marks, in bytes [M]; a high mark of 0 turns its side off.
	marks := [4]int64{}
	for i, p := range []*objects.Prop{mblbIngressHigh, mblbIngressLow, mblbEgressHigh, mblbEgressLow} {
		v := get(p)
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%s %q is not a byte count", p.Name, v)
		}
		marks[i] = n
	}
	if marks[1] > marks[0] {
		return nil, fmt.Errorf("ingress-low %d is above ingress-high %d", marks[1], marks[0])
	}
	if marks[3] > marks[2] {
		return nil, fmt.Errorf("egress-low %d is above egress-high %d", marks[3], marks[2])
	}
	m.Flow = mblb.FlowControl{IngressHigh: marks[0], IngressLow: marks[1], EgressHigh: marks[2], EgressLow: marks[3]}
	f := mblb.Framing{}
	switch get(mblbFraming) {
	case "", "rule":
		f.Mode = mblb.Rule
	case "per-read":
		f.Mode = mblb.PerRead
	case "length":
		f.Mode = mblb.Length
		size, _ := strconv.Atoi(get(mblbLengthSize))
		adj := get(mblbLengthAdjust)
		if adj == "" || adj == "none" {
			adj = "0"
		}
		a, err := strconv.Atoi(adj)
		if err != nil {
			return nil, fmt.Errorf("length-adjust %q is not an integer", adj)
		}
		f.Length = mblb.LengthField{
			Offset:         atoi(get(mblbLengthOffset)),
			Size:           size,
			LittleEndian:   get(mblbLengthOrder) == "little",
			Adjust:         int64(a),
			IncludesHeader: get(mblbLengthHeader) == "enabled",
		}
	case "delimiter":
		f.Mode = mblb.Delimiter
		d, err := unescape(get(mblbDelimiter))
		if err != nil {
			return nil, err
		}
		if len(d) == 0 {
			return nil, fmt.Errorf("framing delimiter needs a delimiter")
		}
		f.Delimiter = d
	default:
		return nil, fmt.Errorf("framing %q is not one of rule, per-read, length, delimiter", get(mblbFraming))
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	m.Request = f
	return m, nil
}

// unescape reads a delimiter as typed: \n, \r, \t, \\ and \xHH.
func unescape(s string) ([]byte, error) {
	if s == "none" {
		return nil, nil
	}
	var out []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			out = append(out, c)
			continue
		}
		i++
		switch s[i] {
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case '\\':
			out = append(out, '\\')
		case 'x':
			if i+3 > len(s) {
				return nil, fmt.Errorf("delimiter %q: \\x needs two hex digits", s)
			}
			b, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
			if err != nil {
				return nil, fmt.Errorf("delimiter %q: bad \\x escape", s)
			}
			out = append(out, byte(b))
			i += 2
		default:
			out = append(out, '\\', s[i])
		}
	}
	return out, nil
}

// oneConnectSettings reads a one-connect profile's effective properties.
func oneConnectSettings(get func(*objects.Prop) string) (*dataplane.OneConnect, error) {
	oc := &dataplane.OneConnect{
		MaxSize:  atoi(get(ocMaxSize)),
		MaxAge:   seconds(get(ocMaxAge)),
		MaxReuse: atoi(get(ocMaxReuse)),
		// (the schema's enum has refused any other limit-type)
		LimitType: get(ocLimitType),
	}
	switch it := get(ocIdleOverride); it {
	case "", "disabled", "0":
	case "indefinite":
		oc.IdleTimeoutOverride = -1
	default:
		n, err := strconv.Atoi(it)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("idle-timeout-override %q: want disabled, indefinite or seconds", it)
		}
		oc.IdleTimeoutOverride = secondsOf(int64(n))
	}
	switch sm := strings.TrimSpace(get(ocSourceMask)); sm {
	case "", "any", "any6", "0.0.0.0":
	default:
		a, err := netip.ParseAddr(sm)
		if err != nil {
			return nil, fmt.Errorf("source-mask %q is not an address mask", sm)
		}
		oc.SourceMask = a
	}
	return oc, nil
}

// httpOptions reads the http profile and, when the virtual's default
// persistence is a cookie profile, its insert settings (reference §6.2,
// §7.2). Cookie persistence without the http profile finds no cookie, and
// the fallback applies, as before.
func (t *translator) httpOptions(o *objects.Object, v *dataplane.Virtual, prof *objects.Object) (mblb.HTTPOptions, bool) {
	opts := mblb.HTTPOptions{
		InsertXFF:       httpInsertXFF.Effective(t.cfg, prof) == "enabled",
		Transformations: httpOCTransforms.Effective(t.cfg, prof) != "disabled",
	}
	if hi := httpHeaderInsert.Effective(t.cfg, prof); strings.Contains(hi, "[") {
		t.keep(o, "profile %s: header-insert %q has iRule commands, which openltm does not evaluate in a profile (an HTTP_REQUEST rule with HTTP::header insert does it)", prof.Name, hi)
		return opts, false
	}
	if err := t.httpProfileDetails(o, prof, &opts); err != nil {
		t.skip(o, "profile %s: %v", prof.Name, err)
		return opts, false
	}
	so, err := t.streamOptions(o) // translate_stream.go
	if err != nil {
		t.skip(o, "%v", err)
		return opts, false
	}
	opts.Stream = so
	var ok bool
	if opts.Rewrite, ok = t.rewriteOptions(o); !ok { // translate_rewrite.go
		return opts, false
	}
	if opts.Compress, err = t.compressOptions(o); err != nil { // translate_compress.go
		t.skip(o, "%v", err)
		return opts, false
	}
	if opts.Cache, err = t.cacheOptions(o); err != nil { // translate_cache.go
		t.skip(o, "%v", err)
		return opts, false
	}
	if opts.WebSocket, err = t.webSocketOptions(o); err != nil { // translate_websocket.go
		t.skip(o, "%v", err)
		return opts, false
	}
	if opts.JSON, err = t.jsonOptions(o); err != nil { // translate_json.go
		t.skip(o, "%v", err)
		return opts, false
	}
	if opts.XML, err = t.xmlProfileOf(o); err != nil { // translate_xml.go
		t.skip(o, "%v", err)
		return opts, false
	}
	if opts.HTML, err = t.htmlOptions(o); err != nil { // translate_html.go
		t.skip(o, "%v", err)
		return opts, false
	}
	if opts.SSE, err = t.sseOptions(o); err != nil { // translate_sse.go
		t.skip(o, "%v", err)
		return opts, false
	}
	if opts.RequestLog, err = t.requestLogOptions(o); err != nil { // translate_reqlog.go
		t.skip(o, "%v", err)
		return opts, false
	}
	opts.SFlow = t.sflowSampler(o, prof)                                             // hook_sflow.go
	if opts.RequestAdapt, err = t.adaptOptions(o, profileRequestAdapt); err != nil { // translate_adapt.go
		t.refuse("%s", about(o, "%v", err))
		return opts, false
	}
	if opts.ResponseAdapt, err = t.adaptOptions(o, profileResponseAdapt); err != nil {
		t.refuse("%s", about(o, "%v", err))
		return opts, false
	}
	cp := t.defaultPersist(o)
	if cp == nil || cp.Kind != persistCookie {
		return opts, true
	}
	spec, mode, ok := t.cookieSettings(o, v, cp) // translate_persist.go
	if !ok {
		return opts, false
	}
	opts.Cookie, opts.CookieMode = spec, mode
	return opts, true
}

// defaultPersist is the persistence profile the virtual applies first:
// the one marked `default yes`, else the first listed.
func (t *translator) defaultPersist(o *objects.Object) *objects.Object {
	name := defaultPersistName(o)
	if name == "" {
		return nil
	}
	return t.cfg.Lookup(t.s, specPersistence, name)
}

// defaultPersistName names the virtual's default persistence profile (the
// one marked `default yes`, else the first listed), or "" when it has none.
func defaultPersistName(o *objects.Object) string {
	pv := virtualPersist.Get(o)
	if pv == nil || len(pv.Items) == 0 {
		return ""
	}
	for _, it := range pv.Items {
		if persistDefault.StrIn(it) == "yes" {
			return it.Name
		}
	}
	return pv.Items[0].Name
}

// cookieExpiration reads a cookie profile's expiration: seconds, or
// [[[days:]hours:]minutes:]seconds; 0 is a session cookie.
func cookieExpiration(s string) (time.Duration, error) {
	if s == "" || s == "0" {
		return 0, nil
	}
	parts := strings.Split(s, ":")
	if len(parts) > 4 {
		return 0, fmt.Errorf("expiration %q: want seconds or days:hours:minutes:seconds", s)
	}
	units := []int64{1, 60, 3600, 24 * 3600} // seconds
	var secs int64
	for i := range parts {
		n, err := strconv.Atoi(parts[len(parts)-1-i])
		if err != nil || n < 0 {
			return 0, fmt.Errorf("expiration %q: want seconds or days:hours:minutes:seconds", s)
		}
		secs += min(int64(n), maxSeconds) * units[i] // cannot overflow
	}
	return secondsOf(secs), nil
}
