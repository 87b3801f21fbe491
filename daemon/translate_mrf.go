package daemon

import (
	"strconv"
	"strings"
	"time"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/mrf"
	"github.com/openltm/openltm/dataplane/mrfdiam"
	"github.com/openltm/openltm/dataplane/mrfmqtt"
	"github.com/openltm/openltm/dataplane/mrfsip"
	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/rules"
)

// The generic message-routing framework as TCP virtuals apply it
// (dataplane/mrf, dataplane/internal/l4/mrf.go), and SIP's on UDP
// virtuals too (dataplane/internal/udp/mrf.go).
var (
	mrfProtocol       = schema.MustKind("ltm message-routing generic protocol")
	mrfRouter         = schema.MustKind("ltm message-routing generic router")
	mrfRoute          = schema.MustKind("ltm message-routing generic route")
	mrfPeer           = schema.MustKind("ltm message-routing generic peer")
	mrfTransport      = schema.MustKind("ltm message-routing generic transport-config")
	mrfTerm           = mrfProtocol.MustProp("message-terminator")
	mrfMaxSize        = mrfProtocol.MustProp("max-message-size")
	mrfNoResponse     = mrfProtocol.MustProp("no-response")
	mrfDisable        = mrfProtocol.MustProp("disable-parser")
	mrfRoutes         = mrfRouter.MustProp("routes")
	mrfMaxRetries     = mrfRouter.MustProp("max-retries")
	mrfMaxPending     = mrfRouter.MustProp("max-pending-messages")
	mrfMaxPendingB    = mrfRouter.MustProp("max-pending-bytes")
	mrfRouteDst       = mrfRoute.MustProp("destination-address")
	mrfRouteSrc       = mrfRoute.MustProp("source-address")
	mrfRoutePeers     = mrfRoute.MustProp("peers")
	mrfPeerPool       = mrfPeer.MustProp("pool")
	mrfPeerMode       = mrfPeer.MustProp("connection-mode")
	mrfPeerConns      = mrfPeer.MustProp("number-connections")
	mrfPeerRatio      = mrfPeer.MustProp("ratio")
	mrfPeerTC         = mrfPeer.MustProp("transport-config")
	mrfPeerAutoInit   = mrfPeer.MustProp("auto-initialization")
	mrfPeerAutoInitIv = mrfPeer.MustProp("auto-initialization-interval")
	mrfTCRules        = mrfTransport.MustProp("rules")
	mrfTCProfiles     = mrfTransport.MustProp("profiles")
	mrfTCSNAT         = mrfTransport.MustProp("source-address-translation")
)

// mrfFamily is one message protocol's kinds: its protocol (session)
// and router profiles, routes, peers and transport-configs, which share
// the generic protocol's router, peers and transport-configs.
type mrfFamily struct {
	label                                 string // "generic", "sip", "diameter"
	proto, router, route, peer, transport *objects.Kind
}

// The message protocols, generic first.
var mrfFamilies = []*mrfFamily{
	{"generic", mrfProtocol, mrfRouter, mrfRoute, mrfPeer, mrfTransport},
	{"sip", mrfSIPSession, mrfSIPRouter, schema.MustKind("ltm message-routing sip route"),
		schema.MustKind("ltm message-routing sip peer"), schema.MustKind("ltm message-routing sip transport-config")},
	{"diameter", mrfDiamSession, mrfDiamRouter, schema.MustKind("ltm message-routing diameter route"),
		schema.MustKind("ltm message-routing diameter peer"), schema.MustKind("ltm message-routing diameter transport-config")},
	{"mqtt", mrfMQTTSession, mrfMQTTRouter, schema.MustKind("ltm message-routing mqtt route"),
		schema.MustKind("ltm message-routing mqtt peer"), schema.MustKind("ltm message-routing mqtt transport-config")},
}

var (
	mrfSIPSession  = schema.MustKind("ltm message-routing sip profile session")
	mrfSIPRouter   = schema.MustKind("ltm message-routing sip profile router")
	mrfDiamSession = schema.MustKind("ltm message-routing diameter profile session")
	mrfDiamRouter  = schema.MustKind("ltm message-routing diameter profile router")
	mrfMQTTSession = schema.MustKind("ltm message-routing mqtt profile session")
	mrfMQTTRouter  = schema.MustKind("ltm message-routing mqtt profile router")
)

// mrfIdle is how long a shared peer connection with nothing in flight
// stays open: the tcp profile's default idle-timeout [M].
const mrfIdle = 300 * time.Second

