package daemon

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/openltm/openltm/dataplane/icap"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/objects"
)

var (
	profileICAP          = schema.MustKind("ltm profile icap")
	profileRequestAdapt  = schema.MustKind("ltm profile request-adapt")
	profileResponseAdapt = schema.MustKind("ltm profile response-adapt")
	icapURI              = profileICAP.MustProp("uri")
	icapPreview          = profileICAP.MustProp("preview-length")
	icapHeaderFrom       = profileICAP.MustProp("header-from")
	icapHost             = profileICAP.MustProp("host")
	icapReferer          = profileICAP.MustProp("referer")
	icapUserAgent        = profileICAP.MustProp("user-agent")
	virtualInternal      = ltmVirtual.MustProp("internal")
	specVirtual          = schema.MustSpec("ltm virtual")
)

// icapConnectTimeout bounds the connect to an ICAP server when the adapt
// profile sets no timeout, or a longer one [M].
const icapConnectTimeout = mblb.AdaptConnectTimeout

// isInternal reports whether o is an internal virtual server: it listens
// nowhere, and serves the adapt profiles that name it.
func isInternal(o *objects.Object) bool { return virtualInternal.Str(o) == "internal" }

// adaptNeedsHTTP refuses a virtual with a request-adapt or
// response-adapt profile and no http profile: adaptation works on HTTP
// messages [M: BIG-IP's wording].
func (t *translator) adaptNeedsHTTP(o *objects.Object) bool {
	if ap := t.profile(o, profileRequestAdapt, profileResponseAdapt); ap != nil && t.profile(o, profileHTTP) == nil {
		return t.refuse("profile %s (%s) requires an http profile on the virtual server (%s)", ap.Name, ap.Kind.Key()[len("ltm profile "):], o.Name)
	}
	return true
}

// adaptOptions reads the virtual's adapt profile of kind (request-adapt
// or response-adapt) for its HTTP engine: nil without one or with
// enabled no. The internal virtual it names must have an icap profile
// with a uri; without an internal virtual, or one without a pool, no
// ICAP server is ever available and service-down-action applies to
// every message [M].
func (t *translator) adaptOptions(o *objects.Object, kind *objects.Kind) (*mblb.Adapt, error) {
	p := t.profile(o, kind)
	if p == nil {
		return nil, nil
	}
	e := func(name string) string { return kind.MustProp(name).Effective(t.cfg, p) }
	if e("enabled") == "no" {
		return nil, nil
	}
	a := &mblb.Adapt{Profile: p.Name, HTTP10: e("allow-http-10") == "yes", Service: &icap.Service{ConnectTimeout: icapConnectTimeout}}
	switch e("service-down-action") {
	case "drop":
		a.Down = mblb.AdaptDrop
	case "reset":
		a.Down = mblb.AdaptReset
	}
	ms, err := strconv.ParseUint(e("timeout"), 10, 32)
	if err != nil {
		return nil, fmt.Errorf("profile %s: timeout %q: want milliseconds from 0 (none)", p.Name, e("timeout"))
	}
	if ms > 0 {
		a.Service.Timeout = time.Duration(ms) * time.Millisecond
		a.Service.ConnectTimeout = min(a.Service.Timeout, icapConnectTimeout)
	}
	size, err := strconv.ParseUint(e("preview-size"), 10, 31)
	if err != nil {
		return nil, fmt.Errorf("profile %s: preview-size %q: want bytes from 0", p.Name, e("preview-size"))
	}
	a.PreviewSize = int(size)
	a.Targets = t.adaptTargets()
	iv := e("internal-virtual")
	if iv == "" || iv == "none" {
		return a, nil
	}
	vs := t.cfg.Lookup(t.s, specVirtual, iv)
	if vs == nil {
		return nil, fmt.Errorf("profile %s: virtual server %s does not exist", p.Name, iv)
	}
	tg, err := t.adaptTarget(vs)
	if err != nil {
		return nil, fmt.Errorf("profile %s: %v", p.Name, err)
	}
	a.Select(tg)
	return a, nil
}

// adaptTarget reads an internal virtual server as adapt profiles reach
// it: its icap profile (which must have a uri) and its pool (none: no
// ICAP server is ever available).
func (t *translator) adaptTarget(vs *objects.Object) (*mblb.AdaptTarget, error) {
	tg := &mblb.AdaptTarget{Internal: vs.Name}
	ip := t.profile(vs, profileICAP)
	if ip == nil {
		return nil, fmt.Errorf("internal virtual server %s has no icap profile", vs.Name)
	}
	uri := icapURI.Effective(t.cfg, ip)
	if uri == "" || uri == "none" {
		return nil, fmt.Errorf("icap profile %s has no uri", ip.Name)
	}
	tg.Service.URI = uri
	pl, err := strconv.ParseUint(icapPreview.Effective(t.cfg, ip), 10, 31)
	if err != nil {
		return nil, fmt.Errorf("preview-length %q of %s: want bytes from 0", icapPreview.Effective(t.cfg, ip), ip.Name)
	}
	tg.PreviewLength = int(pl)
	none := func(s string) string {
		if s == "none" {
			return ""
		}
		return s
	}
	tg.Service.From = none(icapHeaderFrom.Effective(t.cfg, ip))
	tg.Service.Host = none(icapHost.Effective(t.cfg, ip))
	tg.Service.Referer = none(icapReferer.Effective(t.cfg, ip))
	tg.Service.UserAgent = none(icapUserAgent.Effective(t.cfg, ip))
	ir, err := t.rules.icapRulesOf(t.s, t.cfg, vs) // translate_icaprules.go
	if err != nil {
		return nil, fmt.Errorf("internal virtual server %s: %v", vs.Name, err)
	}
	if ir != nil {
		tg.Rules = ir
	}
	if pn := virtualPool.Str(vs); pn != "" && pn != "none" {
		if pool := t.cfg.Lookup(t.s, specPool, pn); pool != nil {
			tg.Pool = pool.Name
		}
	}
	return tg, nil
}

// adaptTargets are the internal virtual servers ADAPT::select may
// choose, by name (full and without its folder): those with an icap
// profile and a uri.
func (t *translator) adaptTargets() map[string]*mblb.AdaptTarget {
	m := map[string]*mblb.AdaptTarget{}
	for _, vs := range t.cfg.Of(ltmVirtual) {
		if !isInternal(vs) {
			continue
		}
		if tg, err := t.adaptTarget(vs); err == nil {
			m[vs.Name] = tg
			m[vs.Name[strings.LastIndexByte(vs.Name, '/')+1:]] = tg
		}
	}
	return m
}
