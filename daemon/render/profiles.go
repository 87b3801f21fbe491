package render

import (
	"io"
	"strconv"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/httpcache"
	"github.com/openltm/openltm/rules"
)

// The profile statistics blocks (show ltm profile http|tcp|udp|client-ssl|
// server-ssl) show the counters openltm measures, in the layout of
// OneConnectProfile: the figures are the profile's summed over the
// virtuals using it, as BIG-IP's `Virtual Server Name N/A` aggregate is.
// Group and field names follow BIG-IP's where openltm has the counter;
// counters it cannot measure (compression, RAM cache, session cache,
// SYN cookies ...) are left out rather than shown as zero [M].

// maxCiphers bounds the cipher lines of an SSL block: the most used.
const maxCiphers = 5

// HTTPProfile prints one `Ltm::HTTP Profile` block.
func HTTPProfile(w io.Writer, name string, st dataplane.ProfileStats, o Options) error {
	h := st.HTTP
	return statBlock(w, "Ltm::HTTP Profile: "+o.rel(name), [][2]string{
		{"Virtual Server Name", "N/A"},
		{"Cookies", ""},
		{"Cookie Persistence Inserts", o.num(h.CookieInserts)},
		{"Requests", ""},
		{"Total", o.num(h.Requests)},
		{"GET", o.num(h.Get)},
		{"POST", o.num(h.Post)},
		{"HEAD", o.num(h.Head)},
		{"Other Methods", o.num(h.Other)},
		{"Version 1.0 Requests", o.num(h.V10)},
		{"Version 1.1 Requests", o.num(h.V11)},
		{"Pipelined Requests", o.num(h.Pipelined)},
		{"Max Requests per Connection", o.num(h.MaxPerConn)},
		{"Connection: keep-alive", o.num(h.KeepAlive)},
		{"Connection: close", o.num(h.Close)},
		{"Responses", ""},
		{"1xx", o.num(h.Resp1xx)},
		{"2xx", o.num(h.Resp2xx)},
		{"3xx", o.num(h.Resp3xx)},
		{"4xx", o.num(h.Resp4xx)},
		{"5xx", o.num(h.Resp5xx)},
		{"Other", o.num(h.RespOther)},
	})
}

// CompressProfile prints one `Ltm::HTTP Compression Profile` block: the
// responses compressed by coding, those sent as they were to clients
// that accept a coding, and the body bytes before and after [M: BIG-IP
// also breaks the bytes down by content type, which openltm does not].
func CompressProfile(w io.Writer, name string, st dataplane.ProfileStats, o Options) error {
	z := st.Compress
	return statBlock(w, "Ltm::HTTP Compression Profile: "+o.rel(name), [][2]string{
		{"Virtual Server Name", "N/A"},
		{"Responses", ""},
		{"Compressed gzip", o.num(z.Gzip)},
		{"Compressed deflate", o.num(z.Deflate)},
		{"Bypassed", o.num(z.Bypassed)},
		{"Bytes", ""},
		{"Pre-Compression", o.num(z.Pre)},
		{"Post-Compression", o.num(z.Post)},
	})
}

// StatisticsProfile prints one `Ltm::Statistics Profile` block: each
// named field and the value rules gave it (STATS::).
func StatisticsProfile(w io.Writer, name string, fields []rules.StatField, o Options) error {
	rows := [][2]string{{"Fields", ""}}
	for _, f := range fields {
		v := o.num(uint64(max(f.Value, 0)))
		if f.Value < 0 {
			v = strconv.FormatInt(f.Value, 10)
		}
		rows = append(rows, [2]string{f.Name, v})
	}
	return statBlock(w, "Ltm::Statistics Profile: "+o.rel(name), rows)
}

