package dataplane

import (
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"sort"
	"strings"

	"github.com/openltm/openltm/dataplane/internal/state"
)

// Check validates cfg as Apply would, without touching the running plane,
// so the daemon can refuse a commit before storing it. It reports every
// problem it finds, joined, in name order. It cannot know whether an
// address is free to bind; Apply reports that.
func Check(cfg *Config) error {
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	// A udp and a tcp virtual may share an address and port.
	type binding struct {
		udp bool
		ap  netip.AddrPort
	}
	bound := map[binding]string{}
	sharing := map[binding][]string{} // every virtual of a listener (sourceshare.go)
	for _, name := range sortedKeys(cfg.Virtuals) {
		v := cfg.Virtuals[name]
		if v == nil {
			add("virtual %s: no definition", name)
			continue
		}
		if !v.Destination.Addr().IsValid() {
			if len(v.FQDNs) == 0 {
				add("virtual %s: destination has no address", name)
			}
			continue // fqdnvirtual.go: bound once a name resolves
		}
		aps, err := v.Listeners()
		if err != nil {
			add("virtual %s: %v", name, err)
			continue
		}
	aps:
		for _, ap := range aps {
			bk := binding{v.IsUDP(), ap}
			if _, ok := bound[bk]; ok {
				for _, other := range sharing[bk] {
					if share, why := sharesListener(v, cfg.Virtuals[other]); !share { // sourceshare.go
						if sourceOf(v) != sourceOf(cfg.Virtuals[other]) {
							add("virtual %s: destination %s is already used by virtual %s (a different source does not tell them apart here: %s)", name, ap, other, why)
						} else {
							add("virtual %s: destination %s is already used by virtual %s", name, ap, other)
						}
						break aps
					}
				}
				sharing[bk] = append(sharing[bk], name)
				continue
			}
			bound[bk] = name
			sharing[bk] = []string{name}
		}
		checkUDP(name, v, add)
		if why := AnyPortUnsupported(v); why != "" { // anyport.go
			add("virtual %s: destination %s: %s", name, v.Destination, why)
		}
		if n := v.Network; n.IsValid() && (n.Masked() != n || n.Addr() != v.Destination.Addr().Unmap()) {
			add("virtual %s: destination %s is not the address of its network %s", name, v.Destination, n)
		}
		if v.Pool != "" && cfg.Pools[v.Pool] == nil {
			add("virtual %s: pool %s does not exist", name, v.Pool)
		}
		switch v.SNAT.Type {
		case "", SNATNone, SNATAutomap:
		case SNATPool:
			if _, ok := cfg.SnatPools[v.SNAT.Pool]; !ok {
				add("virtual %s: snatpool %s does not exist", name, v.SNAT.Pool)
			}
		case SNATLSN:
			if cfg.LSN[v.SNAT.Pool] == nil {
				add("virtual %s: lsn pool %s does not exist", name, v.SNAT.Pool)
			}
		default:
			add("virtual %s: source-address-translation type %s is not supported (none, automap, snat, lsn)", name, v.SNAT.Type)
		}
	}
	tcp, udp := map[netip.AddrPort]string{}, map[netip.AddrPort]string{}
	for b, name := range bound {
		if b.udp {
			udp[b.ap] = name
		} else {
			tcp[b.ap] = name
		}
	}
	checkSteer(cfg, tcp, udp, add) // anyport.go
	for _, name := range sortedKeys(cfg.Pools) {
		p := cfg.Pools[name]
		if p == nil {
			add("pool %s: no definition", name)
			continue
		}
		if _, ok := state.Modes[p.LBMode]; !ok {
			add("pool %s: load-balancing-mode %s is not supported (%s)", name, p.LBMode, strings.Join(state.ModeNames(), ", "))
		}
		switch p.ServiceDownAction {
		case "", DownNone, DownReset, DownDrop, DownReselect:
		default:
			add("pool %s: service-down-action %s is not valid (none, reset, drop, reselect)", name, p.ServiceDownAction)
		}
		checkRule(cfg, "pool "+name, p.Monitor, add)
		seen := map[netip.AddrPort]bool{}
		for i := range p.Members {
			m := &p.Members[i]
			if !m.Addr.Addr().IsValid() {
				add("pool %s: member %s has no address", name, m.Name())
				continue
			}
			if seen[m.Addr] {
				add("pool %s: member %s is listed twice", name, m.Name())
			}
			seen[m.Addr] = true
			checkRule(cfg, "pool "+name+" member "+m.Name(), m.Monitor, add)
			if p.LBMode == WeightedLeastConnectionsMember && m.ConnectionLimit <= 0 {
				add("pool %s: weighted-least-connections-member needs a connection-limit on every member (%s has none)", name, m.Name())
			}
		}
	}
	for _, name := range sortedKeys(cfg.Nodes) {
		if n := cfg.Nodes[name]; n != nil && n.Monitor != nil {
			checkRule(cfg, "node "+name, *n.Monitor, add)
		}
	}
	checkRule(cfg, "default-node-monitor", cfg.DefaultNodeMonitor, add)
	for _, name := range sortedKeys(cfg.Monitors) {
		m := cfg.Monitors[name]
		if m == nil {
			continue
		}
		switch m.Type {
		case MonitorTCP, MonitorTCPHalfOpen, MonitorHTTP, MonitorGatewayICMP, MonitorHTTPS, MonitorHTTP2, MonitorUDP, MonitorICMP, MonitorDNS, MonitorExternal,
			MonitorSMTP, MonitorPOP3, MonitorIMAP, MonitorFTP, MonitorNNTP, MonitorLDAP, MonitorSIP,
			MonitorRADIUS, MonitorRADIUSAcct, MonitorPostgreSQL, MonitorMySQL, MonitorMSSQL, MonitorTCPEcho, MonitorScripted,
			MonitorSOAP, MonitorRPC, MonitorDiameter, MonitorMQTT, MonitorGTP, MonitorSNMPDCA, MonitorSNMPDCABase:
		case MonitorInband:
			continue // passive: no interval, no probe
		default:
			add("monitor %s: type %s is not supported (tcp, tcp-half-open, http, https, http2, udp, icmp, dns, gateway-icmp, external, inband, smtp, pop3, imap, ftp, nntp, ldap, sip, radius, radius-accounting, postgresql, mysql, mssql, tcp-echo, scripted, soap, rpc, diameter, mqtt, gtp, snmp-dca, snmp-dca-base)", name, m.Type)
		}
		if m.Interval <= 0 || m.Timeout <= 0 {
			add("monitor %s: interval and timeout must be positive", name)
		}
		for _, re := range []struct{ prop, s string }{{"recv", m.Recv}, {"recv-disable", m.RecvDisable}} {
			if _, err := regexp.Compile(re.s); err != nil {
				add("monitor %s: %s %q is not a valid regular expression: %v", name, re.prop, re.s, err)
			}
		}
	}
	return errors.Join(errs...)
}

func checkRule(cfg *Config, where string, r MonitorRule, add func(string, ...any)) {
	for _, n := range r.Names {
		if cfg.Monitors[n] == nil {
			add("%s: monitor %s does not exist", where, n)
		}
	}
	if r.MinUp > len(r.Names) {
		add("%s: monitor min %d of %d monitors can never be met", where, r.MinUp, len(r.Names))
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
