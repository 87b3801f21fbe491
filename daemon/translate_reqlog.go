package daemon

import (
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/reqlog"
	"github.com/openltm/openltm/objects"
)

var (
	profileRequestLog = schema.MustKind("ltm profile request-log")
	rlRequestLogging  = profileRequestLog.MustProp("request-logging")
	rlRequestPool     = profileRequestLog.MustProp("request-log-pool")
	rlRequestProto    = profileRequestLog.MustProp("request-log-protocol")
	rlRequestTemplate = profileRequestLog.MustProp("request-log-template")
	rlRespLogging     = profileRequestLog.MustProp("response-logging")
	rlRespPool        = profileRequestLog.MustProp("response-log-pool")
	rlRespProto       = profileRequestLog.MustProp("response-log-protocol")
	rlRespTemplate    = profileRequestLog.MustProp("response-log-template")
)

// requestLogOptions is the virtual's request-log profile for its HTTP
// engine: nil without one. Each enabled side needs a template and a
// pool; its lines go over high-speed logging (the hub HSL::send uses).
func (t *translator) requestLogOptions(o *objects.Object) (*mblb.RequestLog, error) {
	p := t.profile(o, profileRequestLog)
	if p == nil {
		return nil, nil
	}
	rl := &mblb.RequestLog{VirtualName: o.Name, Hostname: "openltm"}
	if gs := t.cfg.Get(sysGlobal, ""); gs != nil {
		if h := sysGlobalHostname.Str(gs); h != "" {
			rl.Hostname = h
		}
	}
	if pn := virtualPool.Str(o); pn != "" && pn != "none" {
		rl.PoolName = objects.FullPath("/Common", pn)
	}
	side := func(what string, logging, pool, proto, tmpl *objects.Prop) (*reqlog.Template, func([]byte) bool, error) {
		if logging.Effective(t.cfg, p) != "enabled" {
			return nil, nil, nil
		}
		text := tmpl.Effective(t.cfg, p)
		if text == "" || text == "none" {
			return nil, nil, fmt.Errorf("profile %s: %s-logging is enabled but %s has no template", p.Name, what, tmpl.Name)
		}
		pl := pool.Effective(t.cfg, p)
		if pl == "" || pl == "none" {
			return nil, nil, fmt.Errorf("profile %s: %s-logging is enabled but %s names no pool", p.Name, what, pool.Name)
		}
		hp, err := hslProtocol(proto.Effective(t.cfg, p))
		if err != nil {
			return nil, nil, fmt.Errorf("profile %s: %s %v", p.Name, proto.Name, err)
		}
		tm := reqlog.Parse(text)
		for _, u := range tm.Unknown {
			t.keep(o, "profile %s: %s: $%s is not a variable openltm knows; it is read as a header", p.Name, tmpl.Name, u)
		}
		return tm, t.hslLine(hp, objects.FullPath("/Common", pl)), nil
	}
	var err error
	if rl.Request, rl.SendRequest, err = side("request", rlRequestLogging, rlRequestPool, rlRequestProto, rlRequestTemplate); err != nil {
		return nil, err
	}
	if rl.Response, rl.SendResponse, err = side("response", rlRespLogging, rlRespPool, rlRespProto, rlRespTemplate); err != nil {
		return nil, err
	}
	return rl, nil
}

// hslProtocol reads a request-log protocol: mds-udp or mds-tcp, as
// bigip.conf writes them, or UDP and TCP, as the REST interface does.
func hslProtocol(v string) (string, error) {
	switch strings.ToLower(v) {
	case "mds-udp", "udp", "":
		return "UDP", nil
	case "mds-tcp", "tcp":
		return "TCP", nil
	}
	return "", fmt.Errorf("%q is not mds-udp or mds-tcp", v)
}

// hslLine is a request-log line's way to its pool: the HSL sender for
// the pool and protocol, opened at the first line (the hub is the
// running dataplane's, which a commit's translation may precede).
func (t *translator) hslLine(proto, pool string) func([]byte) bool {
	if t.rules == nil || t.rules.e == nil {
		return nil
	}
	sw := &t.rules.e.rules.rt.hsl
	var handle atomic.Pointer[string]
	return func(b []byte) bool {
		h := handle.Load()
		if h == nil {
			s, err := sw.Open(proto, pool)
			if err != nil {
				return false
			}
			h = &s
			handle.Store(h)
		}
		ok, _ := sw.Send(*h, b)
		return ok
	}
}

// requestLogNeedsHTTP refuses a request-log profile on a virtual server
// without an http profile: there are no requests to log [M: BIG-IP's
// message is not known; this one is ours].
func (t *translator) requestLogNeedsHTTP(o *objects.Object) bool {
	if rp := t.profile(o, profileRequestLog); rp != nil && t.profile(o, profileHTTP) == nil {
		msg := fmt.Sprintf("profile %s (request-log) requires an http profile on the virtual server (%s)", rp.Name, o.Name)
		t.skipped = append(t.skipped, msg)
		t.refused = append(t.refused, msg)
		return false
	}
	return true
}
