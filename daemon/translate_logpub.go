package daemon

import (
	"fmt"
	"strings"
	"time"

	"github.com/openltm/openltm/dataplane/hsl"
	"github.com/openltm/openltm/dataplane/ipfix"
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

	logDestIPFIX           = schema.MustKind("sys log-config destination ipfix")
	logDestIPFIXPool       = logDestIPFIX.MustProp("pool-name")
	logDestIPFIXVersion    = logDestIPFIX.MustProp("protocol-version")
	logDestIPFIXTransport  = logDestIPFIX.MustProp("transport-profile")
	logDestIPFIXRetransmit = logDestIPFIX.MustProp("template-retransmit-interval")
	logDestIPFIXDelete     = logDestIPFIX.MustProp("template-delete-delay")
	logDestIPFIXSSL        = logDestIPFIX.MustProp("serverssl-profile")
	logDestSplunk          = schema.MustKind("sys log-config destination splunk")
	logDestSplunkFwd       = logDestSplunk.MustProp("forward-to")
	logDestArcSight        = schema.MustKind("sys log-config destination arcsight")
	logDestArcSightFwd     = logDestArcSight.MustProp("forward-to")
	ipfixElement           = schema.MustKind("sys ipfix element")
	ipfixElementType       = ipfixElement.MustProp("data-type")
	ipfixElementEnterprise = ipfixElement.MustProp("enterprise-id")
	ipfixElementID         = ipfixElement.MustProp("id")
	ipfixElementSize       = ipfixElement.MustProp("size")
)

// logTranslation is what the log configuration gives the rules: the
// publishers, and what of it is refused (a destination that cannot send)
// or kept without being acted on (destinations of other kinds).
type logTranslation struct {
	pubs          *logpub.Set
	refused, kept []string
	hostname      string
	// elements are IANA's information elements and sys ipfix element's,
	// which IPFIX::template create names.
	elements *ipfix.Elements
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
	lt.elements = lt.ipfixElements(cfg)
	ipfixes := map[string]*logpub.IPFIXDest{}
	for _, o := range cfg.Of(logDestIPFIX) {
		d, err := lt.ipfixDest(cfg, o)
		if err != nil {
			lt.refused = append(lt.refused, about(o, "%v", err))
			continue
		}
		ipfixes[o.Name] = d
	}
	// plain makes a fresh destination of an unformatted one, so that
	// each publisher has its own (a remote one keeps its sender's handle).
	plain := func(name string) *logpub.Destination {
		switch {
		case remotes[name] != nil:
			r := remotes[name]
			return &logpub.Destination{Name: name, Remote: &logpub.Remote{Proto: r.Proto, Pool: r.Pool, Dist: r.Dist}}
		case syslogs[name] != nil:
			d, r := syslogs[name], syslogs[name].Remote
			return &logpub.Destination{Name: name, Syslog: d.Syslog, Remote: &logpub.Remote{Proto: r.Proto, Pool: r.Pool, Dist: r.Dist}}
		case cfg.Get(logDestLocal, name) != nil:
			return &logpub.Destination{Name: name, Local: true}
		}
		return nil
	}
	formatted := map[string]logpub.Format{}
	forwards := map[string]string{}
	for _, f := range []struct {
		k   *objects.Kind
		fwd *objects.Prop
		fmt logpub.Format
	}{{logDestSplunk, logDestSplunkFwd, logpub.Splunk}, {logDestArcSight, logDestArcSightFwd, logpub.ArcSight}} {
		for _, o := range cfg.Of(f.k) {
			to := f.fwd.Effective(cfg, o)
			if to == "" || to == "none" {
				lt.refused = append(lt.refused, about(o, "forward-to is required: the destination the formatted messages go to (a remote-high-speed-log, remote-syslog or local-syslog)"))
				continue
			}
			to = objects.FullPath("/Common", to)
			if plain(to) == nil {
				// [M] a formatted destination forwards to an unformatted
				// one: a management-port is kept, not acted on; another
				// formatted one or an ipfix destination would format twice
				// or take no text, and is refused.
				if cfg.Get(logDestSplunk, to) != nil || cfg.Get(logDestArcSight, to) != nil || cfg.Get(logDestIPFIX, to) != nil {
					lt.refused = append(lt.refused, about(o, "forward-to %s: must be a remote-high-speed-log, remote-syslog or local-syslog destination", to))
				} else {
					lt.kept = append(lt.kept, about(o, "forward-to %s is not a remote-high-speed-log, remote-syslog or local-syslog: the formatted messages do not reach it", to))
				}
				continue
			}
			formatted[o.Name], forwards[o.Name] = f.fmt, to
		}
	}
	var pubs []*logpub.Publisher
	for _, o := range cfg.Of(logPublisher) {
		p := &logpub.Publisher{Name: o.Name}
		if v := logPublisherDests.Get(o); v != nil {
			for _, it := range v.Items {
				name := objects.FullPath("/Common", it.Name)
				if d := plain(name); d != nil {
					p.Dests = append(p.Dests, d)
					continue
				}
				switch {
				case ipfixes[name] != nil:
					p.Dests = append(p.Dests, &logpub.Destination{Name: name, IPFIX: &logpub.IPFIXDest{Opts: ipfixes[name].Opts}})
				case formatted[name] != logpub.Unformatted:
					p.Dests = append(p.Dests, &logpub.Destination{Name: name, Format: formatted[name], Forward: plain(forwards[name])})
				default:
					lt.kept = append(lt.kept, about(o, "destination %s is not a remote-high-speed-log, remote-syslog, local-syslog, splunk, arcsight or ipfix destination that sends: messages do not reach it", name))
				}
			}
		}
		pubs = append(pubs, p)
	}
	lt.pubs = logpub.NewSet(pubs)
	lt.pubs.Hostname, lt.pubs.Version = lt.hostname, objects.Version
	return lt
}

