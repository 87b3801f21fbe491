package dataplane

import (
	"sort"
	"sync/atomic"

	"github.com/openltm/openltm/dataplane/internal/state"
)

// ProfileKind names the profile shows a virtual counts for (show ltm
// profile tcp|udp|http|client-ssl|server-ssl).
type ProfileKind string

// The profile kinds ProfileStats and ResetProfileStats take.
const (
	ProfileTCP       ProfileKind = "tcp"
	ProfileUDP       ProfileKind = "udp"
	ProfileHTTP      ProfileKind = "http"
	ProfileClientSSL ProfileKind = "client-ssl"
	ProfileServerSSL ProfileKind = "server-ssl"
	ProfileCompress  ProfileKind = "http-compression"
	ProfileReqAdapt  ProfileKind = "request-adapt"
	ProfileRespAdapt ProfileKind = "response-adapt"
	ProfileMQTT      ProfileKind = "mqtt"
	ProfileFIX       ProfileKind = "fix"
	ProfileDiameter  ProfileKind = "diameter"
	ProfileRTSP      ProfileKind = "rtsp"
	ProfileFastHTTP  ProfileKind = "fasthttp"
	ProfileNTLM      ProfileKind = "ntlm"
	ProfileXML       ProfileKind = "xml"
	// ProfileMRFProtocol and ProfileMRFRouter are the generic
	// message-routing profiles (show ltm message-routing generic
	// protocol|router).
	ProfileMRFProtocol ProfileKind = "message-routing generic protocol"
	ProfileMRFRouter   ProfileKind = "message-routing generic router"
)

// ProfileStats is one profile's figures summed over the virtuals using
// it; only the group of its kind is filled in.
type ProfileStats struct {
	// Virtuals is how many of the virtuals asked about are running.
	Virtuals int
	Conns    ConnProfileStats
	HTTP     HTTPProfileStats
	Compress CompressProfileStats
	SSL      SSLProfileStats
	Adapt    AdaptProfileStats
	MQTT     MQTTProfileStats
	FIX      FIXProfileStats
	Diameter DiameterProfileStats
	RTSP     RTSPProfileStats
	FastHTTP FastHTTPProfileStats
	NTLM     NTLMProfileStats
	MRF      MRFProfileStats
	XML      XMLProfileStats
}

// MRFProfileStats are a generic protocol's and router's messages
// (mrf.Counters): the protocol's messages each way, and what the router
// did with them.
type MRFProfileStats struct {
	// Received and Delivered count the clients' messages in and out,
	// FromPeers and Sent the peers'; Oversized the clients reset for a
	// message past max-message-size.
	Received, Delivered, FromPeers, Sent, Oversized uint64
	// Routed counts the messages sent to a peer, Answered the peers'
	// answers taken back, Unsolicited the peers' messages routed as a
	// client's; Dropped, Failed (MR_FAILED), Retried (MR::retry),
	// Returned (MR::return) and PendingFull (past max-pending-messages or
	// max-pending-bytes) what befell the others; ConnsOpened,
	// ConnsReused and ConnsFailed the peer connections.
	Routed, Answered, Unsolicited, Dropped, Failed, Retried, Returned, PendingFull uint64
	ConnsOpened, ConnsReused, ConnsFailed                                          uint64
	// Local counts the messages a protocol (SIP, Diameter) answered by
	// itself, FailAnswered the failed requests it answered.
	Local, FailAnswered uint64
	// WatchdogSent counts the watchdog requests sent to quiet peer
	// connections, WatchdogFailed those left unanswered, WatchdogClosed
	// the connections closed for them (a Diameter session profile's
	// watchdog-timeout).
	WatchdogSent, WatchdogFailed, WatchdogClosed uint64
}

// RTSPProfileStats are an rtsp profile's control messages and data
// channels (rtsp.Counts).
type RTSPProfileStats struct {
	Requests, Responses, Interleaved, Channels, Malformed uint64
}

