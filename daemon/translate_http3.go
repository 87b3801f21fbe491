package daemon

import (
	"context"
	"io"
	"strconv"
	"sync"

	"github.com/openltm/openltm/daemon/render"
	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/http3"
	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/rules"
)

// HTTP/3 from clients: a UDP virtual with quic and http3 profiles, an
// http profile and a client-ssl profile (BIG-IP 15.1+'s stack), served by
// dataplane/http3 in front of the virtual's HTTP engine.
var (
	profileQUIC  = schema.MustKind("ltm profile quic")
	profileHTTP3 = schema.MustKind("ltm profile http3")
	quicBidi     = profileQUIC.MustProp("bidi-concurrent-streams-per-connection")
	quicUni      = profileQUIC.MustProp("uni-concurrent-streams-per-connection")
	sslData0RTT  = profileClientSSL.MustProp("data-0rtt")
)

// early0RTT is the virtual's client-ssl data-0rtt as QUIC takes it, and
// the profile that set it (nil when the virtual has none). Of several
// client-ssl profiles (SNI), the first listed is read [M: BIG-IP's
// 0-RTT decision comes before the server name is known; the first is
// the one a client without SNI gets].
func (t *translator) early0RTT(o *objects.Object) (http3.Early, *objects.Object) {
	p := t.profile(o, profileClientSSL)
	if p == nil {
		return http3.EarlyOff, nil
	}
	switch sslData0RTT.Effective(t.cfg, p) {
	case "enabled-with-anti-replay":
		return http3.EarlyAntiReplay, p
	case "enabled-no-anti-replay":
		return http3.EarlyNoAntiReplay, p
	}
	return http3.EarlyOff, p
}

// http3Stats keeps each http3 and quic profile's counters across
// commits: the virtuals using a profile count into one.
type http3Stats struct {
	mu   sync.Mutex
	h3   map[string]*http3.Stats
	quic map[string]*http3.QUICStats
}

// get returns the counters of the http3 profile h and the quic profile
// q, made on first use.
func (s *http3Stats) get(h, q string) (*http3.Stats, *http3.QUICStats) {
	if s == nil {
		return new(http3.Stats), new(http3.QUICStats)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.h3 == nil {
		s.h3, s.quic = map[string]*http3.Stats{}, map[string]*http3.QUICStats{}
	}
	hs, qs := s.h3[h], s.quic[q]
	if hs == nil {
		hs = new(http3.Stats)
		s.h3[h] = hs
	}
	if qs == nil {
		qs = new(http3.QUICStats)
		s.quic[q] = qs
	}
	return hs, qs
}

func (s *http3Stats) lookupH3(name string) *http3.Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.h3[name]
}

func (s *http3Stats) lookupQUIC(name string) *http3.QUICStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.quic[name]
}

// hasHTTP3 reports whether the virtual names a quic or an http3 profile:
// its udp virtual may then carry the http (and one-connect) profile
// (translate_udp.go).
func (t *translator) hasHTTP3(o *objects.Object) bool {
	return t.profile(o, profileQUIC, profileHTTP3) != nil
}

// h3NoEvents are the rule events an HTTP/3 client never raises: its
// handshake is QUIC's, whose ServerHello and records crypto/tls keeps to
// itself, and its bytes reach the engine already framed as HTTP/1.1
// requests. CLIENTSSL_CLIENTHELLO, CLIENTSSL_CLIENTCERT and
// CLIENTSSL_HANDSHAKE do run, on QUIC's handshake
// (dataplane/internal/mblbvs/http3.go).
var h3NoEvents = []rules.Event{rules.ClientSSLServerHelloSend, rules.ClientSSLData, rules.ClientData}

// http3Rules warns, on a virtual with quic or http3 profiles, of rules
// whose events do not run for its HTTP/3 clients: the rule is kept, as
// BIG-IP keeps it (one rule may serve a TCP virtual too).
func (t *translator) http3Rules(o *objects.Object, list []*rules.Rule) bool {
	if !t.hasHTTP3(o) {
		return true
	}
	for _, r := range list {
		for _, ev := range h3NoEvents {
			if r.Handles(ev) {
				t.note(o, "%s event in rule (%s) does not run for HTTP/3 clients on the virtual server: its quic and http3 profiles serve them; openltm keeps the rule without running that event", ev, r.Name)
			}
		}
	}
	return true
}

