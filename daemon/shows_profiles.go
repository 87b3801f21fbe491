package daemon

import (
	"context"
	"io"

	"github.com/openltm/openltm/daemon/render"
	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/httpcache"
	"github.com/openltm/openltm/objects"
)

// profileShows are the profile kinds whose statistics the virtuals using
// them count (show ltm profile KIND, reset-stats ltm profile KIND).
var profileShows = []struct {
	kind *objects.Kind
	pk   dataplane.ProfileKind
	draw func(io.Writer, string, dataplane.ProfileStats, render.Options) error
}{
	{profileHTTP, dataplane.ProfileHTTP, render.HTTPProfile},
	{profileCompress, dataplane.ProfileCompress, render.CompressProfile},
	{profileTCP, dataplane.ProfileTCP, render.TCPProfile},
	{profileUDP, dataplane.ProfileUDP, render.UDPProfile},
	{profileClientSSL, dataplane.ProfileClientSSL, render.ClientSSLProfile},
	{profileServerSSL, dataplane.ProfileServerSSL, render.ServerSSLProfile},
	{profileRequestAdapt, dataplane.ProfileReqAdapt, render.RequestAdaptProfile},
	{profileResponseAdapt, dataplane.ProfileRespAdapt, render.ResponseAdaptProfile},
	{profileMQTT, dataplane.ProfileMQTT, render.MQTTProfile},
	{profileFIX, dataplane.ProfileFIX, render.FIXProfile},
	{profileDiameter, dataplane.ProfileDiameter, render.DiameterProfile},
	{profileRTSP, dataplane.ProfileRTSP, render.RTSPProfile},
	{profileFastHTTP, dataplane.ProfileFastHTTP, render.FastHTTPProfile},
	{profileNTLM, dataplane.ProfileNTLM, render.NTLMProfile},
	{profileXML, dataplane.ProfileXML, render.XMLProfile},           // translate_xml.go
	{mrfProtocol, dataplane.ProfileMRFProtocol, render.MRFProtocol}, // translate_mrf.go
	{mrfRouter, dataplane.ProfileMRFRouter, render.MRFRouter},
	{mrfSIPSession, dataplane.ProfileMRFProtocol, render.MRFSIPSession},
	{mrfSIPRouter, dataplane.ProfileMRFRouter, render.MRFSIPRouter},
	{mrfDiamSession, dataplane.ProfileMRFProtocol, render.MRFDiameterSession},
	{mrfDiamRouter, dataplane.ProfileMRFRouter, render.MRFDiameterRouter},
}