// mrf gives a TCP virtual its generic protocol and router profiles (or
// another message protocol's session and router profiles; SIP's also on
// a UDP virtual, whose peer flows are UDP and close after its udp
// profile's idle-timeout). BIG-IP wants both on the virtual, beside a
// tcp (or, for SIP, udp) profile and no other profile parsing the same
// bytes [M: the words of the refusals are openltm's].
// Routes name existing peers and peers existing pools (the references
// are checked as the objects are); a peer without a pool is kept with a
// warning (its messages fail, MR_FAILED). A peer's transport-config
// makes its connections: from its source-address-translation's address
// and with its tcp profile's settings (a udp profile, for SIP: its
// peers' connections are UDP flows); its rules run on those
// connections (translate_mrf_rules.go; an MQTT router's broker
// connections too). A peer with
// auto-initialization has its connections opened as the virtual starts
// and opened again where they closed, each auto-initialization-interval.
// The generic protocol runs on a UDP virtual too (each datagram a
// message), and with disable-parser passes each client's bytes through
// a peer connection of its own. It returns false when the virtual was
// left out.
func (t *translator) mrf(o *objects.Object, v *dataplane.Virtual) bool {
	var fam *mrfFamily
	var proto, router *objects.Object
	for _, f := range mrfFamilies {
		p, r := t.profile(o, f.proto), t.profile(o, f.router)
		if p == nil && r == nil {
			continue
		}
		if fam != nil {
			what, first := p, proto
			if what == nil {
				what = r
			}
			if first == nil {
				first = router
			}
			return t.refuse("profile %s (%s) cannot be used with %s profile %s on the virtual server (%s)", what.Name, f.label, fam.label, first.Name, o.Name)
		}
		fam, proto, router = f, p, r
	}
	if fam == nil {
		return true
	}
	pk, rk := fam.label+" protocol", fam.label+" router"
	if fam.label != "generic" {
		pk, rk = fam.label+" session", fam.label+" router"
	}
	if proto == nil {
		return t.refuse("profile %s (%s) requires a %s profile (%s) on the virtual server (%s)", router.Name, rk, pk, fam.proto.Key(), o.Name)
	}
	if router == nil {
		return t.refuse("profile %s (%s) requires a %s profile (%s) on the virtual server (%s)", proto.Name, pk, rk, fam.router.Key(), o.Name)
	}
	for _, k := range []*objects.Kind{profileHTTP, profileFTP, profileSIP, profileMQTT, profileFIX, profileDiameter} {
		if other := t.profile(o, k); other != nil {
			return t.refuse("profile %s (%s) cannot be used with %s profile %s on the virtual server (%s)", proto.Name, pk, k.Words[len(k.Words)-1], other.Name, o.Name)
		}
	}
	switch {
	case v.IsUDP() && (fam.label == "sip" || fam.label == "generic"):
		// SIP and generic routing over UDP: each datagram one message,
		// each client address and port a flow of the udp profile's
		// idle-timeout (dataplane/internal/udp/mrf.go). [M: F5 documents
		// the generic protocol over TCP; MRF carries it over a udp
		// profile's flows as SIP's, each datagram one message, which is
		// what a user of a datagram protocol expects. MQTT and Diameter
		// are TCP protocols and are refused there.]
	case t.profile(o, profileTCP) == nil || v.IsUDP():
		// [M: openltm routes the other message protocols over TCP
		// streams only.]
		return t.refuse("profile %s (%s) requires a tcp profile on the virtual server (%s)", proto.Name, pk, o.Name)
	}
	pe := func(name string) string { return fam.proto.MustProp(name).Effective(t.cfg, proto) }
	re := func(pr *objects.Prop) string { return fam.router.MustProp(pr.Name).Effective(t.cfg, router) }
	cfg := &mrf.Config{Protocol: proto.Name, Router: router.Name, DefaultPool: v.Pool, Idle: mrfIdle, Local: v.Destination.Addr(),
		Peers: map[string]*mrf.Peer{}, Transports: map[string]*mrf.Transport{}}
	if v.SNAT.Type == dataplane.SNATLSN {
		cfg.LSN = v.SNAT.Pool // the peer connections translate through it (translate_lsn.go)
	}
	if v.IsUDP() {
		// The virtual's own peer flows are UDP and close after the udp
		// profile's idle-timeout with nothing in flight.
		cfg.UDP, cfg.Idle = true, udpIdle(v.IdleTimeout)
	}
	switch fam.label {
	case "generic":
		cfg.NoResponse, cfg.DisableParser = pe(mrfNoResponse.Name) == "yes", pe(mrfDisable.Name) == "yes"
		cfg.IgnorePort = re(mrfRouter.MustProp("ignore-client-port")) == "yes"
		// On UDP an answer due to a client whose flow ended still goes to
		// its address (or MR::connect_back_port's) [M: the generic
		// protocol has no do-not-connect-back; a datagram needs no
		// connection, as SIP's default has it].
		cfg.ConnectBack = v.IsUDP()
		if s := pe(mrfTerm.Name); s != "none" && s != "" {
			cfg.Term = []byte(unescapeTerm(s))
		}
	case "sip":
		cfg.Proto = t.mrfSIP(o, v, proto, pe)
		// An answer due to a client whose flow or connection ended still
		// reaches it unless do-not-connect-back is enabled.
		cfg.ConnectBack = mrfConnectBack(pe)
		cfg.Persist, cfg.PersistTTL = t.sipPersistence(proto, pe("persistence"))
	case "diameter":
		ds := t.mrfDiameter(o, v, proto, pe)
		cfg.Proto = ds
		cfg.OnLost, cfg.MaxRetransmit = mrfLostAction(pe("retransmission-action")), atoi(pe("max-retransmissions"))
		why := mrfDiameterTimers(cfg, ds, pe)
		if why == "" {
			ds.RetryCodes, why = t.mrfRetryCodes(proto)
		}
		if why != "" {
			return t.refuse("profile %s (%s): %s", proto.Name, pk, why)
		}
	case "mqtt":
		cfg.Proto = &mrfmqtt.Session{Max: atoi(pe("max-message-size"))}
	}
	var bad string
	num := func(s string, what string) int {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			bad = what + " " + strconv.Quote(s)
		}
		return n
	}
	if fam.label == "generic" {
		cfg.Max = num(pe(mrfMaxSize.Name), "max-message-size")
	}
	cfg.MaxRetries = num(re(mrfMaxRetries), "max-retries")
	cfg.MaxPending = num(re(mrfMaxPending), "max-pending-messages")
	cfg.MaxPendingBytes = num(re(mrfMaxPendingB), "max-pending-bytes")
	if bad != "" {
		return t.refuse("profile %s: %s is not a count (0 or more)", router.Name, bad)
	}
	peer := func(name string) *mrf.Peer {
		if p := cfg.Peers[name]; p != nil {
			return p
		}
		po := t.cfg.Lookup(t.s, []string{fam.peer.Key()}, name)
		if po == nil {
			return nil
		}
		e := func(pr *objects.Prop) string { return fam.peer.MustProp(pr.Name).Effective(t.cfg, po) }
		p := &mrf.Peer{Name: po.Name, Conns: max(atoi(e(mrfPeerConns)), 1), Ratio: max(atoi(e(mrfPeerRatio)), 1)}
		p.Mode, _ = mrf.ParseConnMode(e(mrfPeerMode))
		if pool := e(mrfPeerPool); pool != "none" && pool != "" {
			if q := t.cfg.Lookup(t.s, []string{"ltm pool"}, pool); q != nil {
				p.Pool = q.Name
			}
		}
		if p.Pool == "" {
			t.keep(po, "%s peer %s has no pool: messages routed to it fail (MR_FAILED)", fam.label, po.Name)
		}
		if tc := e(mrfPeerTC); tc != "none" && tc != "" {
			p.Transport = tc
			if p.TC = t.mrfTransport(cfg, fam, tc); p.TC != nil {
				p.Transport = p.TC.Name
			}
		}
		if fam.label == "mqtt" {
			// An MQTT connection is one client's session with its
			// broker: the router keeps every peer connection per client
			// (mrf.Sticky), whatever the peer's connection-mode, and
			// opens none before a client's CONNECT [M].
			if m := e(mrfPeerMode); m != "per-client" {
				t.note(po, "mqtt peer %s: connection-mode %s is kept; openltm gives each MQTT client a broker connection of its own (per-client)", po.Name, m)
			}
			if e(mrfPeerAutoInit) == "enabled" {
				t.note(po, "mqtt peer %s: auto-initialization is kept; a broker connection opens with its client's CONNECT", po.Name)
			}
		} else if e(mrfPeerAutoInit) == "enabled" {
			if p.Mode == mrf.PerClient {
				t.keep(po, "%s peer %s: auto-initialization is kept; openltm opens a per-client peer's connections for its clients only", fam.label, po.Name)
			} else {
				p.AutoInit = time.Duration(max(atoi(e(mrfPeerAutoInitIv)), 100)) * time.Millisecond // [M: at least 100ms]
			}
		}
		cfg.Peers[po.Name] = p
		return p
	}
	if rv := t.cfg.Effective(router, mrfRoutes.Name); rv != nil {
		for _, rn := range rv.List {
			ro := t.cfg.Lookup(t.s, []string{fam.route.Key()}, rn)
			if ro == nil {
				return t.refuse("profile %s: route %s does not exist", router.Name, rn)
			}
			e := func(name string) string {
				s := fam.route.MustProp(name).Effective(t.cfg, ro)
				if s == "-" || s == "none" {
					return ""
				}
				return s
			}
			r := &mrf.Route{Name: ro.Name, Ratio: e("peer-selection-mode") == "ratio"}
			switch fam.label {
			case "generic":
				r.Src, r.Dst = e(mrfRouteSrc.Name), e(mrfRouteDst.Name)
			case "sip":
				r.Keys[mrfsip.KeyFrom], r.Keys[mrfsip.KeyTo], r.Keys[mrfsip.KeyRequest] = e("from-uri"), e("to-uri"), e("request-uri")
			case "diameter":
				r.Keys[mrfdiam.KeyOriginRealm], r.Keys[mrfdiam.KeyApp], r.Keys[mrfdiam.KeyDestRealm] = e("origin-realm"), e("application-id"), e("destination-realm")
			case "mqtt":
				r.Keys[mrfmqtt.KeyClientID], r.Keys[mrfmqtt.KeyUsername] = e("client-id"), e("username")
			}
			vs := ""
			if fam.label != "generic" {
				vs = e("virtual-server")
			}
			if vs != "" {
				// A route of another virtual's is left out of this
				// virtual's router [M].
				if vo := t.cfg.Lookup(t.s, []string{"ltm virtual"}, vs); vo == nil || vo.Name != o.Name {
					continue
				}
			}
			if pv := fam.route.MustProp(mrfRoutePeers.Name).Get(ro); pv != nil {
				for _, pn := range pv.List {
					p := peer(pn)
					if p == nil {
						return t.refuse("route %s: peer %s does not exist", ro.Name, pn)
					}
					r.Peers = append(r.Peers, p)
				}
			}
			cfg.Routes = append(cfg.Routes, r)
		}
	}
	// Every configured peer can be named by MR::message route peer.
	for _, po := range t.cfg.Of(fam.peer) {
		peer(po.Name)
	}
	if cfg.DisableParser {
		// The stream is not cut: each read goes on the client's own peer
		// connection as it is, and what the peer sends comes back so
		// (mrf.Config.DisableParser).
		cfg.Term, cfg.NoResponse = nil, true
	}
	if why := plainGatewayBlocked(v); why != "" { // translate_ftp.go
		t.keep(o, "profile %s: openltm's message routing %s; the virtual passes the stream through one member per connection", proto.Name, why)
		if fam.label != "generic" {
			return t.refuse("profile %s (%s): openltm's message routing %s", proto.Name, pk, why)
		}
		return true
	}
	v.MRF = cfg
	return true
}

