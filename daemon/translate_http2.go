package daemon

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/h2gw"
	"github.com/openltm/openltm/dataplane/h2member"
	"github.com/openltm/openltm/dataplane/tlsprof"
	"github.com/openltm/openltm/objects"
)

var (
	profileHTTP2       = schema.MustKind("ltm profile http2")
	profileHTTPRouter  = schema.MustKind("ltm profile httprouter")
	h2Modes            = profileHTTP2.MustProp("activation-modes")
	h2Streams          = profileHTTP2.MustProp("concurrent-streams-per-connection")
	h2Idle             = profileHTTP2.MustProp("connection-idle-timeout")
	h2EnforceTLS       = profileHTTP2.MustProp("enforce-tls-requirements")
	h2HeaderTable      = profileHTTP2.MustProp("header-table-size")
	h2InsertHeader     = profileHTTP2.MustProp("insert-header")
	h2InsertHeaderName = profileHTTP2.MustProp("insert-header-name")
	h2ReceiveWindow    = profileHTTP2.MustProp("receive-window")
	h2FrameSize        = profileHTTP2.MustProp("frame-size")
	h2WriteSize        = profileHTTP2.MustProp("write-size")
	h2ContentLength    = profileHTTP2.MustProp("include-content-length")
	virtualSourcePort  = ltmVirtual.MustProp("source-port")
)

// http2Stats keeps each http2 profile's counters across commits, for
// `show ltm profile http2`: the virtuals using a profile count into one.
type http2Stats struct {
	mu  sync.Mutex
	m   map[string]*h2gw.Stats
	srv map[string]*h2member.Stats // the server side's, by profile
}

// get returns profile's counters, made on first use.
func (h *http2Stats) get(profile string) *h2gw.Stats {
	if h == nil {
		return new(h2gw.Stats)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = map[string]*h2gw.Stats{}
	}
	st := h.m[profile]
	if st == nil {
		st = new(h2gw.Stats)
		h.m[profile] = st
	}
	return st
}