// profileStatsCommands answers show and reset-stats of the http,
// http-compression, tcp, udp, client-ssl, server-ssl, request-adapt,
// response-adapt, mqtt, fix, diameter, rtsp, fasthttp, ntlm and xml profiles
// and the generic message-routing protocol and router: one block per
// profile, its figures summed over the virtuals using it.
func profileStatsCommands(e *Engine, p *dataplane.Plane) []RuntimeCommand {
	var out []RuntimeCommand
	for _, ps := range profileShows {
		out = append(out,
			RuntimeCommand{"show", ps.kind.Key(), func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
				users := profileUsers(e.Config(), ps.kind)
				for _, name := range profileNames(e, ps.kind, names) {
					o := showOpts(s, words)
					if err := ps.draw(w, name, p.ProfileStats(ps.pk, name, users[name]), o); err != nil {
						return err
					}
					if ps.kind == mrfDiamRouter && o.Detail { // shows_mrf.go
						if err := mrfDynamicRoutes(w, p, users[name], o); err != nil {
							return err
						}
					}
				}
				return nil
			}},
			RuntimeCommand{"reset-stats", ps.kind.Key(), func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
				users := profileUsers(e.Config(), ps.kind)
				for _, name := range profileNames(e, ps.kind, names) {
					p.ResetProfileStats(ps.pk, name, users[name])
				}
				return nil
			}})
	}
	out = append(out,
		RuntimeCommand{"show", profileStatistics.Key(), func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
			st := e.rules.rt.statsEnv(e.log)
			for _, name := range profileNames(e, profileStatistics, names) {
				fields, _ := st.Fields(name)
				if err := render.StatisticsProfile(w, name, fields, showOpts(s, words)); err != nil {
					return err
				}
			}
			return nil
		}},
		RuntimeCommand{"show", profileWebAccel.Key(), func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
			for _, name := range profileNames(e, profileWebAccel, names) {
				var st httpcache.Stats
				if c := e.caches.lookup(name); c != nil {
					st = c.Stats()
				}
				if err := render.WebAccelerationProfile(w, name, st, showOpts(s, words)); err != nil {
					return err
				}
			}
			return nil
		}},
		RuntimeCommand{"reset-stats", profileWebAccel.Key(), func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
			for _, name := range profileNames(e, profileWebAccel, names) {
				if c := e.caches.lookup(name); c != nil {
					c.ResetStats()
				}
			}
			return nil
		}},
		RuntimeCommand{"show", profileHTTP2.Key(), func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
			for _, name := range profileNames(e, profileHTTP2, names) {
				var rs render.HTTP2Stats
				if st := e.h2stats.lookup(name); st != nil {
					u := func(n int64) uint64 { return uint64(max(n, 0)) }
					rs = render.HTTP2Stats{
						Connections: u(st.Connections.Load()), TotalConnections: u(st.TotalConnections.Load()),
						Streams: u(st.Streams.Load()), MaxStreams: u(st.MaxStreams.Load()),
						TotalStreams: u(st.TotalStreams.Load()), Failed: u(st.Failed.Load()),
					}
				}
				if st := e.h2stats.lookupServer(name); st != nil {
					u := func(n int64) uint64 { return uint64(max(n, 0)) }
					rs.Server = &render.HTTP2ServerStats{
						Connections: u(st.Connections.Load()), TotalConnections: u(st.TotalConnections.Load()),
						Streams: u(st.Streams.Load()), TotalStreams: u(st.TotalStreams.Load()), Failed: u(st.Failed.Load()),
					}
				}
				if err := render.HTTP2Profile(w, name, rs, showOpts(s, words)); err != nil {
					return err
				}
			}
			return nil
		}},
		RuntimeCommand{"reset-stats", profileHTTP2.Key(), func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
			for _, name := range profileNames(e, profileHTTP2, names) {
				if st := e.h2stats.lookup(name); st != nil {
					st.Reset()
				}
				if st := e.h2stats.lookupServer(name); st != nil {
					st.Reset()
				}
			}
			return nil
		}},
		RuntimeCommand{"reset-stats", profileStatistics.Key(), func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
			st := e.rules.rt.statsEnv(e.log)
			for _, name := range profileNames(e, profileStatistics, names) {
				st.Reset(name)
			}
			return nil
		}})
	return out
}

// profileUsers maps each profile of kind k to the virtuals using it. A
// virtual's tcp (udp) profile is the one it names, else the built-in
// /Common/tcp (/Common/udp) unless it runs on fastL4. A virtual with
// several client-ssl profiles is a user of each: it counts a handshake at
// the profile the client's server name chose. A gtm listener-doh-* is the
// virtual server of its name (tcp), so a user of its profiles too.
func profileUsers(cfg *objects.Config, k *objects.Kind) map[string][]string {
	out := map[string][]string{}
	for _, v := range append(cfg.Of(ltmVirtual), dohListenerObjects(cfg)...) {
		udp := v.Kind == ltmVirtual && virtualIPProtocol.Effective(cfg, v) == "udp"
		var of []*objects.Object
		var fast bool
		if pv := virtualProfiles.Get(v); pv != nil {
			for _, it := range pv.Items {
				if cfg.Lookup(schema, []string{profileFastL4.Key()}, it.Name) != nil {
					fast = true
				}
				if p := cfg.Lookup(schema, []string{k.Key()}, it.Name); p != nil {
					of = append(of, p)
				}
			}
		}
		switch {
		case k == profileTCP && udp, k == profileUDP && !udp:
			continue
		case len(of) == 0 && !fast && (k == profileTCP || k == profileUDP):
			def := "/Common/" + k.Words[len(k.Words)-1]
			out[def] = append(out[def], v.Name)
			continue
		}
		for _, p := range of {
			out[p.Name] = append(out[p.Name], v.Name)
		}
	}
	return out
}