// http3 fills the virtual's HTTP/3 settings from its quic and http3
// profiles. It returns false when the virtual was left out.
//
// What is refused, as BIG-IP refuses an incomplete HTTP/3 stack [M: the
// messages are ours, in the http2 profile's words]: an http3 profile
// without a quic profile, a quic profile without an http3 profile, either
// on a virtual that is not ip-protocol udp with a udp profile, without an
// http profile or without a client-ssl profile (QUIC is TLS 1.3), and an
// http2 profile beside them (HTTP/2 needs TCP).
func (t *translator) http3(o *objects.Object, v *dataplane.Virtual) bool {
	q, h := t.profile(o, profileQUIC), t.profile(o, profileHTTP3)
	if q == nil && h == nil {
		if early, p := t.early0RTT(o); early != http3.EarlyOff {
			// TLS over TCP: Go's crypto/tls takes no early data as a
			// server, so the client's 0-RTT is refused and it resends
			// after the handshake.
			t.note(o, "profile %s (client-ssl) data-0rtt %s is taken only from HTTP/3 clients (quic and http3 profiles); the virtual server (%s) serves TLS over TCP, whose clients send their requests after the handshake", p.Name, sslData0RTT.Effective(t.cfg, p), o.Name)
		}
		return true
	}
	switch {
	case q == nil:
		return t.refuse("profile %s (http3) requires a quic profile on the virtual server (%s)", h.Name, o.Name)
	case h == nil:
		return t.refuse("profile %s (quic) requires an http3 profile on the virtual server (%s)", q.Name, o.Name)
	case virtualIPProtocol.Effective(t.cfg, o) != "udp" || t.profile(o, profileUDP) == nil:
		return t.refuse("profile %s (quic) requires ip-protocol udp and a udp profile on the virtual server (%s)", q.Name, o.Name)
	case v.TLS == nil || v.TLS.Client == nil:
		return t.refuse("profile %s (quic) requires a client-ssl profile on the virtual server (%s): QUIC is TLS 1.3", q.Name, o.Name)
	case t.profile(o, profileHTTP) == nil || v.MBLB == nil:
		return t.refuse("profile %s (http3) requires an http profile on the virtual server (%s)", h.Name, o.Name)
	case t.profile(o, profileHTTP2) != nil:
		return t.refuse("profile %s (http2) cannot be used with profile %s (http3) on the virtual server (%s): HTTP/2 needs ip-protocol tcp; serve it on a tcp virtual of the same address", t.profile(o, profileHTTP2).Name, h.Name, o.Name)
	}
	if v.TLS.Forward != nil {
		return t.refuse("profile %s (quic) cannot be used with ssl-forward-proxy on the virtual server (%s)", q.Name, o.Name)
	}
	bidi, _ := strconv.ParseInt(quicBidi.Effective(t.cfg, q), 10, 64)
	uni, _ := strconv.ParseInt(quicUni.Effective(t.cfg, q), 10, 64)
	var st *http3Stats
	if t.rules != nil && t.rules.e != nil {
		st = &t.rules.e.h3stats
	}
	hs, qs := st.get(h.Name, q.Name)
	early, cp := t.early0RTT(o)
	if early != http3.EarlyOff && sslSessionTicket.Effective(t.cfg, cp) != "enabled" {
		// 0-RTT rides on a resumed session: without tickets no client
		// has one [M: BIG-IP's GUI asks for session tickets with 0-RTT].
		t.note(o, "profile %s (client-ssl) data-0rtt needs session-ticket enabled: without tickets no HTTP/3 client resumes, so none sends 0-RTT on the virtual server (%s)", cp.Name, o.Name)
	}
	v.HTTP3 = &http3.Config{
		Early:          early,
		Profile:        h.Name,
		QUICProfile:    q.Name,
		MaxBidiStreams: bidi,
		MaxUniStreams:  uni,
		IdleTimeout:    v.IdleTimeout,
		Stats:          hs,
		QUICStats:      qs,
	}
	return true
}

// http3StatsCommands answers show and reset-stats of the http3 and quic
// profiles: one block per profile, summed over the virtuals using it.
func http3StatsCommands(e *Engine) []RuntimeCommand {
	u := func(n int64) uint64 { return uint64(max(n, 0)) }
	return []RuntimeCommand{
		{"show", profileHTTP3.Key(), func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
			for _, name := range profileNames(e, profileHTTP3, names) {
				var rs render.HTTP3Stats
				if st := e.h3stats.lookupH3(name); st != nil {
					rs = render.HTTP3Stats{Requests: u(st.Requests.Load()), Responses: u(st.Responses.Load()), Failed: u(st.Failed.Load()),
						EarlyForwarded: u(st.EarlyForwarded.Load()), EarlyHeld: u(st.EarlyHeld.Load())}
				}
				if err := render.HTTP3Profile(w, name, rs, showOpts(s, words)); err != nil {
					return err
				}
			}
			return nil
		}},
		{"reset-stats", profileHTTP3.Key(), func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
			for _, name := range profileNames(e, profileHTTP3, names) {
				if st := e.h3stats.lookupH3(name); st != nil {
					st.Reset()
				}
			}
			return nil
		}},
		{"show", profileQUIC.Key(), func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
			for _, name := range profileNames(e, profileQUIC, names) {
				var rs render.QUICStats
				if st := e.h3stats.lookupQUIC(name); st != nil {
					rs = render.QUICStats{Connections: u(st.Connections.Load()), TotalConnections: u(st.TotalConnections.Load()), Refused: u(st.Refused.Load()),
						ZeroRTT: u(st.ZeroRTT.Load()), Replayed: u(st.Replayed.Load())}
				}
				if err := render.QUICProfile(w, name, rs, showOpts(s, words)); err != nil {
					return err
				}
			}
			return nil
		}},
		{"reset-stats", profileQUIC.Key(), func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
			for _, name := range profileNames(e, profileQUIC, names) {
				if st := e.h3stats.lookupQUIC(name); st != nil {
					st.Reset()
				}
			}
			return nil
		}},
	}
}
