package daemon

import (
	"crypto/sha256"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/tlsprof"
	"github.com/openltm/openltm/objects"
)

// The settings every probe shares beside send and recv (ip-dscp, the
// adaptive ones), and the http and https monitors' account and TLS.
var (
	monitorDSCP          = common("ip-dscp", allMonitors...)
	monitorAdaptive      = common("adaptive", allMonitors...)
	monitorAdaptiveType  = common("adaptive-divergence-type", allMonitors...)
	monitorAdaptiveValue = common("adaptive-divergence-value", allMonitors...)
	monitorAdaptiveLimit = common("adaptive-limit", allMonitors...)
	monitorAdaptiveSpan  = common("adaptive-sampling-timespan", allMonitors...)
	httpMonitorUser      = common("username", monitorHTTP, monitorHTTPS, monitorHTTP2)
	httpMonitorPass      = common("password", monitorHTTP, monitorHTTPS, monitorHTTP2)
	httpsCert            = monitorHTTPS.MustProp("cert")
	httpsKey             = monitorHTTPS.MustProp("key")
	httpsCipherlist      = monitorHTTPS.MustProp("cipherlist")
	httpsCompatibility   = monitorHTTPS.MustProp("compatibility")
	httpsSSLProfile      = common("ssl-profile", monitorHTTPS, monitorHTTP2)
	// monitorDebug is the udp and database monitors' debug (yes, no).
	monitorDebug = common("debug", monitorUDP, monitorPostgreSQL, monitorMySQL, monitorMSSQL)
)

// monitorOpts reads those settings into m; false means the monitor was
// left out (t.skip says why).
func (t *translator) monitorOpts(o *objects.Object, typ dataplane.MonitorType, m *dataplane.Monitor) bool {
	e := func(p *objects.Prop) string { return noneEmpty(p.Effective(t.cfg, o)) }
	num := func(p *objects.Prop) (int, bool) {
		if e(p) == "" {
			return 0, true // none
		}
		n, err := strconv.Atoi(e(p))
		if err != nil || n < 0 {
			t.skip(o, "%s %q is not a number from 0", p.Name, e(p))
			return 0, false
		}
		return n, true
	}
	var ok bool
	switch typ {
	case dataplane.MonitorUDP, dataplane.MonitorPostgreSQL, dataplane.MonitorMySQL, dataplane.MonitorMSSQL:
		m.Debug = e(monitorDebug) == "yes"
	}
	if typ != dataplane.MonitorInband && typ != dataplane.MonitorExternal {
		if m.DSCP, ok = num(monitorDSCP); !ok {
			return false
		}
	}
	if e(monitorAdaptive) == "enabled" {
		a := &dataplane.AdaptiveMonitor{Relative: e(monitorAdaptiveType) != "absolute"}
		var limit, span int
		if a.Divergence, ok = num(monitorAdaptiveValue); !ok {
			return false
		}
		if limit, ok = num(monitorAdaptiveLimit); !ok {
			return false
		}
		if span, ok = num(monitorAdaptiveSpan); !ok {
			return false
		}
		a.Limit, a.Timespan = time.Duration(min(limit, maxSeconds))*time.Millisecond, secondsOf(int64(span))
		m.Adaptive = a
	}
	if typ != dataplane.MonitorHTTP && typ != dataplane.MonitorHTTPS && typ != dataplane.MonitorHTTP2 {
		return true
	}
	m.Username, m.Password = e(httpMonitorUser), e(httpMonitorPass)
	if typ == dataplane.MonitorHTTP2 {
		// TLS only through its ssl-profile; none is cleartext HTTP/2
		// with prior knowledge (h2c) [M].
		if e(httpsSSLProfile) == "" {
			return true
		}
		tc, err := t.monitorTLS(o)
		if err != nil {
			t.skip(o, "%v", err)
			return false
		}
		m.TLS = tc
		return true
	}
	if typ == dataplane.MonitorHTTPS {
		tc, err := t.monitorTLS(o)
		if err != nil {
			t.skip(o, "%v", err)
			return false
		}
		m.TLS = tc
	}
	return true
}