// WebAccelerationProfile prints one `Ltm::Web Acceleration Profile`
// block: the cache's hits and misses, what it holds and what it let go
// [M: BIG-IP's block has more, by object type, which openltm does not
// count].
func WebAccelerationProfile(w io.Writer, name string, st httpcache.Stats, o Options) error {
	return statBlock(w, "Ltm::Web Acceleration Profile: "+o.rel(name), [][2]string{
		{"Virtual Server Name", "N/A"},
		{"Cache", ""},
		{"Hits", o.num(st.Hits)},
		{"Misses", o.num(st.Misses)},
		{"Inserts", o.num(st.Inserts)},
		{"Evictions", o.num(st.Evictions)},
		{"Entries", o.num(st.Entries)},
		{"Size", o.num(uint64(max(st.Bytes, 0)))},
	})
}

// HTTP2Profile prints one `Ltm::HTTP2 Profile` block: the profile's
// client connections and streams, summed over its virtual servers [M:
// BIG-IP's block has more rows, of frames and flow control; these are
// what the gateway counts].
//
// A profile used on the server side (HTTP/2 to members) adds the
// member connections and streams.
func HTTP2Profile(w io.Writer, name string, st HTTP2Stats, o Options) error {
	rows := [][2]string{
		{"Virtual Server Name", "N/A"},
		{"Connections", ""},
		{"Current", o.num(st.Connections)},
		{"Total", o.num(st.TotalConnections)},
		{"Streams", ""},
		{"Current", o.num(st.Streams)},
		{"Maximum Concurrent", o.num(st.MaxStreams)},
		{"Total", o.num(st.TotalStreams)},
		{"Failed (502)", o.num(st.Failed)},
	}
	if sv := st.Server; sv != nil {
		rows = append(rows,
			[2]string{"Server-side Connections", ""},
			[2]string{"Current", o.num(sv.Connections)},
			[2]string{"Total", o.num(sv.TotalConnections)},
			[2]string{"Server-side Streams", ""},
			[2]string{"Current", o.num(sv.Streams)},
			[2]string{"Total", o.num(sv.TotalStreams)},
			[2]string{"Failed (502)", o.num(sv.Failed)},
		)
	}
	return statBlock(w, "Ltm::HTTP2 Profile: "+o.rel(name), rows)
}

// HTTP2Stats are the figures HTTP2Profile prints.
type HTTP2Stats struct {
	Connections, TotalConnections, Streams, MaxStreams, TotalStreams, Failed uint64
	// Server, when the profile is used on the server side.
	Server *HTTP2ServerStats
}

// HTTP2ServerStats are a profile's figures on the server side.
type HTTP2ServerStats struct {
	Connections, TotalConnections, Streams, TotalStreams, Failed uint64
}

// TCPProfile prints one `Ltm::TCP Profile` block.
func TCPProfile(w io.Writer, name string, st dataplane.ProfileStats, o Options) error {
	c := st.Conns
	return statBlock(w, "Ltm::TCP Profile: "+o.rel(name), [][2]string{
		{"Virtual Server Name", "N/A"},
		{"Connections", ""},
		{"Current Open", o.num(c.Cur)},
		{"Maximum Open", o.num(c.Max)},
		{"Accepts", o.num(c.Tot)},
		{"Closed", o.num(closed(c))},
	})
}

// UDPProfile prints one `Ltm::UDP Profile` block.
func UDPProfile(w io.Writer, name string, st dataplane.ProfileStats, o Options) error {
	c := st.Conns
	return statBlock(w, "Ltm::UDP Profile: "+o.rel(name), [][2]string{
		{"Virtual Server Name", "N/A"},
		{"Flows", ""},
		{"Current Open", o.num(c.Cur)},
		{"Maximum Open", o.num(c.Max)},
		{"Accepts", o.num(c.Tot)},
		{"Closed", o.num(closed(c))},
		{"Datagrams", ""},
		{"Received", o.num(c.DatagramsIn)},
		{"Transmitted", o.num(c.DatagramsOut)},
		{"Dropped", o.num(c.Dropped)},
	})
}

// closed is the connections that ended since the reset; those open at
// the reset are not in Accepts, so it never goes below zero.
func closed(c dataplane.ConnProfileStats) uint64 {
	if c.Tot < c.Cur {
		return 0
	}
	return c.Tot - c.Cur
}

