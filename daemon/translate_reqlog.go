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

	rlRequestErrors   = profileRequestLog.MustProp("log-request-logging-errors")
	rlRequestErrPool  = profileRequestLog.MustProp("request-log-error-pool")
	rlRequestErrProto = profileRequestLog.MustProp("request-log-error-protocol")
	rlRequestErrTmpl  = profileRequestLog.MustProp("request-log-error-template")
	rlRespErrors      = profileRequestLog.MustProp("log-response-logging-error")
	rlRespErrPool     = profileRequestLog.MustProp("response-log-error-pool")
	rlRespErrProto    = profileRequestLog.MustProp("response-log-error-protocol")
	rlRespErrTmpl     = profileRequestLog.MustProp("response-log-error-template")
	rlRespond         = profileRequestLog.MustProp("proxy-respond-on-logging-error")
	rlRespondText     = profileRequestLog.MustProp("proxy-response")
	rlCloseOnError    = profileRequestLog.MustProp("proxy-close-on-error")
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
	type sideLog struct {
		tm    *reqlog.Template
		proto string
		pool  string
	}
	// side reads one side's template, pool and protocol; enabled names
	// the setting that turned it on, for errors.
	side := func(enabled string, logging, pool, proto, tmpl *objects.Prop) (*sideLog, error) {
		if logging.Effective(t.cfg, p) != "enabled" {
			return nil, nil
		}
		text := tmpl.Effective(t.cfg, p)
		if text == "" || text == "none" {
			return nil, fmt.Errorf("profile %s: %s is enabled but %s has no template", p.Name, enabled, tmpl.Name)
		}
		pl := pool.Effective(t.cfg, p)
		if pl == "" || pl == "none" {
			return nil, fmt.Errorf("profile %s: %s is enabled but %s names no pool", p.Name, enabled, pool.Name)
		}
		hp, err := hslProtocol(proto.Effective(t.cfg, p))
		if err != nil {
			return nil, fmt.Errorf("profile %s: %s %v", p.Name, proto.Name, err)
		}
		tm := reqlog.Parse(text)
		for _, u := range tm.Unknown {
			t.keep(o, "profile %s: %s: $%s is not a variable openltm knows; it is read as a header", p.Name, tmpl.Name, u)
		}
		return &sideLog{tm: tm, proto: hp, pool: objects.FullPath("/Common", pl)}, nil
	}
	// errorSide is a side's error logging, when that side logs and its
	// errors are to be logged.
	errorSide := func(main *sideLog, enabled string, flag, pool, proto, tmpl *objects.Prop) (*mblb.ErrorLog, error) {
		if main == nil {
			return nil, nil
		}
		sl, err := side(enabled, flag, pool, proto, tmpl)
		if sl == nil || err != nil {
			return nil, err
		}
		return &mblb.ErrorLog{Template: sl.tm, Send: t.hslLine(sl.proto, sl.pool)}, nil
	}
	req, err := side("request-logging", rlRequestLogging, rlRequestPool, rlRequestProto, rlRequestTemplate)
	if err != nil {
		return nil, err
	}
	resp, err := side("response-logging", rlRespLogging, rlRespPool, rlRespProto, rlRespTemplate)
	if err != nil {
		return nil, err
	}
	if rl.RequestError, err = errorSide(req, rlRequestErrors.Name, rlRequestErrors, rlRequestErrPool, rlRequestErrProto, rlRequestErrTmpl); err != nil {
		return nil, err
	}
	if rl.ResponseError, err = errorSide(resp, rlRespErrors.Name, rlRespErrors, rlRespErrPool, rlRespErrProto, rlRespErrTmpl); err != nil {
		return nil, err
	}
	if req != nil {
		rl.Request, rl.SendRequest = req.tm, t.hslLine(req.proto, req.pool)
		if rlRespond.Effective(t.cfg, p) == "enabled" {
			body := rlRespondText.Effective(t.cfg, p)
			if body == "none" {
				body = ""
			}
			rl.CloseOnError = rlCloseOnError.Effective(t.cfg, p) == "enabled"
			rl.Respond = mblb.LoggingErrorResponse(body, rl.CloseOnError)
		}
		if rl.RequestError != nil || rl.Respond != nil {
			rl.CheckRequest = t.hslChecked(req.proto, req.pool)
		}
	}
	if resp != nil {
		rl.Response, rl.SendResponse = resp.tm, t.hslLine(resp.proto, resp.pool)
		if rl.ResponseError != nil {
			rl.CheckResponse = t.hslChecked(resp.proto, resp.pool)
		}
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

// hslChecked is hslLine for a side whose failures are handled: the
// line is refused when its pool cannot take it now (hsl.SendChecked),
// and dropped is called when it is queued but no member then takes it.
func (t *translator) hslChecked(proto, pool string) mblb.RequestLogSend {
	if t.rules == nil || t.rules.e == nil {
		return nil
	}
	sw := &t.rules.e.rules.rt.hsl
	var handle atomic.Pointer[string]
	return func(b []byte, dropped func([]byte)) bool {
		hub := sw.hub.Load()
		if hub == nil {
			return false
		}
		h := handle.Load()
		if h == nil {
			s, err := hub.Open(proto, pool)
			if err != nil {
				return false
			}
			h = &s
			handle.Store(h)
		}
		return hub.SendChecked(*h, b, dropped)
	}
}

// requestLogNeedsHTTP refuses a request-log profile on a virtual server
// without an http profile: there are no requests to log [M: BIG-IP's
// message is not known; this one is ours].
func (t *translator) requestLogNeedsHTTP(o *objects.Object) bool {
	return t.needsHTTPProfile(o, profileRequestLog)
}