// XMLProfileStats are an xml profile's inspected request bodies
// (xmlcbr.Counts): by how many queries matched, and the malformed ones.
type XMLProfileStats struct {
	Inspected, OneMatch, TwoMatches, ThreeMatches, NoMatch, Malformed uint64
}

// FastHTTPProfileStats are a fasthttp profile's figures, read from what
// its virtuals count anyway (the http requests and responses, the
// engine's server connections): the profile costs the request path
// nothing more.
type FastHTTPProfileStats struct {
	// ClientAccepts counts the client connections the virtuals took;
	// ServerConnects the server connections opened, PoolCurrent those
	// open now, PoolReuses the requests that went on a connection an
	// earlier one had opened.
	ClientAccepts, ServerConnects, PoolCurrent, PoolReuses uint64
	// Requests and its kinds, Pipelined those sent before the previous
	// answer; Resp2xx to Resp5xx the members' answers by class.
	Requests, Get, Post, V10, V11, Pipelined uint64
	Resp2xx, Resp3xx, Resp4xx, Resp5xx       uint64
	// ParseErrors counts the clients reset for a request past the
	// bounds or one that did not parse.
	ParseErrors uint64
}

// NTLMProfileStats are an ntlm profile's bindings (mblb.Stats'
// NTLMChallenged, NTLMBound, NTLMUnbound).
type NTLMProfileStats struct {
	Challenged, Bound, Unbound uint64
}

// DiameterProfileStats are a diameter profile's messages: what a
// virtual carries each way, and what it refused, dropped, answered
// itself or sent by persistence.
type DiameterProfileStats struct {
	// Requests and Answers count the messages read from clients and
	// members; Malformed the streams reset for a message that could not
	// be read; Dropped the messages that went nowhere; Watchdogs the
	// members' DWRs and DPRs answered by the virtual; Persisted the
	// requests sent by a persist-avp record; Records the records held;
	// Retransmitted the client's requests sent again to another member,
	// Undelivered those answered DIAMETER_UNABLE_TO_DELIVER;
	// WatchdogFailures the member connections reset for unanswered DWRs;
	// HandshakeTimeouts those reset for a CEA that did not come within
	// handshake-timeout; Busy the requests answered DIAMETER_TOO_BUSY
	// (a rule's choice); Responded the messages rules sent with
	// DIAMETER::respond.
	Requests, Answers, Malformed, Dropped, Watchdogs, Persisted, Records uint64
	Retransmitted, Undelivered, WatchdogFailures                         uint64
	HandshakeTimeouts, Busy, Responded                                   uint64
}

// FIXProfileStats are a fix profile's messages: how much a virtual
// carries, how often senders send what the profile refuses, and how many
// messages had their tags mapped.
type FIXProfileStats struct {
	// FromClient and FromServer count the messages read from each end,
	// Malformed those refused (dropped or reset), Mapped those whose
	// tags were renumbered.
	FromClient, FromServer, Malformed, Mapped uint64
}

// MQTTProfileStats are an mqtt profile's packets: to see what a rule
// acts on and how often clients send what the proxy refuses.
type MQTTProfileStats struct {
	// FromClient and FromServer count the packets read from each end;
	// Malformed the connections reset for a malformed packet, TooLarge
	// those reset for a packet past the bound.
	FromClient, FromServer, Malformed, TooLarge uint64
}

// AdaptProfileStats are a request-adapt or response-adapt profile's ICAP
// exchanges: to tell a scanning service that blocks from one that is
// down.
type AdaptProfileStats struct {
	// Unmodified counts the messages the ICAP server left as they were
	// (204), Modified those it changed, Answered the requests it
	// answered in place of a member (a blocking page); Failed the
	// exchanges that failed, after which service-down-action applied.
	Unmodified, Modified, Answered, Failed uint64
}