// ClientSSLProfile prints one `Ltm::ClientSSL Profile` block.
func ClientSSLProfile(w io.Writer, name string, st dataplane.ProfileStats, o Options) error {
	return sslBlock(w, "Ltm::ClientSSL Profile: "+o.rel(name), st.SSL, o)
}

// ServerSSLProfile prints one `Ltm::ServerSSL Profile` block.
func ServerSSLProfile(w io.Writer, name string, st dataplane.ProfileStats, o Options) error {
	return sslBlock(w, "Ltm::ServerSSL Profile: "+o.rel(name), st.SSL, o)
}

func sslBlock(w io.Writer, title string, s dataplane.SSLProfileStats, o Options) error {
	rows := [][2]string{
		{"Virtual Server Name", "N/A"},
		{"SSL Protocol", ""},
		{"TLS Protocol Version 1.0", o.num(s.TLS10)},
		{"TLS Protocol Version 1.1", o.num(s.TLS11)},
		{"TLS Protocol Version 1.2", o.num(s.TLS12)},
		{"TLS Protocol Version 1.3", o.num(s.TLS13)},
		{"Common", ""},
		{"Current Connections", o.num(s.Cur)},
		{"Maximum Connections", o.num(s.Max)},
		{"Total Connections", o.num(s.Tot)},
		{"Total Native Connections", o.num(s.Full + s.Resumed)},
		{"Full Handshakes", o.num(s.Full)},
		{"Resumed Handshakes", o.num(s.Resumed)},
		{"Handshake Failures", o.num(s.Failures)},
		{"Handshake Timeouts", o.num(s.Timeouts)},
		{"Fatal Alerts Received", o.num(s.Alerts)},
		{"Premature Disconnects", o.num(s.Premature)},
		{"Alert Timeouts", o.num(s.AlertTimeouts)},
		{"Cipher Usage", ""},
	}
	for i, c := range s.Ciphers {
		if i == maxCiphers {
			break
		}
		rows = append(rows, [2]string{c.Name, o.num(c.N)})
	}
	return statBlock(w, title, rows)
}

// RequestAdaptProfile prints one `Ltm::Request Adapt Profile` block: the
// REQMOD exchanges by how they ended [M: the layout and the field names;
// BIG-IP's are not documented].
func RequestAdaptProfile(w io.Writer, name string, st dataplane.ProfileStats, o Options) error {
	return adaptBlock(w, "Ltm::Request Adapt Profile: "+o.rel(name), st.Adapt, true, o)
}

// ResponseAdaptProfile prints one `Ltm::Response Adapt Profile` block:
// the RESPMOD exchanges (a response is never answered in place of one).
func ResponseAdaptProfile(w io.Writer, name string, st dataplane.ProfileStats, o Options) error {
	return adaptBlock(w, "Ltm::Response Adapt Profile: "+o.rel(name), st.Adapt, false, o)
}

func adaptBlock(w io.Writer, title string, a dataplane.AdaptProfileStats, req bool, o Options) error {
	rows := [][2]string{
		{"Virtual Server Name", "N/A"},
		{"ICAP Exchanges", ""},
		{"Total", o.num(a.Unmodified + a.Modified + a.Answered + a.Failed)},
		{"Unmodified", o.num(a.Unmodified)},
		{"Modified", o.num(a.Modified)},
	}
	if req {
		rows = append(rows, [2]string{"Answered", o.num(a.Answered)})
	}
	rows = append(rows, [2]string{"Service Down", o.num(a.Failed)})
	return statBlock(w, title, rows)
}

// MQTTProfile prints one `Ltm::MQTT Profile` block: the packets read
// from each end and the connections reset for bad ones [M: the layout
// and the field names].
func MQTTProfile(w io.Writer, name string, st dataplane.ProfileStats, o Options) error {
	m := st.MQTT
	return statBlock(w, "Ltm::MQTT Profile: "+o.rel(name), [][2]string{
		{"Virtual Server Name", "N/A"},
		{"Packets", ""},
		{"From Clients", o.num(m.FromClient)},
		{"From Servers", o.num(m.FromServer)},
		{"Connections Reset", ""},
		{"Malformed Packet", o.num(m.Malformed)},
		{"Packet Too Large", o.num(m.TooLarge)},
	})
}

