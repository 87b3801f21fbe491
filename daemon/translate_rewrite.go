package daemon

import (
	"fmt"

	"github.com/openltm/openltm/dataplane/rewrite"
	"github.com/openltm/openltm/objects"
)

var (
	profileRewrite = schema.MustKind("ltm profile rewrite")
	rewriteMode    = profileRewrite.MustProp("rewrite-mode")
	rewriteURIs    = profileRewrite.MustProp("uri-rules")
	rewriteCookies = profileRewrite.MustProp("set-cookie-rules")
	rewriteBypass  = profileRewrite.MustProp("bypass-list")
)

// subStr is the setting name of the block blk of a collection item (def
// when unset or none).
func subStr(it *objects.Item, blk, name, def string) string {
	v := it.Props[blk]
	if v == nil || v.Sub == nil {
		return def
	}
	s := v.Sub.Props[name]
	if s == nil || s.Str == "" || s.Str == "none" {
		return def
	}
	return s.Str
}

// rewriteCompile reads a rewrite profile's uri-translation settings
// (checked in either mode, as BIG-IP checks a rule when it is typed).
func (t *translator) rewriteCompile(p *objects.Object) (*rewrite.Profile, error) {
	rp := &rewrite.Profile{Name: p.Name}
	if v := t.cfg.Effective(p, rewriteURIs.Name); v != nil {
		for _, it := range v.Items {
			side := func(s string) (rewrite.URI, error) {
				u, err := rewrite.Make(subStr(it, s, "scheme", ""), subStr(it, s, "host", ""), subStr(it, s, "port", ""), subStr(it, s, "path", "/"))
				if err != nil {
					return u, fmt.Errorf("uri-rules %s: %s: %v (an absolute URI ending in /)", it.Name, s, err)
				}
				return u, nil
			}
			c, err := side("client")
			if err != nil {
				return nil, err
			}
			s, err := side("server")
			if err != nil {
				return nil, err
			}
			typ := "both"
			if tv := it.Props["type"]; tv != nil && tv.Str != "" {
				typ = tv.Str
			}
			rp.Rules = append(rp.Rules, rewrite.Rule{Name: it.Name, Client: c, Server: s, Request: typ != "response", Response: typ != "request"})
		}
	}
	if v := t.cfg.Effective(p, rewriteCookies.Name); v != nil {
		for _, it := range v.Items {
			rp.Cookies = append(rp.Cookies, rewrite.CookieRule{Name: it.Name,
				ClientDomain: subStr(it, "client", "domain", ""), ClientPath: subStr(it, "client", "path", ""),
				ServerDomain: subStr(it, "server", "domain", ""), ServerPath: subStr(it, "server", "path", "")})
		}
	}
	if v := t.cfg.Effective(p, rewriteBypass.Name); v != nil {
		for _, u := range v.List {
			if u != "none" && u != "" {
				rp.Bypass = append(rp.Bypass, u)
			}
		}
	}
	on := func(blk, name string) bool {
		v := t.cfg.Effective(p, blk)
		if v == nil || v.Sub == nil {
			return false
		}
		s := v.Sub.Props[name]
		return s != nil && s.Str == "enabled"
	}
	rp.XFF, rp.XFHost, rp.XFProto = on("request", "insert-xfwd-for"), on("request", "insert-xfwd-host"), on("request", "insert-xfwd-protocol")
	rp.RequestHeaders = on("request", "rewrite-headers")
	rp.Content, rp.ResponseHeaders = on("response", "rewrite-content"), on("response", "rewrite-headers")
	if err := rp.Check(); err != nil {
		return nil, err
	}
	return rp, nil
}

// rewriteProfile checks a rewrite profile whether or not a virtual uses
// it: a uri-rule whose client or server is no absolute URI ending in /
// is refused when the profile is made or changed.
func (t *translator) rewriteProfile(o *objects.Object) {
	if o.BuiltIn {
		return // (the parents have no rules)
	}
	if _, err := t.rewriteCompile(o); err != nil {
		t.skip(o, "%v", err)
	}
}

// rewriteOptions is the virtual's rewrite profile for the HTTP engine
// (nil without one). ok false: the virtual is not run, its profile
// being refused, or in portal mode (BIG-IP APM's: kept with a warning,
// as passing its traffic unmapped would be silently different).
func (t *translator) rewriteOptions(o *objects.Object) (rp *rewrite.Profile, ok bool) {
	p := t.profile(o, profileRewrite)
	if p == nil {
		return nil, true
	}
	rp, err := t.rewriteCompile(p)
	if err != nil {
		t.skip(o, "profile %s: %v", p.Name, err)
		return nil, false
	}
	if rewriteMode.Effective(t.cfg, p) != "uri-translation" {
		t.keep(o, "profile %s: rewrite-mode portal is BIG-IP APM's portal access; openltm runs uri-translation only", p.Name)
		return nil, false
	}
	return rp, true
}

// rewriteNeedsHTTP refuses a rewrite profile on a virtual server without
// an http profile: it rewrites HTTP messages, and BIG-IP refuses the
// combination too [M: its message is ours].
func (t *translator) rewriteNeedsHTTP(o *objects.Object) bool {
	return t.needsHTTPProfile(o, profileRewrite)
}