// CompressProfileStats are an http-compression profile's responses.
type CompressProfileStats struct {
	// Gzip and Deflate count the responses compressed in each coding,
	// Pre and Post their body bytes before and after; Bypassed the
	// responses to clients that accept a coding sent uncompressed.
	Gzip, Deflate, Pre, Post, Bypassed uint64
}

// ConnProfileStats are a tcp or udp profile's connections (flows).
type ConnProfileStats struct {
	// Cur is the connections open now. Max is the sum of each virtual's
	// most concurrent connections since the profile's last reset: exact
	// for a profile on one virtual, an upper bound for one shared.
	Cur, Max, Tot uint64
	// DatagramsIn and DatagramsOut count client datagrams received and
	// datagrams sent to clients; Dropped the client datagrams lost (no
	// member could take them, or past UDP::hold's bounds). UDP only.
	DatagramsIn, DatagramsOut, Dropped uint64
}

// HTTPProfileStats are an http profile's requests and responses.
type HTTPProfileStats struct {
	Requests, Get, Post, Head, Other uint64
	// V10 and V11 count HTTP/1.0 and HTTP/1.1 requests.
	V10, V11 uint64
	// KeepAlive and Close count requests with Connection: keep-alive and
	// Connection: close.
	KeepAlive, Close uint64
	// Resp1xx to Resp5xx count the members' responses by status class,
	// RespOther any other status.
	Resp1xx, Resp2xx, Resp3xx, Resp4xx, Resp5xx, RespOther uint64
	// MaxPerConn is the most requests one client connection carried, over
	// the connections that ended (the highest of the virtuals').
	MaxPerConn uint64
	// Pipelined counts requests that came while an earlier one of the
	// same client was unanswered; CookieInserts the cookies cookie
	// persistence's insert method added.
	Pipelined, CookieInserts uint64
}

// SSLProfileStats are a client-ssl or server-ssl profile's connections
// and handshakes.
type SSLProfileStats struct {
	// Cur is the TLS connections established (handshake complete) and
	// open now, Max the most open at once since the profile's last reset
	// (summed over its virtuals, as ConnProfileStats.Max), Tot those
	// established since that reset.
	Cur, Max, Tot uint64
	// Full and Resumed count completed handshakes, Failures the failed
	// ones, Timeouts those of the failures the handshake-timeout ended and
	// Alerts those the peer ended with a fatal alert.
	Full, Resumed, Failures, Timeouts, Alerts uint64
	// Premature counts the connections the peer ended without
	// close_notify, on profiles watching it (unclean-shutdown disabled,
	// strict-resume enabled).
	Premature uint64
	// AlertTimeouts counts the connections reset when the peer did not
	// answer close_notify within alert-timeout.
	AlertTimeouts uint64

	TLS10, TLS11, TLS12, TLS13, OtherVersion uint64
	// Ciphers are the suites used, most used first.
	Ciphers []CipherCount
}

// CipherCount is how many handshakes chose one cipher suite.
type CipherCount struct {
	Name string
	N    uint64
}

// virtualNamed is the running virtual server of that full name, or nil.
func (p *Plane) virtualNamed(name string) *state.Virtual {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.virtuals[name]
}

// virtualsNamed is the running virtuals among names.
func (p *Plane) virtualsNamed(names []string) []*state.Virtual {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*state.Virtual
	for _, n := range names {
		if v := p.virtuals[n]; v != nil {
			out = append(out, v)
		}
	}
	return out
}