// FIXProfile prints one `Ltm::FIX Profile` block: the messages read from
// each end, those refused and those whose tags were mapped [M: the
// layout and the field names].
func FIXProfile(w io.Writer, name string, st dataplane.ProfileStats, o Options) error {
	f := st.FIX
	return statBlock(w, "Ltm::FIX Profile: "+o.rel(name), [][2]string{
		{"Virtual Server Name", "N/A"},
		{"Messages", ""},
		{"From Clients", o.num(f.FromClient)},
		{"From Servers", o.num(f.FromServer)},
		{"Malformed", o.num(f.Malformed)},
		{"Tags Mapped", o.num(f.Mapped)},
	})
}

// DiameterProfile prints one `Ltm::Diameter Profile` block: the messages
// read from each end, those refused, dropped, answered by the virtual
// and persisted [M: the layout and the field names].
func DiameterProfile(w io.Writer, name string, st dataplane.ProfileStats, o Options) error {
	d := st.Diameter
	return statBlock(w, "Ltm::Diameter Profile: "+o.rel(name), [][2]string{
		{"Virtual Server Name", "N/A"},
		{"Messages", ""},
		{"Requests", o.num(d.Requests)},
		{"Answers", o.num(d.Answers)},
		{"Malformed", o.num(d.Malformed)},
		{"Dropped", o.num(d.Dropped)},
		{"Watchdogs Answered", o.num(d.Watchdogs)},
		{"Retransmitted", o.num(d.Retransmitted)},
		{"Unable To Deliver", o.num(d.Undelivered)},
		{"Watchdog Failures", o.num(d.WatchdogFailures)},
		{"Handshake Timeouts", o.num(d.HandshakeTimeouts)},
		{"Too Busy", o.num(d.Busy)},
		{"Rule Responses", o.num(d.Responded)},
		{"Persistence", ""},
		{"Persisted Requests", o.num(d.Persisted)},
		{"Records", o.num(d.Records)},
	})
}

// RTSPProfile prints one `Ltm::RTSP Profile` block: the control
// messages the gateway followed and the data channels it opened [M: the
// layout and the field names].
func RTSPProfile(w io.Writer, name string, st dataplane.ProfileStats, o Options) error {
	r := st.RTSP
	return statBlock(w, "Ltm::RTSP Profile: "+o.rel(name), [][2]string{
		{"Virtual Server Name", "N/A"},
		{"Control Messages", ""},
		{"  Requests", o.num(r.Requests)},
		{"  Responses", o.num(r.Responses)},
		{"  Interleaved Frames", o.num(r.Interleaved)},
		{"  Malformed", o.num(r.Malformed)},
		{"Data Channels", ""},
		{"  Opened", o.num(r.Channels)},
	})
}

// XMLProfile prints one `Ltm::XML Profile` block: the request bodies
// inspected, by how many of the profile's queries matched, and the
// malformed ones [M: the counters are BIG-IP's ltmXmlProfileStat; the
// layout and labels are openltm's].
func XMLProfile(w io.Writer, name string, st dataplane.ProfileStats, o Options) error {
	x := st.XML
	return statBlock(w, "Ltm::XML Profile: "+o.rel(name), [][2]string{
		{"Virtual Server Name", "N/A"},
		{"Documents", ""},
		{"  Inspected", o.num(x.Inspected)},
		{"  One Match", o.num(x.OneMatch)},
		{"  Two Matches", o.num(x.TwoMatches)},
		{"  Three Matches", o.num(x.ThreeMatches)},
		{"  No Matches", o.num(x.NoMatch)},
		{"  Malformed", o.num(x.Malformed)},
	})
}

