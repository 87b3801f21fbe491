package daemon

import (
	"fmt"
	"strings"

	"github.com/openltm/openltm/dataplane/hsl"
	"github.com/openltm/openltm/dataplane/logpub"
	"github.com/openltm/openltm/dataplane/syslog"
	"github.com/openltm/openltm/objects"
)

// The log publishers' kinds: HSL::open -publisher sends through them.
var (
	logDestHSL        = schema.MustKind("sys log-config destination remote-high-speed-log")
	logDestHSLPool    = logDestHSL.MustProp("pool-name")
	logDestHSLProto   = logDestHSL.MustProp("protocol")
	logDestHSLDist    = logDestHSL.MustProp("distribution")
	logDestSyslog     = schema.MustKind("sys log-config destination remote-syslog")
	logDestSyslogHSL  = logDestSyslog.MustProp("remote-high-speed-log")
	logDestSyslogFmt  = logDestSyslog.MustProp("format")
	logDestSyslogFac  = logDestSyslog.MustProp("default-facility")
	logDestSyslogSev  = logDestSyslog.MustProp("default-severity")
	logDestLocal      = schema.MustKind("sys log-config destination local-syslog")
	logPublisher      = schema.MustKind("sys log-config publisher")
	logPublisherDests = logPublisher.MustProp("destinations")
)

// logTranslation is what the log configuration gives the rules: the
// publishers, and what of it is refused (a destination that cannot send)
// or kept without being acted on (destinations of other kinds).
type logTranslation struct {
	pubs          *logpub.Set
	refused, kept []string
	hostname      string
}

// logPublishers reads cfg's publishers and their destinations. A
// destination that cannot send anything is refused, as BIG-IP refuses
// it when it is made [M: BIG-IP's messages and codes for these are not
// known; these are ours].
func logPublishers(cfg *objects.Config) logTranslation {
	var lt logTranslation
	lt.hostname = "openltm"
	if gs := cfg.Get(sysGlobal, ""); gs != nil {
		if h := sysGlobalHostname.Str(gs); h != "" {
			lt.hostname = h
		}
	}
	remotes := map[string]*logpub.Remote{}
	for _, o := range cfg.Of(logDestHSL) {
		if r, err := remoteHSL(cfg, o); err != nil {
			lt.refused = append(lt.refused, about(o, "%v", err))
		} else {
			remotes[o.Name] = r
		}
	}
	syslogs := map[string]*logpub.Destination{}
	for _, o := range cfg.Of(logDestSyslog) {
		d, err := lt.remoteSyslog(cfg, o, remotes)
		if err != nil {
			lt.refused = append(lt.refused, about(o, "%v", err))
			continue
		}
		syslogs[o.Name] = d
	}
	var pubs []*logpub.Publisher
	for _, o := range cfg.Of(logPublisher) {
		p := &logpub.Publisher{Name: o.Name}
		if v := logPublisherDests.Get(o); v != nil {
			for _, it := range v.Items {
				name := objects.FullPath("/Common", it.Name)
				switch {
				case remotes[name] != nil:
					r := remotes[name]
					p.Dests = append(p.Dests, &logpub.Destination{Name: name, Remote: &logpub.Remote{Proto: r.Proto, Pool: r.Pool, Dist: r.Dist}})
				case syslogs[name] != nil:
					d, r := syslogs[name], syslogs[name].Remote
					p.Dests = append(p.Dests, &logpub.Destination{Name: name, Syslog: d.Syslog, Remote: &logpub.Remote{Proto: r.Proto, Pool: r.Pool, Dist: r.Dist}})
				case cfg.Get(logDestLocal, name) != nil:
					p.Dests = append(p.Dests, &logpub.Destination{Name: name, Local: true})
				default:
					lt.kept = append(lt.kept, about(o, "destination %s is not a remote-high-speed-log, remote-syslog or local-syslog: HSL::send messages do not reach it", name))
				}
			}
		}
		pubs = append(pubs, p)
	}
	lt.pubs = logpub.NewSet(pubs)
	return lt
}

// remoteHSL reads a remote-high-speed-log destination.
func remoteHSL(cfg *objects.Config, o *objects.Object) (*logpub.Remote, error) {
	pool := logDestHSLPool.Effective(cfg, o)
	if pool == "" || pool == "none" {
		return nil, fmt.Errorf("pool-name is required: the ltm pool the messages go to")
	}
	proto := strings.ToUpper(logDestHSLProto.Effective(cfg, o))
	if proto != "UDP" && proto != "TCP" {
		return nil, fmt.Errorf("protocol %q: must be udp or tcp", proto)
	}
	dist, err := hsl.ParseDistribution(logDestHSLDist.Effective(cfg, o))
	if err != nil {
		return nil, err
	}
	return &logpub.Remote{Proto: proto, Pool: objects.FullPath("/Common", pool), Dist: dist}, nil
}

// remoteSyslog reads a remote-syslog destination: its header, and the
// remote-high-speed-log it sends through.
func (lt *logTranslation) remoteSyslog(cfg *objects.Config, o *objects.Object, remotes map[string]*logpub.Remote) (*logpub.Destination, error) {
	via := logDestSyslogHSL.Effective(cfg, o)
	if via == "" || via == "none" {
		return nil, fmt.Errorf("remote-high-speed-log is required: the remote-high-speed-log destination the messages go through")
	}
	via = objects.FullPath("/Common", via)
	r := remotes[via]
	if r == nil {
		if cfg.Get(logDestHSL, via) != nil {
			return nil, fmt.Errorf("remote-high-speed-log %s cannot send (see its own error)", via)
		}
		return nil, fmt.Errorf("remote-high-speed-log %s is not a sys log-config destination remote-high-speed-log", via)
	}
	format, err := syslog.ParseFormat(logDestSyslogFmt.Effective(cfg, o))
	if err != nil {
		return nil, err
	}
	fac, ok := syslog.Facility(logDestSyslogFac.Effective(cfg, o))
	if !ok {
		return nil, fmt.Errorf("default-facility %q: must be a syslog facility (local0 to local7, user, daemon, ...)", logDestSyslogFac.Effective(cfg, o))
	}
	sev, ok := syslog.Severity(logDestSyslogSev.Effective(cfg, o))
	if !ok {
		return nil, fmt.Errorf("default-severity %q: must be emerg, alert, crit, err, warning, notice, info or debug", logDestSyslogSev.Effective(cfg, o))
	}
	h := &syslog.Header{Format: format, Facility: fac, Severity: sev, Hostname: lt.hostname, App: "tmm", Framed: r.Proto == "TCP"}
	return &logpub.Destination{Name: o.Name, Remote: &logpub.Remote{Proto: r.Proto, Pool: r.Pool, Dist: r.Dist}, Syslog: h}, nil
}