// ProfileStats sums the figures of profile name over the virtuals using
// it (the daemon knows which do); those not running are left out.
func (p *Plane) ProfileStats(kind ProfileKind, name string, virtuals []string) ProfileStats {
	vs := p.virtualsNamed(virtuals)
	st := ProfileStats{Virtuals: len(vs)}
	var ciphers [state.NumCiphers]uint64
	for _, v := range vs {
		pc := &v.Prof
		switch kind {
		case ProfileTCP, ProfileUDP:
			c := &st.Conns
			c.Cur += uint64(max(v.Stats.Cur.Load(), 0))
			c.Max += uint64(max(pc.Conns.Max.Load(), 0))
			c.Tot += pc.Conns.Tot.Load()
			c.DatagramsIn += pc.Conns.DgIn.Load()
			c.DatagramsOut += pc.Conns.DgOut.Load()
			c.Dropped += pc.Conns.DgDropped.Load()
		case ProfileHTTP:
			h, x := &st.HTTP, &pc.HTTP
			h.Requests += x.Requests.Load()
			h.Get += x.Get.Load()
			h.Post += x.Post.Load()
			h.Head += x.Head.Load()
			h.Other += x.Other.Load()
			h.V10 += x.V10.Load()
			h.V11 += x.V11.Load()
			h.KeepAlive += x.KeepAlive.Load()
			h.Close += x.Close.Load()
			h.Resp1xx += x.Resp[0].Load()
			h.Resp2xx += x.Resp[1].Load()
			h.Resp3xx += x.Resp[2].Load()
			h.Resp4xx += x.Resp[3].Load()
			h.Resp5xx += x.Resp[4].Load()
			h.RespOther += x.Resp[5].Load()
			h.MaxPerConn = max(h.MaxPerConn, x.MaxPerConn.Load())
			h.Pipelined += x.Pipelined.Load()
			h.CookieInserts += x.CookieInserts.Load()
		case ProfileCompress:
			z, x := &st.Compress, &pc.Compress
			z.Gzip += x.Gzip.Load()
			z.Deflate += x.Deflate.Load()
			z.Pre += x.Pre.Load()
			z.Post += x.Post.Load()
			z.Bypassed += x.Bypassed.Load()
		case ProfileReqAdapt, ProfileRespAdapt:
			x := &pc.RequestAdapt
			if kind == ProfileRespAdapt {
				x = &pc.ResponseAdapt
			}
			a := &st.Adapt
			a.Unmodified += x.Unmodified.Load()
			a.Modified += x.Modified.Load()
			a.Answered += x.Answered.Load()
			a.Failed += x.Failed.Load()
		case ProfileMQTT:
			m, x := &st.MQTT, &pc.MQTT
			m.FromClient += x.FromClient.Load()
			m.FromServer += x.FromServer.Load()
			m.Malformed += x.Malformed.Load()
			m.TooLarge += x.TooLarge.Load()
		case ProfileDiameter:
			m, x := &st.Diameter, &pc.Diameter
			m.Requests += x.Requests.Load()
			m.Answers += x.Answers.Load()
			m.Malformed += x.Malformed.Load()
			m.Dropped += x.Dropped.Load()
			m.Watchdogs += x.Watchdogs.Load()
			m.Persisted += x.Persisted.Load()
			m.Retransmitted += x.Retransmitted.Load()
			m.Undelivered += x.Undelivered.Load()
			m.WatchdogFailures += x.WatchdogFailures.Load()
			m.HandshakeTimeouts += x.HandshakeTimeouts.Load()
			m.Busy += x.Busy.Load()
			m.Responded += x.Responded.Load()
			m.Records += uint64(pc.DiameterPersist.Len())
		case ProfileFIX:
			m, x := &st.FIX, &pc.FIX
			m.FromClient += x.FromClient.Load()
			m.FromServer += x.FromServer.Load()
			m.Malformed += x.Malformed.Load()
			m.Mapped += x.Mapped.Load()
		case ProfileRTSP:
			m, x := &st.RTSP, &pc.RTSP
			m.Requests += x.Requests.Load()
			m.Responses += x.Responses.Load()
			m.Interleaved += x.Interleaved.Load()
			m.Channels += x.Channels.Load()
			m.Malformed += x.Malformed.Load()
		case ProfileMRFProtocol, ProfileMRFRouter:
			m, x := &st.MRF, &pc.MRF
			for _, f := range []struct {
				to   *uint64
				from *atomic.Uint64
			}{
				{&m.Received, &x.Received}, {&m.Delivered, &x.Delivered}, {&m.FromPeers, &x.FromPeers}, {&m.Sent, &x.Sent},
				{&m.Oversized, &x.Oversized}, {&m.Routed, &x.Routed}, {&m.Answered, &x.Answered},
				{&m.Unsolicited, &x.Unsolicited}, {&m.Dropped, &x.Dropped}, {&m.Failed, &x.Failed},
				{&m.Retried, &x.Retried}, {&m.Returned, &x.Returned}, {&m.PendingFull, &x.PendingFull},
				{&m.ConnsOpened, &x.ConnsOpened}, {&m.ConnsReused, &x.ConnsReused}, {&m.ConnsFailed, &x.ConnsFailed},
				{&m.Local, &x.Local}, {&m.FailAnswered, &x.FailAnswered},
				{&m.WatchdogSent, &x.WatchdogSent}, {&m.WatchdogFailed, &x.WatchdogFailed}, {&m.WatchdogClosed, &x.WatchdogClosed},
			} {
				*f.to += f.from.Load()
			}
		case ProfileXML:
			m, x := &st.XML, &pc.XML
			m.Inspected += x.Inspected.Load()
			m.OneMatch += x.OneMatch.Load()
			m.TwoMatches += x.TwoMatches.Load()
			m.ThreeMatches += x.ThreeMatches.Load()
			m.NoMatch += x.NoMatch.Load()
			m.Malformed += x.Malformed.Load()
		case ProfileFastHTTP:
			p.fastHTTPStats(&st.FastHTTP, v)
		case ProfileNTLM:
			es, _ := p.mblbs.Stats(v.Name)
			if b := pc.NTLMBase.Load(); b != nil {
				es = sinceBase(es, *b)
			}
			st.NTLM.Challenged += es.NTLMChallenged
			st.NTLM.Bound += es.NTLMBound
			st.NTLM.Unbound += es.NTLMUnbound
		case ProfileClientSSL, ProfileServerSSL:
			x := &pc.ServerSSL
			if kind == ProfileClientSSL {
				if x = pc.ClientSSL(name); x == nil {
					continue
				}
			}
			s := &st.SSL
			s.Cur += uint64(max(x.Cur.Load(), 0))
			s.Max += uint64(max(x.Max.Load(), 0))
			s.Tot += x.Tot.Load()
			s.Full += x.Full.Load()
			s.Resumed += x.Resumed.Load()
			s.Failures += x.Failures.Load()
			s.Timeouts += x.Timeouts.Load()
			s.Alerts += x.Alerts.Load()
			s.Premature += x.Premature.Load()
			s.AlertTimeouts += x.AlertTimeouts.Load()
			s.TLS10 += x.Versions[0].Load()
			s.TLS11 += x.Versions[1].Load()
			s.TLS12 += x.Versions[2].Load()
			s.TLS13 += x.Versions[3].Load()
			s.OtherVersion += x.Versions[4].Load()
			for i := range ciphers {
				ciphers[i] += x.Ciphers[i].Load()
			}
		}
	}
	for i, n := range ciphers {
		if n > 0 {
			st.SSL.Ciphers = append(st.SSL.Ciphers, CipherCount{state.CipherName(i), n})
		}
	}
	sort.SliceStable(st.SSL.Ciphers, func(i, j int) bool { return st.SSL.Ciphers[i].N > st.SSL.Ciphers[j].N })
	return st
}