// FastHTTPProfile prints one `Ltm::FastHTTP Profile` block, with the
// groups of BIG-IP's fasthttp statistics (client, server, connection
// pool, requests, responses) [M: the field names follow F5's fasthttp
// profile statistics as remembered, not read from a system].
func FastHTTPProfile(w io.Writer, name string, st dataplane.ProfileStats, o Options) error {
	f := st.FastHTTP
	return statBlock(w, "Ltm::FastHTTP Profile: "+o.rel(name), [][2]string{
		{"Virtual Server Name", "N/A"},
		{"Client", ""},
		{"  Accepts", o.num(f.ClientAccepts)},
		{"Server", ""},
		{"  Connects", o.num(f.ServerConnects)},
		{"Connection Pool", ""},
		{"  Current Size", o.num(f.PoolCurrent)},
		{"  Reuses", o.num(f.PoolReuses)},
		{"Requests", ""},
		{"  Total", o.num(f.Requests)},
		{"  GET", o.num(f.Get)},
		{"  POST", o.num(f.Post)},
		{"  HTTP/1.0", o.num(f.V10)},
		{"  HTTP/1.1", o.num(f.V11)},
		{"  Pipelined", o.num(f.Pipelined)},
		{"  Parse Errors", o.num(f.ParseErrors)},
		{"Responses", ""},
		{"  2xx", o.num(f.Resp2xx)},
		{"  3xx", o.num(f.Resp3xx)},
		{"  4xx", o.num(f.Resp4xx)},
		{"  5xx", o.num(f.Resp5xx)},
	})
}

// NTLMProfile prints one `Ltm::NTLM Profile` block: the clients a member
// challenged whose server connections the profile kept apart, those that
// answered and stayed bound, and the bindings given up [M: the layout
// and the field names].
func NTLMProfile(w io.Writer, name string, st dataplane.ProfileStats, o Options) error {
	n := st.NTLM
	return statBlock(w, "Ltm::NTLM Profile: "+o.rel(name), [][2]string{
		{"Virtual Server Name", "N/A"},
		{"Connections", ""},
		{"  Challenged", o.num(n.Challenged)},
		{"  Bound", o.num(n.Bound)},
		{"  Unbound", o.num(n.Unbound)},
	})
}

// MRFProtocol prints one `Ltm::Message Routing Generic Protocol` block:
// the messages the protocol cut from each side's stream and wrote to it
// [M: the layout and the field names].
func MRFProtocol(w io.Writer, name string, st dataplane.ProfileStats, o Options) error {
	return mrfProtocol(w, "Ltm::Message Routing Generic Protocol: "+o.rel(name), st, o, false)
}

// MRFSIPSession and MRFDiameterSession print the protocol block of a
// sip or diameter session profile, with the messages the protocol
// answered by itself (keep-alives, Max-Forwards 0; capabilities
// exchanges, watchdogs) and the failed requests it answered [M: the
// layout and the field names].
func MRFSIPSession(w io.Writer, name string, st dataplane.ProfileStats, o Options) error {
	return mrfProtocol(w, "Ltm::Message Routing SIP Session: "+o.rel(name), st, o, true)
}

// MRFDiameterSession: see MRFSIPSession; and its peer connections'
// watchdog: the DWRs sent, those left unanswered and the connections
// closed for them [M: the layout and the field names].
func MRFDiameterSession(w io.Writer, name string, st dataplane.ProfileStats, o Options) error {
	m := st.MRF
	return mrfProtocol(w, "Ltm::Message Routing Diameter Session: "+o.rel(name), st, o, true,
		[2]string{"Watchdog", ""}, [2]string{"  Requests Sent", o.num(m.WatchdogSent)}, [2]string{"  Unanswered", o.num(m.WatchdogFailed)},
		[2]string{"  Connections Closed", o.num(m.WatchdogClosed)})
}

// MRFSIPRouter and MRFDiameterRouter print a sip or diameter router
// profile's block, as MRFRouter does a generic router's.
func MRFSIPRouter(w io.Writer, name string, st dataplane.ProfileStats, o Options) error {
	return mrfRouter(w, "Ltm::Message Routing SIP Router: "+o.rel(name), st, o)
}

// MRFDiameterRouter: see MRFSIPRouter.
func MRFDiameterRouter(w io.Writer, name string, st dataplane.ProfileStats, o Options) error {
	return mrfRouter(w, "Ltm::Message Routing Diameter Router: "+o.rel(name), st, o)
}