// mrfTransport is the transport-config name as cfg's peers use it (nil:
// none by that name): the source address of its
// source-address-translation (automap: the virtual's address; a
// snatpool's addresses in turn) and its tcp profile's socket settings,
// or, for SIP, a udp profile (its peers' connections UDP flows, closed
// after that profile's idle-timeout), and its rules, which its
// connections run. Its other profiles are kept with a warning.
func (t *translator) mrfTransport(cfg *mrf.Config, fam *mrfFamily, name string) *mrf.Transport {
	tco := t.cfg.Lookup(t.s, []string{fam.transport.Key()}, name)
	if tco == nil {
		return nil
	}
	if x := cfg.Transports[tco.Name]; x != nil {
		return x
	}
	x := &mrf.Transport{Name: tco.Name}
	cfg.Transports[tco.Name] = x
	// Names inside the object are relative to its folder.
	full := func(n string) string {
		if strings.HasPrefix(n, "/") {
			return n
		}
		return tco.Name[:strings.LastIndexByte(tco.Name, '/')+1] + n
	}
	if sat := fam.transport.MustProp(mrfTCSNAT.Name).Get(tco); sat != nil {
		// The block as a virtual's: { type automap } or { type snat pool NAME }.
		w := strings.Fields(strings.NewReplacer("{", " ", "}", " ").Replace(sat.Str))
		kv := map[string]string{}
		for i := 0; i+1 < len(w); i += 2 {
			kv[w[i]] = w[i+1]
		}
		switch kv["type"] {
		case "automap":
			x.SNAT = mrf.SNATAutomap
		case "lsn":
			// Its peer connections take translations of the lsn pool,
			// the client whose message opens one its subscriber [M:
			// F5 documents type lsn for virtual servers].
			if pn := kv["pool"]; pn != "" && pn != "none" {
				if lp := t.cfg.Lookup(t.s, specLSNPool, full(pn)); lp == nil {
					t.keep(tco, "transport-config %s: lsn pool %s does not exist; its connections keep the host's address", tco.Name, pn)
				} else if t.dc.LSN[lp.Name] == nil {
					t.keep(tco, "transport-config %s: lsn pool %s cannot run; its connections keep the host's address", tco.Name, pn)
				} else {
					x.SNAT, x.LSN = mrf.SNATLSN, lp.Name
				}
			} else {
				t.keep(tco, "transport-config %s: source-address-translation type lsn names no pool; its connections keep the host's address", tco.Name)
			}
		case "snat":
			if pn := kv["pool"]; pn != "" && pn != "none" {
				if sp := t.cfg.Lookup(t.s, specSnatPool, full(pn)); sp != nil {
					x.SNAT, x.SNATAddrs, x.SNATPool = mrf.SNATPool, t.dc.SnatPools[sp.Name], sp.Name
				} else {
					t.keep(tco, "transport-config %s: snatpool %s does not exist; its connections keep the host's address", tco.Name, pn)
				}
			}
		}
	}
	if pv := fam.transport.MustProp(mrfTCProfiles.Name).Get(tco); pv != nil {
		for _, it := range pv.Items {
			if p := t.cfg.Lookup(t.s, []string{profileTCP.Key()}, full(it.Name)); p != nil {
				x.TCP = t.tcpSide(p, congestionAvailable()) // translate_tcpopts.go
				continue
			}
			if p := t.cfg.Lookup(t.s, []string{profileUDP.Key()}, full(it.Name)); p != nil && (fam.label == "sip" || fam.label == "generic") {
				// Its peers' connections are UDP flows [M: with both a
				// tcp and a udp profile, UDP].
				x.UDP = true
				switch it := udpIdleTimeout.Effective(t.cfg, p); it {
				case "indefinite":
					x.Idle = -1
				case "immediate":
					x.Idle = time.Second
				default:
					x.Idle = udpIdle(seconds(it))
				}
				continue
			}
			if t.cfg.Lookup(t.s, []string{fam.proto.Key()}, full(it.Name)) != nil {
				continue // the virtual's protocol cuts the peers' streams [M]
			}
			t.keep(tco, "transport-config %s: profile %s is kept; openltm applies a transport-config's tcp profile only", tco.Name, it.Name)
		}
	}
	if rv := fam.transport.MustProp(mrfTCRules.Name).Get(tco); rv != nil && len(rv.List) > 0 {
		switch {
		case t.rules == nil:
		default:
			// Its peer connections run them (translate_mrf_rules.go).
			ir, key, err := t.rules.transportRulesOf(t.s, t.cfg, rv.List)
			if err != nil {
				t.keep(tco, "transport-config %s: its rules do not run: %v", tco.Name, err)
			} else if ir != nil {
				x.Rules, x.RulesKey = ir, key
			}
		}
	}
	return x
}

