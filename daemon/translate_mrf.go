package daemon

import (
	"strconv"
	"strings"
	"time"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/mrf"
	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/rules"
)

// The generic message-routing framework as TCP virtuals apply it
// (dataplane/mrf, dataplane/internal/l4/mrf.go).
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
	mrfRouteMode      = mrfRoute.MustProp("peer-selection-mode")
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

// mrfIdle is how long a shared peer connection with nothing in flight
// stays open: the tcp profile's default idle-timeout [M].
const mrfIdle = 300 * time.Second

// mrf gives a TCP virtual its generic protocol and router profiles. BIG-IP
// wants both on the virtual, beside a tcp profile and no other profile
// parsing the same bytes [M: the words of the refusals are openltm's].
// Routes name existing peers and peers existing pools (the references
// are checked as the objects are); a peer without a pool is kept with a
// warning (its messages fail, MR_FAILED). A peer's transport-config
// makes its connections: from its source-address-translation's address
// and with its tcp profile's settings; its rules are kept with a warning
// (openltm runs no rules on peer connections). A peer with
// auto-initialization has its connections opened as the virtual starts
// and opened again where they closed, each auto-initialization-interval.
// It returns false when the virtual was left out.
func (t *translator) mrf(o *objects.Object, v *dataplane.Virtual) bool {
	proto, router := t.profile(o, mrfProtocol), t.profile(o, mrfRouter)
	if proto == nil && router == nil {
		return true
	}
	if proto == nil {
		return t.refuse("profile %s (generic router) requires a generic protocol profile (ltm message-routing generic protocol) on the virtual server (%s)", router.Name, o.Name)
	}
	if router == nil {
		return t.refuse("profile %s (generic protocol) requires a generic router profile (ltm message-routing generic router) on the virtual server (%s)", proto.Name, o.Name)
	}
	for _, k := range []*objects.Kind{profileHTTP, profileFTP, profileSIP, profileMQTT, profileFIX, profileDiameter} {
		if other := t.profile(o, k); other != nil {
			return t.refuse("profile %s (generic protocol) cannot be used with %s profile %s on the virtual server (%s)", proto.Name, k.Words[len(k.Words)-1], other.Name, o.Name)
		}
	}
	if t.profile(o, profileTCP) == nil || v.IsUDP() {
		return t.refuse("profile %s (generic protocol) requires a tcp profile on the virtual server (%s)", proto.Name, o.Name)
	}
	pe := func(pr *objects.Prop) string { return pr.Effective(t.cfg, proto) }
	re := func(pr *objects.Prop) string { return pr.Effective(t.cfg, router) }
	cfg := &mrf.Config{Protocol: proto.Name, Router: router.Name, DefaultPool: v.Pool, Idle: mrfIdle, Local: v.Destination.Addr(),
		NoResponse: pe(mrfNoResponse) == "yes", DisableParser: pe(mrfDisable) == "yes", Peers: map[string]*mrf.Peer{},
		Transports: map[string]*mrf.Transport{}}
	if s := pe(mrfTerm); s != "none" && s != "" {
		cfg.Term = []byte(unescapeTerm(s))
	}
	var bad string
	num := func(s string, what string) int {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			bad = what + " " + strconv.Quote(s)
		}
		return n
	}
	cfg.Max = num(pe(mrfMaxSize), "max-message-size")
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
		po := t.cfg.Lookup(t.s, []string{mrfPeer.Key()}, name)
		if po == nil {
			return nil
		}
		e := func(pr *objects.Prop) string { return pr.Effective(t.cfg, po) }
		p := &mrf.Peer{Name: po.Name, Conns: max(atoi(e(mrfPeerConns)), 1), Ratio: max(atoi(e(mrfPeerRatio)), 1)}
		p.Mode, _ = mrf.ParseConnMode(e(mrfPeerMode))
		if pool := e(mrfPeerPool); pool != "none" && pool != "" {
			if q := t.cfg.Lookup(t.s, []string{"ltm pool"}, pool); q != nil {
				p.Pool = q.Name
			}
		}
		if p.Pool == "" {
			t.keep(po, "generic peer %s has no pool: messages routed to it fail (MR_FAILED)", po.Name)
		}
		if tc := e(mrfPeerTC); tc != "none" && tc != "" {
			p.Transport = tc
			if p.TC = t.mrfTransport(cfg, tc); p.TC != nil {
				p.Transport = p.TC.Name
			}
		}
		if e(mrfPeerAutoInit) == "enabled" {
			if p.Mode == mrf.PerClient {
				t.keep(po, "generic peer %s: auto-initialization is kept; openltm opens a per-client peer's connections for its clients only", po.Name)
			} else {
				p.AutoInit = time.Duration(max(atoi(e(mrfPeerAutoInitIv)), 100)) * time.Millisecond // [M: at least 100ms]
			}
		}
		cfg.Peers[po.Name] = p
		return p
	}
	if rv := t.cfg.Effective(router, mrfRoutes.Name); rv != nil {
		for _, rn := range rv.List {
			ro := t.cfg.Lookup(t.s, []string{mrfRoute.Key()}, rn)
			if ro == nil {
				return t.refuse("profile %s: route %s does not exist", router.Name, rn)
			}
			e := func(pr *objects.Prop) string { return pr.Effective(t.cfg, ro) }
			r := &mrf.Route{Name: ro.Name, Src: e(mrfRouteSrc), Dst: e(mrfRouteDst), Ratio: e(mrfRouteMode) == "ratio"}
			if pv := mrfRoutePeers.Get(ro); pv != nil {
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
	for _, po := range t.cfg.Of(mrfPeer) {
		peer(po.Name)
	}
	if cfg.DisableParser {
		t.keep(o, "profile %s: disable-parser is kept; openltm always reads the stream with the parser", proto.Name)
		cfg.DisableParser = false
	}
	if why := plainGatewayBlocked(v); why != "" { // translate_ftp.go
		t.keep(o, "profile %s: openltm's message routing %s; the virtual passes the stream through one member per connection", proto.Name, why)
		return true
	}
	v.MRF = cfg
	return true
}

// mrfTransport is the transport-config name as cfg's peers use it (nil:
// none by that name): the source address of its
// source-address-translation (automap: the virtual's address; a
// snatpool's addresses in turn) and its tcp profile's socket settings.
// Its rules and profiles other than tcp and generic protocol are kept
// with a warning.
func (t *translator) mrfTransport(cfg *mrf.Config, name string) *mrf.Transport {
	tco := t.cfg.Lookup(t.s, []string{mrfTransport.Key()}, name)
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
	if sat := mrfTCSNAT.Get(tco); sat != nil {
		// The block as a virtual's: { type automap } or { type snat pool NAME }.
		w := strings.Fields(strings.NewReplacer("{", " ", "}", " ").Replace(sat.Str))
		kv := map[string]string{}
		for i := 0; i+1 < len(w); i += 2 {
			kv[w[i]] = w[i+1]
		}
		switch kv["type"] {
		case "automap":
			x.SNAT = mrf.SNATAutomap
		case "snat":
			if pn := kv["pool"]; pn != "" && pn != "none" {
				if sp := t.cfg.Lookup(t.s, specSnatPool, full(pn)); sp != nil {
					x.SNAT, x.SNATAddrs = mrf.SNATPool, t.dc.SnatPools[sp.Name]
				} else {
					t.keep(tco, "transport-config %s: snatpool %s does not exist; its connections keep the host's address", tco.Name, pn)
				}
			}
		}
	}
	if pv := mrfTCProfiles.Get(tco); pv != nil {
		for _, it := range pv.Items {
			if p := t.cfg.Lookup(t.s, []string{profileTCP.Key()}, full(it.Name)); p != nil {
				x.TCP = t.tcpSide(p, congestionAvailable()) // translate_tcpopts.go
				continue
			}
			if t.cfg.Lookup(t.s, []string{mrfProtocol.Key()}, full(it.Name)) != nil {
				continue // the virtual's protocol cuts the peers' streams [M]
			}
			t.keep(tco, "transport-config %s: profile %s is kept; openltm applies a transport-config's tcp profile only", tco.Name, it.Name)
		}
	}
	if rv := mrfTCRules.Get(tco); rv != nil && len(rv.List) > 0 {
		t.keep(tco, "transport-config %s: rules are kept; openltm runs no rules on peer connections", tco.Name)
	}
	return x
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
	return t.profileNeeds(o, list, mrfProtocol, "GENERICMESSAGE", (*rules.Rule).MRFNeeds) // translate_stream.go
}