func mrfProtocol(w io.Writer, title string, st dataplane.ProfileStats, o Options, local bool, more ...[2]string) error {
	m := st.MRF
	rows := [][2]string{
		{"Virtual Server Name", "N/A"},
		{"Client Messages", ""},
		{"  Received", o.num(m.Received)},
		{"  Sent", o.num(m.Delivered)},
		{"  Oversized", o.num(m.Oversized)},
		{"Peer Messages", ""},
		{"  Received", o.num(m.FromPeers)},
		{"  Sent", o.num(m.Sent)},
	}
	if local {
		rows = append(rows, [2]string{"Answered by the Virtual", ""}, [2]string{"  Locally", o.num(m.Local)}, [2]string{"  Failures", o.num(m.FailAnswered)})
	}
	return statBlock(w, title, append(rows, more...))
}

// MRFRouter prints one `Ltm::Message Routing Generic Router` block: what
// the router did with the messages, and its peer connections [M: the
// layout and the field names].
func MRFRouter(w io.Writer, name string, st dataplane.ProfileStats, o Options) error {
	return mrfRouter(w, "Ltm::Message Routing Generic Router: "+o.rel(name), st, o)
}

func mrfRouter(w io.Writer, title string, st dataplane.ProfileStats, o Options) error {
	m := st.MRF
	return statBlock(w, title, [][2]string{
		{"Virtual Server Name", "N/A"},
		{"Messages", ""},
		{"  Routed", o.num(m.Routed)},
		{"  Answered", o.num(m.Answered)},
		{"  Unsolicited", o.num(m.Unsolicited)},
		{"  Returned", o.num(m.Returned)},
		{"  Retried", o.num(m.Retried)},
		{"  Failed", o.num(m.Failed)},
		{"  Pending Limit Exceeded", o.num(m.PendingFull)},
		{"  Dropped", o.num(m.Dropped)},
		{"Peer Connections", ""},
		{"  Opened", o.num(m.ConnsOpened)},
		{"  Reused", o.num(m.ConnsReused)},
		{"  Failed", o.num(m.ConnsFailed)},
	})
}

// HTTP3Profile prints one `Ltm::HTTP3 Profile` block [M: F5 documents
// no layout for it; the http2 profile's].
func HTTP3Profile(w io.Writer, name string, st HTTP3Stats, o Options) error {
	return statBlock(w, "Ltm::HTTP3 Profile: "+o.rel(name), [][2]string{
		{"Virtual Server Name", "N/A"},
		{"Requests", ""},
		{"Total", o.num(st.Requests)},
		{"Responses", o.num(st.Responses)},
		{"Failed (502)", o.num(st.Failed)},
		{"Early Data (0-RTT)", ""},
		{"Forwarded Early", o.num(st.EarlyForwarded)},
		{"Held for Handshake", o.num(st.EarlyHeld)},
	})
}

// HTTP3Stats are the figures HTTP3Profile prints [M: the 0-RTT rows are
// ours].
type HTTP3Stats struct {
	Requests, Responses, Failed uint64
	EarlyForwarded, EarlyHeld   uint64
}

// QUICProfile prints one `Ltm::QUIC Profile` block [M: the layout is
// ours].
func QUICProfile(w io.Writer, name string, st QUICStats, o Options) error {
	return statBlock(w, "Ltm::QUIC Profile: "+o.rel(name), [][2]string{
		{"Virtual Server Name", "N/A"},
		{"Connections", ""},
		{"Current", o.num(st.Connections)},
		{"Total", o.num(st.TotalConnections)},
		{"Refused", o.num(st.Refused)},
		{"0-RTT", ""},
		{"Accepted", o.num(st.ZeroRTT)},
		{"Ticket Reused", o.num(st.Replayed)},
	})
}

// QUICStats are the figures QUICProfile prints.
type QUICStats struct {
	Connections, TotalConnections, Refused uint64
	ZeroRTT, Replayed                      uint64
}