// ResetProfileStats zeroes the figures of profile name on the virtuals
// using it (reset-stats ltm profile KIND NAME); the virtuals' own
// counters and their other profiles' stay.
func (p *Plane) ResetProfileStats(kind ProfileKind, name string, virtuals []string) {
	for _, v := range p.virtualsNamed(virtuals) {
		switch kind {
		case ProfileTCP, ProfileUDP:
			v.Prof.Conns.Reset(v.Stats.Cur.Load())
		case ProfileHTTP:
			v.Prof.HTTP.Reset()
		case ProfileCompress:
			v.Prof.Compress.Reset()
		case ProfileClientSSL:
			if c := v.Prof.ClientSSL(name); c != nil {
				c.Reset()
			}
		case ProfileServerSSL:
			v.Prof.ServerSSL.Reset()
		case ProfileReqAdapt:
			v.Prof.RequestAdapt.Reset()
		case ProfileRespAdapt:
			v.Prof.ResponseAdapt.Reset()
		case ProfileMQTT:
			v.Prof.MQTT.Reset()
		case ProfileFIX:
			v.Prof.FIX.Reset()
		case ProfileDiameter:
			v.Prof.Diameter.Reset()
		case ProfileRTSP:
			v.Prof.RTSP.Reset()
		case ProfileXML:
			v.Prof.XML.Reset()
		case ProfileMRFProtocol:
			v.Prof.MRF.ResetProtocol()
		case ProfileMRFRouter:
			v.Prof.MRF.ResetRouter()
		case ProfileFastHTTP:
			v.Prof.HTTP.Reset()
			v.Prof.FastHTTPAccepts.Store(v.Stats.Tot.Load())
			es, _ := p.mblbs.Stats(v.Name)
			v.Prof.FastHTTPBase.Store(&es)
		case ProfileNTLM:
			es, _ := p.mblbs.Stats(v.Name)
			v.Prof.NTLMBase.Store(&es)
		}
	}
}