// server returns profile's server-side counters, made on first use.
func (h *http2Stats) server(profile string) *h2member.Stats {
	if h == nil {
		return new(h2member.Stats)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.srv == nil {
		h.srv = map[string]*h2member.Stats{}
	}
	st := h.srv[profile]
	if st == nil {
		st = new(h2member.Stats)
		h.srv[profile] = st
	}
	return st
}

// lookupServer is a profile's server-side counters, nil before any
// virtual used it on that side.
func (h *http2Stats) lookupServer(profile string) *h2member.Stats {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.srv[profile]
}

// lookup is a profile's counters, nil before any virtual used it.
func (h *http2Stats) lookup(profile string) *h2gw.Stats {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.m[profile]
}

// http2Config reads an http2 profile's effective properties, within
// BIG-IP's ranges: header-table-size 0-65535 and frame-size 1024-16384
// (F5's documentation); concurrent-streams-per-connection 1-256,
// receive-window 16-128 KB and write-size 2048-32768 [M].
func (t *translator) http2Config(p *objects.Object) (*dataplane.HTTP2, error) {
	e := func(pr *objects.Prop) string { return pr.Effective(t.cfg, p) }
	num := func(pr *objects.Prop, lo, hi int64) (int64, error) {
		n, err := strconv.ParseInt(e(pr), 10, 64)
		if err != nil || n < lo || n > hi {
			return 0, fmt.Errorf("%s %q must be a number from %d to %d", pr.Name, e(pr), lo, hi)
		}
		return n, nil
	}
	streams, err := num(h2Streams, 1, 256)
	if err != nil {
		return nil, err
	}
	idle, err := num(h2Idle, 0, 1<<31-1)
	if err != nil {
		return nil, err
	}
	table, err := num(h2HeaderTable, 0, 65535)
	if err != nil {
		return nil, err
	}
	window, err := num(h2ReceiveWindow, 16, 128)
	if err != nil {
		return nil, err
	}
	frame, err := num(h2FrameSize, 1024, 16384)
	if err != nil {
		return nil, err
	}
	write, err := num(h2WriteSize, 2048, 32768)
	if err != nil {
		return nil, err
	}
	h := &dataplane.HTTP2{Config: h2gw.Config{
		Profile:                 p.Name,
		MaxConcurrentStreams:    uint32(streams),
		IdleTimeout:             time.Duration(idle) * time.Second,
		HeaderTableSize:         uint32(table),
		ReceiveWindow:           int32(window * 1024),
		PermitProhibitedCiphers: e(h2EnforceTLS) == "disabled",
		FrameSize:               int(frame),
		WriteSize:               int(write),
		DropContentLength:       e(h2ContentLength) != "enabled",
	}}
	if e(h2InsertHeader) == "enabled" {
		h.InsertHeader = e(h2InsertHeaderName)
		if h.InsertHeader == "" || h.InsertHeader == "none" {
			return nil, fmt.Errorf("insert-header is enabled without an insert-header-name")
		}
	}
	if v := t.cfg.Effective(p, h2Modes.Name); v != nil {
		for _, m := range v.List {
			switch m {
			case "alpn":
				h.ALPN = true
			case "always":
				h.Always = true
			default:
				return nil, fmt.Errorf("activation-modes %q is not alpn or always", m)
			}
		}
	}
	if h.ALPN && h.Always {
		return nil, fmt.Errorf("activation-modes alpn and always are mutually exclusive")
	}
	return h, nil
}

// http2Profile checks an http2 profile whether or not a virtual uses it:
// a value out of range is refused when the profile is made or changed.
func (t *translator) http2Profile(o *objects.Object) {
	if _, err := t.http2Config(o); err != nil {
		t.skip(o, "profile %s: %v", o.Name, err)
	}
}

// http2Sides finds the virtual's http2 profiles by side, as BIG-IP
// 14.1+ applies a profile's context: clientside serves clients,
// serverside speaks HTTP/2 to members, all does both. Before 14.1 an
// http2 profile was the client side's only, and `http2 { }` (context
// all) on a virtual without an httprouter profile keeps meaning that
// here [M: so that such configurations keep loading]. It also reports
// whether the virtual has the httprouter profile, and refuses two
// profiles for one side.
func (t *translator) http2Sides(o *objects.Object) (client, server *objects.Object, serverCtx string, router bool, err error) {
	v := virtualProfiles.Get(o)
	if v == nil {
		return nil, nil, "", false, nil
	}
	find := func(k *objects.Kind, name string) *objects.Object {
		if p := t.cfg.Get(k, name); p != nil {
			return p
		}
		return t.cfg.Lookup(t.s, []string{k.Key()}, name)
	}
	type side struct {
		p   *objects.Object
		ctx string
	}
	var sides []side
	for _, it := range v.Items {
		if find(profileHTTPRouter, it.Name) != nil {
			router = true
			continue
		}
		p := find(profileHTTP2, it.Name)
		if p == nil {
			continue
		}
		ctx := "all"
		if c := it.Props["context"]; c != nil && c.Str != "" {
			ctx = c.Str
		}
		sides = append(sides, side{p, ctx})
	}
	for _, sd := range sides {
		if sd.ctx == "clientside" || sd.ctx == "all" {
			if client != nil {
				return nil, nil, "", false, fmt.Errorf("virtual server %s has two http2 profiles on the client side (%s, %s); give one context clientside and the other serverside", o.Name, client.Name, sd.p.Name)
			}
			client = sd.p
		}
		if sd.ctx == "serverside" || sd.ctx == "all" && router {
			if server != nil {
				return nil, nil, "", false, fmt.Errorf("virtual server %s has two http2 profiles on the server side (%s, %s); give one context clientside and the other serverside", o.Name, server.Name, sd.p.Name)
			}
			server, serverCtx = sd.p, sd.ctx
		}
	}
	return client, server, serverCtx, router, nil
}

// http2 fills the virtual's HTTP/2 settings from its http2 profiles, on
// the client side (h2gw) and on the server side (h2member). It returns
// false when the virtual was left out.
//
// What is refused, as BIG-IP refuses it [M: the messages are ours]: an
// http2 profile without an http profile; on the client side,
// activation-modes alpn without a client-ssl profile; on the server
// side, no httprouter profile, OneConnect, and hash or ssl persistence
// (F5's HTTP/2 full-proxy constraints), and the virtual's source-port
// preserve-strict (shared member connections keep no client's port [M]);
// an httprouter profile without an http profile.
func (t *translator) http2(o *objects.Object, v *dataplane.Virtual) bool {
	p, server, serverCtx, router, err := t.http2Sides(o)
	if err != nil {
		return t.refuse("%v", err)
	}
	hasHTTP := t.profile(o, profileHTTP) != nil && v.MBLB != nil
	if router && !hasHTTP {
		return t.refuse("profile httprouter requires an http profile on the virtual server (%s)", o.Name)
	}
	if router && !t.httpRouter(o, v) { // translate_httprouter.go
		return false
	}
	if server != nil && !t.http2Server(o, v, server, serverCtx, router, hasHTTP) {
		return false
	}
	if p == nil {
		return true
	}
	if !hasHTTP {
		return t.refuse("profile %s (http2) requires an http profile on the virtual server (%s)", p.Name, o.Name)
	}
	h, err := t.http2Config(p)
	if err != nil {
		t.skip(o, "profile %s: %v", p.Name, err)
		return false
	}
	tlsClient := v.TLS != nil && v.TLS.Client != nil
	if h.ALPN && !tlsClient {
		return t.refuse("profile %s (http2) with activation-modes alpn requires a client-ssl profile on the virtual server (%s); activation-modes always serves HTTP/2 in cleartext", p.Name, o.Name)
	}
	if tlsClient && (h.ALPN || h.Always) {
		// Over TLS, always too offers h2 in the handshake [M]: clients
		// ask for it there.
		v.TLS.Client = tlsprof.WithALPN(v.TLS.Client, "h2", "http/1.1")
		h.ALPN = true
	}
	var st *http2Stats
	if t.rules != nil && t.rules.e != nil {
		st = &t.rules.e.h2stats
	}
	h.Stats = st.get(p.Name)
	v.HTTP2 = h
	return true
}

// http2Server applies the http2 profile p of the virtual's server side:
// requests go to members as HTTP/2 streams, in cleartext with prior
// knowledge, or over the server-ssl profile with ALPN h2 (whatever
// activation-modes says: it is the client side's [M]).
func (t *translator) http2Server(o *objects.Object, v *dataplane.Virtual, p *objects.Object, ctx string, router, hasHTTP bool) bool {
	if !hasHTTP {
		return t.refuse("profile %s (http2, context %s) requires an http profile on the virtual server (%s)", p.Name, ctx, o.Name)
	}
	if !router {
		return t.refuse("profile %s (http2, context %s) requires an httprouter profile on the virtual server (%s): add httprouter { } to its profiles", p.Name, ctx, o.Name)
	}
	if v.MBLB.OneConnect != nil {
		return t.refuse("profile %s (http2, context %s) cannot be used with a one-connect profile on the virtual server (%s): HTTP/2 to members shares member connections itself", p.Name, ctx, o.Name)
	}
	for _, ps := range []*dataplane.Persistence{v.Persist, v.FallbackPersist} {
		if ps != nil && (ps.Method == dataplane.PersistHash || ps.Method == dataplane.PersistSSL) {
			return t.refuse("profile %s (http2, context %s) cannot be used with %s persistence (%s) on the virtual server (%s); source-addr, cookie, universal and dest-addr persistence can", p.Name, ctx, ps.Method, ps.Profile, o.Name)
		}
	}
	if virtualSourcePort.Str(o) == "preserve-strict" {
		// [M: F5 does not say what its HTTP/2 full proxy makes of it]
		return t.refuse("ltm virtual %s: source-port preserve-strict cannot be kept with profile %s (http2, context %s): its member connections are HTTP/2 connections shared by the requests of many clients, so no one client's port is theirs to keep; use source-port preserve or change", o.Name, p.Name, ctx)
	}
	h2StrictSNATs(t, o, v, p)
	h, err := t.http2Config(p)
	if err != nil {
		t.skip(o, "profile %s: %v", p.Name, err)
		return false
	}
	var st *http2Stats
	if t.rules != nil && t.rules.e != nil {
		st = &t.rules.e.h2stats
	}
	v.MBLB.MemberHTTP2 = &h2member.Config{
		Profile:              p.Name,
		MaxConcurrentStreams: h.MaxConcurrentStreams,
		IdleTimeout:          h.IdleTimeout,
		HeaderTableSize:      h.HeaderTableSize,
		ReceiveWindow:        h.ReceiveWindow,
		Stats:                st.server(p.Name),
	}
	return true
}

// h2StrictSNATs warns, naming the virtual o, of the ltm snats with
// source-port preserve-strict that may translate its HTTP/2 member
// connections (its own source-address-translation is none, the only
// case where ltm snats apply): those connections take any port on the
// translation address, as one carries many clients' requests.
func h2StrictSNATs(t *translator, o *objects.Object, v *dataplane.Virtual, p *objects.Object) {
	if v.SNAT.Type != dataplane.SNATNone && v.SNAT.Type != "" {
		return
	}
	var names []string
	for _, x := range t.dc.SNATs {
		if x.StrictPort {
			names = append(names, x.Name)
		}
	}
	if len(names) == 0 {
		return
	}
	t.note(o, "the member connections of profile %s (http2) take any port on the translation address of ltm snat %s, whose source-port preserve-strict they do not keep: one HTTP/2 connection carries many clients' requests, so no one client's port is its own", p.Name, strings.Join(names, ", "))
}