// monitorTLS reads an https monitor's TLS: the server-ssl profile it
// names, else its cipherlist, compatibility, cert and key.
func (t *translator) monitorTLS(o *objects.Object) (*dataplane.MonitorTLS, error) {
	e := func(p *objects.Prop) string { return noneEmpty(p.Effective(t.cfg, o)) }
	if name := e(httpsSSLProfile); name != "" {
		p := t.cfg.Lookup(t.s, []string{profileServerSSL.Key()}, objects.FullPath(folderOf(o.Name), name))
		if p == nil {
			return nil, fmt.Errorf("ssl-profile: ltm profile server-ssl %s was not found", name)
		}
		ss, err := t.serverSSL(p)
		if err != nil {
			return nil, err
		}
		b, err := ss.Build()
		if err != nil {
			return nil, err
		}
		return &dataplane.MonitorTLS{Profile: b.Config, ProfileID: serverSSLID(ss)}, nil
	}
	tc := &dataplane.MonitorTLS{Ciphers: e(httpsCipherlist), Compatibility: e(httpsCompatibility) != "disabled"}
	if tc.Ciphers == "" {
		tc.Ciphers = "DEFAULT"
	}
	cert, key := e(httpsCert), e(httpsKey)
	if cert == "" && key == "" {
		return tc, nil
	}
	if cert == "" || key == "" {
		return nil, fmt.Errorf("cert and key go together: a client certificate needs both (cert %s, key %s)", orNone(cert), orNone(key))
	}
	c := t.cfg.Lookup(t.s, specSSLCert, objects.FullPath(folderOf(o.Name), cert))
	if c == nil {
		return nil, fmt.Errorf("cert: sys file ssl-cert %s was not found", cert)
	}
	k := t.cfg.Lookup(t.s, specSSLKey, objects.FullPath(folderOf(o.Name), key))
	if k == nil {
		return nil, fmt.Errorf("key: sys file ssl-key %s was not found", key)
	}
	cp, err := t.sslFilePath(c)
	if err != nil {
		return nil, err
	}
	kp, err := t.sslFilePath(k)
	if err != nil {
		return nil, err
	}
	pc, err := tlsCache.cert(c.Name, cp)
	if err != nil {
		return nil, err
	}
	pk, err := tlsCache.key(k.Name, kp, noneEmpty(sslKeyPassphrase.Str(k)))
	if err != nil {
		return nil, err
	}
	pair, err := tlsprof.Pair(o.Name, pc, pk, nil)
	if err != nil {
		return nil, err
	}
	tc.Certificate = &pair
	return tc, nil
}

// serverSSLID names what a server-ssl profile makes a probe do, so a
// commit that leaves the profile as it was keeps the monitor's running
// instances (its built configuration is new at every commit).
func serverSSLID(ss *tlsprof.ServerSSL) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s|%s|%v|%s|%v|%v|%d|%s|%d|%s", ss.Name, ss.Ciphers, ss.Options, ss.ServerName,
		ss.Renegotiation, ss.SessionTicket, ss.CacheSize, ss.PeerCertMode, ss.AuthenticateDepth, ss.AuthenticateName)
	if g := ss.CipherGroup; g != nil {
		fmt.Fprintf(&b, "|group %s %s", g.Name, g.Ordering)
		for i, rs := range [][]*tlsprof.CipherRule{g.Allow, g.Restrict, g.Exclude} {
			for _, r := range rs {
				fmt.Fprintf(&b, " %d:%s/%s", i, r.Cipher, r.DHGroups)
			}
		}
	}
	for _, c := range []*tlsprof.Cert{ss.Cert, ss.Chain, ss.CAFile} {
		if c == nil {
			b.WriteString("|-")
			continue
		}
		h := sha256.New()
		for _, x := range c.Certs {
			h.Write(x.Raw)
		}
		fmt.Fprintf(&b, "|%x", h.Sum(nil))
	}
	if ss.Key != nil {
		fmt.Fprintf(&b, "|key %s", ss.Key.Path)
	}
	return b.String()
}