// fastHTTPStats adds virtual v's figures to f: its http counters, and
// its engine's since the profile's last reset.
func (p *Plane) fastHTTPStats(f *FastHTTPProfileStats, v *state.Virtual) {
	x := &v.Prof.HTTP
	if tot, base := v.Stats.Tot.Load(), v.Prof.FastHTTPAccepts.Load(); tot >= base {
		f.ClientAccepts += tot - base
	}
	f.Requests += x.Requests.Load()
	f.Get += x.Get.Load()
	f.Post += x.Post.Load()
	f.V10 += x.V10.Load()
	f.V11 += x.V11.Load()
	f.Pipelined += x.Pipelined.Load()
	f.Resp2xx += x.Resp[1].Load()
	f.Resp3xx += x.Resp[2].Load()
	f.Resp4xx += x.Resp[3].Load()
	f.Resp5xx += x.Resp[4].Load()
	es, ok := p.mblbs.Stats(v.Name)
	if !ok {
		return
	}
	f.PoolCurrent += uint64(max(es.ServerConns, 0))
	if b := v.Prof.FastHTTPBase.Load(); b != nil {
		es = sinceBase(es, *b)
	}
	f.ServerConnects += es.ServerConnsOpened
	if es.Messages > es.ServerConnsOpened {
		f.PoolReuses += es.Messages - es.ServerConnsOpened
	}
	f.ParseErrors += es.Oversize + es.Resets
}

// sinceBase is the counters of now that reset-stats left at base (those
// a show of fasthttp and ntlm reads); a counter below its base (a new
// engine after a commit) counts from zero.
func sinceBase(now, base MBLBStats) MBLBStats {
	d := func(a, b uint64) uint64 {
		if a < b {
			return a
		}
		return a - b
	}
	now.Messages = d(now.Messages, base.Messages)
	now.ServerConnsOpened = d(now.ServerConnsOpened, base.ServerConnsOpened)
	now.Oversize = d(now.Oversize, base.Oversize)
	now.Resets = d(now.Resets, base.Resets)
	now.NTLMChallenged = d(now.NTLMChallenged, base.NTLMChallenged)
	now.NTLMBound = d(now.NTLMBound, base.NTLMBound)
	now.NTLMUnbound = d(now.NTLMUnbound, base.NTLMUnbound)
	return now
}