// ipfixElements reads the sys ipfix elements; one that is not a valid
// element is refused, and left out.
func (lt *logTranslation) ipfixElements(cfg *objects.Config) *ipfix.Elements {
	var custom []*ipfix.Element
	for _, o := range cfg.Of(ipfixElement) {
		tn := ipfixElementType.Effective(cfg, o)
		if tn == "" {
			lt.refused = append(lt.refused, about(o, "data-type is required (%s)", strings.Join(ipfix.TypeNames(), ", ")))
			continue
		}
		typ, err := ipfix.ParseType(tn)
		if err != nil {
			lt.refused = append(lt.refused, about(o, "%v", err))
			continue
		}
		name := o.Name[strings.LastIndexByte(o.Name, '/')+1:]
		e, err := ipfix.NewElement(name, uint32(atoi(ipfixElementEnterprise.Effective(cfg, o))),
			uint32(atoi(ipfixElementID.Effective(cfg, o))), typ, uint32(atoi(ipfixElementSize.Effective(cfg, o))))
		if err != nil {
			lt.refused = append(lt.refused, about(o, "%v", err))
			continue
		}
		if _, err := ipfix.NewElements(append(custom, e)); err != nil {
			lt.refused = append(lt.refused, about(o, "%v", err))
			continue
		}
		custom = append(custom, e)
	}
	els, _ := ipfix.NewElements(custom)
	return els
}

// ipfixDest reads an ipfix destination. transport-profile none sends
// over UDP [M: the usual transport of flow records, and what
// collectors listen on by default]; serverssl-profile makes each
// collector's TCP connection a TLS session, and needs a tcp
// transport-profile [M: TLS needs a stream; openltm has no DTLS].
func (lt *logTranslation) ipfixDest(cfg *objects.Config, o *objects.Object) (*logpub.IPFIXDest, error) {
	pool := logDestIPFIXPool.Effective(cfg, o)
	if pool == "" || pool == "none" {
		return nil, fmt.Errorf("pool-name is required: the ltm pool of IPFIX collectors")
	}
	v, err := ipfix.ParseVersion(logDestIPFIXVersion.Effective(cfg, o))
	if err != nil {
		return nil, err
	}
	tcp := false
	if tp := logDestIPFIXTransport.Effective(cfg, o); tp != "" && tp != "none" {
		full := objects.FullPath("/Common", tp)
		switch {
		case cfg.Lookup(schema, []string{profileTCP.Key()}, full) != nil:
			tcp = true
		case cfg.Lookup(schema, []string{profileUDP.Key()}, full) != nil:
		default:
			switch full[strings.LastIndexByte(full, '/')+1:] {
			case "tcp":
				tcp = true
			case "udp":
			default:
				return nil, fmt.Errorf("transport-profile %s: must be an ltm profile tcp or udp", tp)
			}
		}
	}
	opts := ipfix.Options{
		Pool: objects.FullPath("/Common", pool), Version: v, TCP: tcp,
		Retransmit:  time.Duration(atoi(logDestIPFIXRetransmit.Effective(cfg, o))) * time.Second,
		DeleteDelay: time.Duration(atoi(logDestIPFIXDelete.Effective(cfg, o))) * time.Second,
	}
	if ssl := noneEmpty(logDestIPFIXSSL.Effective(cfg, o)); ssl != "" {
		if !tcp {
			return nil, fmt.Errorf("serverssl-profile %s needs a tcp transport-profile: TLS runs over TCP", ssl)
		}
		p := cfg.Lookup(schema, []string{profileServerSSL.Key()}, objects.FullPath(folderOf(o.Name), ssl))
		if p == nil {
			return nil, fmt.Errorf("serverssl-profile: ltm profile server-ssl %s was not found", ssl)
		}
		t := &translator{s: schema, cfg: cfg}
		ss, err := t.serverSSL(p)
		if err != nil {
			return nil, fmt.Errorf("serverssl-profile %s: %v", ssl, err)
		}
		b, err := ss.Build()
		if err != nil {
			return nil, fmt.Errorf("serverssl-profile %s: %v", ssl, err)
		}
		opts.TLS, opts.TLSID = b.Config, p.Name+"|"+serverSSLID(ss)
	}
	return &logpub.IPFIXDest{Opts: opts}, nil
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