// udpIdle is how long a UDP peer flow with nothing in flight stays
// open under a udp profile's idle-timeout d (0: its default, negative:
// indefinite, which the router's 0 is).
func udpIdle(d time.Duration) time.Duration {
	switch {
	case d < 0:
		return -1
	case d == 0:
		return 60 * time.Second
	}
	return d
}

// unescapeTerm reads a message-terminator's backslash escapes (\n, \r,
// \t, \\, \xHH), so that a line protocol's "\r\n" can be written in tmsh
// [M: F5 documents the property as a string].
func unescapeTerm(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'x':
			if i+2 < len(s) {
				if n, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
					b.WriteByte(byte(n))
					i += 2
					continue
				}
			}
			b.WriteString(`\x`)
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// mrfNeeds refuses a rule list whose GENERICMESSAGE_ and MR_ events need
// the generic protocol profile the virtual server lacks (01070394 [M]).
func (t *translator) mrfNeeds(o *objects.Object, list []*rules.Rule) bool {
	if t.profile(o, mrfSIPSession, mrfDiamSession, mrfMQTTSession) != nil {
		// MR_ events run under every message protocol; the generic
		// protocol's own events need it [M].
		return t.profileNeeds(o, list, mrfProtocol, "GENERICMESSAGE", func(r *rules.Rule) []rules.HTTPNeed {
			var out []rules.HTTPNeed
			for _, n := range r.MRFNeeds() {
				if n.Event == rules.GenericMessageIngress || n.Event == rules.GenericMessageEgress {
					out = append(out, n)
				}
			}
			return out
		})
	}
	return t.profileNeeds(o, list, mrfProtocol, "GENERICMESSAGE", (*rules.Rule).MRFNeeds) // translate_stream.go
}
