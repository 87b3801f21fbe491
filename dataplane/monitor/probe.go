// Package monitor runs BIG-IP health monitors against one target each: the
// active probes (tcp, tcp-half-open, http, https, http2, udp, dns, icmp,
// gateway-icmp, external, smtp, pop3, imap, ftp, nntp, ldap, sip, radius,
// radius-accounting, postgresql, mysql, mssql, tcp-echo, scripted, soap,
// rpc, diameter, mqtt, snmp-dca, snmp-dca-base), the passive inband
// monitor, and the timing rules that turn probe results into a status
// (interval, timeout, time-until-up, up-interval, manual-resume;
// reference §8). It knows
// nothing of pools: the dataplane starts one Instance per monitored
// member or node and combines their statuses by the monitor rule.
//
// How the dataplane uses it:
//
//	spec := &monitor.Spec{Type: monitor.DNS, Interval: 5 * time.Second, Timeout: 16 * time.Second,
//	        DNS: &monitor.DNSQuery{Name: "www.example", Type: dns.TypeA}}
//	if err := spec.Check(); err != nil { /* refuse the commit */ }
//	in := monitor.Start(spec, member, func(s monitor.State) { ... }) // s.Disabled: recv-disable matched
//	in.Stop()
//
//	// inband: no probes, the proxy reports what its connections saw
//	pv := monitor.NewPassive(&monitor.Spec{Type: monitor.Inband, Inband: &monitor.InbandLimits{...}}, onChange)
//	pv.Failed()     // connect failed, or no answer within pv.ResponseTime()
//	pv.Succeeded()  // the member answered
//	pv.Stop()
//
// The probes, as BIG-IP runs them:
//   - tcp and http: connect, send, read until recv or recv-disable matches
//     (recv-disable: up but disabled, State.Disabled) or the server closes;
//     reverse turns a recv match into down. tcp without recv needs only the
//     connect; http without recv needs any answer.
//   - https, and http with TLS set: the same over TLS. The cipher list is an
//     F5 cipher string (dataplane/tlsprof); the server name sent is TLS's
//     ServerName, else the Host header of the send string; the member's
//     certificate is not verified (BIG-IP does not either); a client
//     certificate is offered when set; TLS.Profile (ssl-profile) replaces
//     all of these. http and https send Username and Password as Basic
//     authorization (options.go).
//   - http2: the send string, an HTTP/1-style request, as one HTTP/2
//     stream (http2.go): over TLS with ALPN h2 when TLS is set (the
//     ssl-profile; a member that does not choose h2 is down), else
//     cleartext with prior knowledge. The answer is judged as the text
//     "HTTP/2.0 <status> <reason>", its header fields, a blank line and
//     its body; without recv any answer is up, as with http.
//   - udp: one datagram; a reply is judged like tcp's. An ICMP port
//     unreachable marks down. With a recv string, silence until the deadline
//     is down; without one, silence for UDPSettle counts as up, as BIG-IP's
//     udp monitor does (only an unreachable port fails it).
//   - dns: a query for DNS.Name and DNS.Type over UDP (TCP when truncated);
//     accept-rcode no-error needs NOERROR, anything accepts any code;
//     answer-contains query-type needs a record of the query's type in the
//     answer, any-type any record, anything nothing; DNS.Recv, when set,
//     must be one of the answer's addresses (reverse: must not).
//   - icmp and gateway-icmp: one echo request to the address (raw socket:
//     root or CAP_NET_RAW).
//   - external: runs the program with the member's address (an IPv4 address
//     written IPv6-mapped, ::ffff:a.b.c.d, as BIG-IP passes it), its port
//     and the args, with the user-defined variables and MON_TMPL_NAME,
//     RUN_I, NODE_IP, NODE_PORT in the environment. Anything on stdout is
//     up; nothing, or still running at the deadline, is down, and the
//     program's whole process group is killed.
//   - smtp, pop3, imap, ftp and nntp: a conversation in which every reply must be
//     the expected one, ending with QUIT (imap: LOGOUT) whose answer is not
//     awaited. smtp: a 220 greeting, then HELO with Login.Domain (the local
//     host name when none) answered 250. pop3: a +OK greeting, then USER
//     and PASS answered +OK when a username is set. imap: a "* OK" or
//     "* PREAUTH" greeting, then LOGIN answered OK when a username is set,
//     then SELECT of Login.Folder answered OK once authenticated. ftp: a 220
//     greeting, a login (as anonymous when no username is set), then, when
//     Login.Filename is set, TYPE I and RETR of the file over a passive
//     (PASV, or EPSV over IPv6) or, with Login.Port, an active (PORT or
//     EPRT) data connection, read to its end or to 1 MiB; the passive
//     connection goes to the member's address, not the one in the reply.
//     nntp: a 200 or 201 greeting, AUTHINFO USER (and PASS when asked)
//     when a username is set, then GROUP of Login.Newsgroup answered 211.
//   - ldap: connect (LDAPS from the first byte with security ssl, StartTLS
//     with tls; the member's certificate is not verified), bind as
//     LDAP.Username (anonymously when none), then search LDAP.Base for one
//     entry matching LDAP.Filter ((objectClass=*) when none): one level
//     below the base, the whole subtree with mandatory-attributes, the root
//     DSE when there is no base. An entry is up (with mandatory-attributes
//     it must carry an attribute); a referral is up only with
//     chase-referrals, which is not followed; no entry is down.
//   - sip: one request (OPTIONS to the member, or SIP.Request, with
//     SIP.Headers) over udp, tcp or tls; provisional answers are read past,
//     and the first final answer's status decides: down when SIP.FilterNeg
//     lists it, or when SIP.Filter is set and does not; any other is up.
//     Over udp the request is sent once: silence until the deadline, or a
//     port unreachable, is down.
//   - radius and radius-accounting: an Access-Request for RADIUS.Username
//     (up on Access-Accept) or an Accounting-Request starting a session
//     (up on Accounting-Response), signed with RADIUS.Secret and resent
//     every second until the deadline.
//   - postgresql: a login (pgx's pgconn, no TLS) as DB.Username to
//     DB.Database, then DB.Send when set, whose answer must hold DB.Recv
//     (at DB.RecvRow and DB.RecvColumn when set).
//   - mysql and mssql: the same through go-sql-driver/mysql and
//     microsoft/go-mssqldb (no TLS); a refused login or a failing query
//     is down with the server's message and error number.
//   - the three with DB.Count (count) above 0: the instance keeps its
//     login for that many probes, then logs out and in again; a kept
//     login without DB.Send is pinged; a failed probe closes it.
//   - udp and the three database monitors with Debug: each probe's
//     exchange and verdict go to the trace StartTraced was given.
//   - tcp-echo: a message sent to the node's TCP echo service (port 7
//     unless the destination names one) must come back unchanged.
//   - scripted: the script's send and expect lines, in order, over one
//     TCP connection; every expect must see its string before the
//     deadline.
//   - soap: an HTTP(S) POST of a SOAP envelope calling SOAP.Method with
//     its one parameter; a SOAP answer is up, one returning
//     SOAP.ReturnValue when that is set; a fault is down, or, with
//     SOAP.ExpectFault, the only answer that is up.
//   - rpc: the member's portmapper (port 111 unless the destination
//     names one) is asked for the port of RPC.Program and RPC.Version
//     over tcp or udp, and that port's NULL procedure must answer the
//     call accepted.
//   - diameter: a Capabilities-Exchange-Request with the Diameter
//     settings over TCP must be answered by a Capabilities-Exchange-Answer
//     with Result-Code 2001 (DIAMETER_SUCCESS).
//   - mqtt: an MQTT CONNECT (3.1.1, or 5) with MQTT's client id and
//     login must be answered by a CONNACK accepting it.
//   - gtp (BIG-IP DNS only): a GTP Echo Request (GTPv1-C, or GTPv2-C
//     with its Recovery IE) over UDP must be answered by the Echo
//     Response of the same version and sequence number; an ICMP port
//     unreachable is down.
//   - snmp-dca and snmp-dca-base: SNMP GETs (v1 or v2c) to the node's
//     agent (port 161 unless the destination names one) must be
//     answered; snmp-dca reads the agent's CPU, memory and disk use
//     (UCD-SNMP-MIB, or HOST-RESOURCES-MIB for WIN2000 and GENERIC
//     agents), both read the user-defined OIDs, and the values weigh
//     into State.DynamicRatio (DynamicRatio).
//
// Every socket a probe opens carries Spec.DSCP (ip-dscp), and with
// Spec.Adaptive an answer that comes too slowly fails the probe.
//
// The GSLB's gtm monitors add BIG-IP DNS's timing: Spec.ProbeTimeout
// bounds each probe, Spec.DownOnResponse marks down at the first probe
// answered with a failure (IsDownResponse) rather than after Timeout, and
// Spec.Attempts tries a probe again, Spec.AttemptInterval apart.
//
// tcp-half-open here completes the TCP handshake through the kernel and
// resets the connection at once (SO_LINGER 0). BIG-IP sends a bare SYN and
// answers the SYN-ACK with a RST, so the server's application never sees a
// connection. With this probe the listening application may accept() a
// connection that is already reset; the port's availability is judged the
// same way (SYN-ACK ⇒ up, RST or silence ⇒ down).
package monitor

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"regexp"
	"time"
)

// Type is a monitor type keyword.
type Type string

// The probe types.
const (
	TCP         Type = "tcp"
	TCPHalfOpen Type = "tcp-half-open"
	HTTP        Type = "http"
	HTTPS       Type = "https"
	GatewayICMP Type = "gateway-icmp"
	ICMP        Type = "icmp"
	UDP         Type = "udp"
	DNS         Type = "dns"
	External    Type = "external"
	// The mail and file-transfer monitors log in and talk the protocol, so
	// a server that accepts connections but cannot serve users is down.
	SMTP Type = "smtp"
	POP3 Type = "pop3"
	IMAP Type = "imap"
	FTP  Type = "ftp"
	NNTP Type = "nntp"
	// LDAP binds and searches, so a directory that accepts connections
	// but refuses binds or has lost its entries is down.
	LDAP Type = "ldap"
	// SIP sends a request (OPTIONS) and judges the answer's status, so a
	// SIP server that answers with an error is down.
	SIP Type = "sip"
	// RADIUS authenticates an account and RADIUSAccounting starts an
	// accounting session, so a server that answers but cannot serve is
	// down.
	RADIUS           Type = "radius"
	RADIUSAccounting Type = "radius-accounting"
	// PostgreSQL, MySQL and MSSQL log in (and run the monitor's query),
	// so a database that accepts connections but refuses its users is
	// down.
	PostgreSQL Type = "postgresql"
	MySQL      Type = "mysql"
	MSSQL      Type = "mssql"
	// TCPEcho asks the node's TCP echo service to echo a message, so a
	// node whose network stack answers but cannot serve is down.
	TCPEcho Type = "tcp-echo"
	// Scripted runs a send/expect script over TCP, so a service with no
	// monitor of its own can be checked by its conversation.
	Scripted Type = "scripted"
	// SOAP calls a web service's method, so a service whose pages load
	// but whose calls fail is down.
	SOAP Type = "soap"
	// RPC finds an ONC RPC program through the portmapper and calls it,
	// so a host whose portmapper answers but whose program is gone or
	// hung is down.
	RPC Type = "rpc"
	// Diameter exchanges capabilities with a Diameter peer, so a peer
	// that accepts connections but refuses to serve is down.
	Diameter Type = "diameter"
	// MQTT connects to a broker, so a broker that accepts connections but
	// refuses clients is down.
	MQTT Type = "mqtt"
	// SNMPDCA and SNMPDCABase ask the node's SNMP agent for its load,
	// so a member whose agent answers is up and gets a dynamic ratio
	// from the load it reports (snmp.go).
	SNMPDCA     Type = "snmp-dca"
	SNMPDCABase Type = "snmp-dca-base"
	// Inband is passive: it has no probe; see NewPassive.
	Inband Type = "inband"
	// GTP sends a GTP Echo Request (GTPv1-C or GTPv2-C, GTPVersion) over
	// UDP and wants the Echo Response: BIG-IP DNS's gtp monitor (gtp.go).
	GTP Type = "gtp"
)

// Spec is one monitor's settings, compiled.
type Spec struct {
	Type         Type
	Interval     time.Duration
	Timeout      time.Duration
	TimeUntilUp  time.Duration
	UpInterval   time.Duration
	ManualResume bool
	Send         string
	Recv         *regexp.Regexp // nil: any answer (http) or none needed (tcp)
	RecvDisable  *regexp.Regexp
	Reverse      bool

	// Name is the monitor's full name (MON_TMPL_NAME for external).
	Name string
	// TLS makes an http monitor speak TLS; https uses defaults when nil.
	TLS *TLS
	// DNS is the dns monitor's query.
	DNS *DNSQuery
	// External is the external monitor's program.
	External *ExternalRun
	// Inband holds the inband monitor's limits.
	Inband *InbandLimits
	// Login is the smtp, pop3, imap and ftp monitors' account and
	// protocol settings; nil means all defaults.
	Login *Login
	// LDAP is the ldap monitor's settings; nil means all defaults, which
	// include chase-referrals yes (a zero LDAPCheck does not chase).
	LDAP *LDAPCheck
	// SIP is the sip monitor's settings; nil means all defaults.
	SIP *SIPCheck
	// RADIUS is the radius and radius-accounting monitors' settings.
	RADIUS *RADIUSCheck
	// DB is the database monitors' settings (postgresql, mysql, mssql).
	DB *DBCheck
	// EchoPort is where the tcp-echo monitor asks for its echo when its
	// destination names a port; 0 is the echo service's, 7.
	EchoPort uint16
	// Script is the scripted monitor's script.
	Script *ScriptCheck
	// SOAP is the soap monitor's call.
	SOAP *SOAPCheck
	// RPC is the rpc monitor's program; nil is the built-in's, which
	// names none.
	RPC *RPCCheck
	// Diameter is the diameter monitor's capabilities; nil means all
	// defaults.
	Diameter *DiameterCheck
	// MQTT is the mqtt monitor's client; nil means all defaults.
	MQTT *MQTTCheck
	// GTPVersion is the gtp monitor's GTP version, 1 or 2.
	GTPVersion int
	// SNMP is the snmp-dca and snmp-dca-base monitors' agent and metrics.
	SNMP *SNMPCheck
	// Username and Password are an http or https monitor's account,
	// sent as HTTP Basic authorization (options.go).
	Username, Password string
	// DSCP marks every socket the probe opens (ip-dscp, 0-63); 0 leaves
	// them unmarked.
	DSCP uint8
	// Adaptive fails probes that answer too slowly; nil: off.
	Adaptive *Adaptive
	// Debug: each probe's exchange and verdict go to the instance's
	// trace (StartTraced); udp and the database monitors say what they
	// sent and received.
	Debug bool

	// The BIG-IP DNS (gtm) monitors' timing, which the GSLB's probes
	// follow; all zero for the LTM's.
	//
	// ProbeTimeout bounds each probe (probe-timeout) where the LTM's probe
	// may take the whole Timeout; 0: Timeout.
	ProbeTimeout time.Duration
	// DownOnResponse (ignore-down-response disabled) marks the target
	// down at the first probe that gets a failing answer (refused, reset,
	// wrong reply), without waiting out Timeout; a probe that gets no
	// answer still waits for it.
	DownOnResponse bool
	// Attempts is how many times one probe tries before it fails
	// (probe-attempts), AttemptInterval apart (probe-interval); 0 or 1:
	// once.
	Attempts        int
	AttemptInterval time.Duration
}

// Equal reports whether two specs probe and time the same way, so a commit
// that does not change a monitor keeps its running instances.
func (s *Spec) Equal(o *Spec) bool {
	re := func(a, b *regexp.Regexp) bool {
		if a == nil || b == nil {
			return a == b
		}
		return a.String() == b.String()
	}
	return s.Type == o.Type && s.Interval == o.Interval && s.Timeout == o.Timeout &&
		s.TimeUntilUp == o.TimeUntilUp && s.UpInterval == o.UpInterval &&
		s.ManualResume == o.ManualResume && s.Send == o.Send && s.Reverse == o.Reverse &&
		re(s.Recv, o.Recv) && re(s.RecvDisable, o.RecvDisable) && s.Name == o.Name &&
		s.TLS.equal(o.TLS) && s.DNS.equal(o.DNS) && s.External.equal(o.External) && s.Inband.equal(o.Inband) &&
		s.Login.equal(o.Login) && s.LDAP.equal(o.LDAP) && s.SIP.equal(o.SIP) &&
		s.RADIUS.equal(o.RADIUS) && s.DB.equal(o.DB) && s.EchoPort == o.EchoPort && s.Script.equal(o.Script) &&
		s.SOAP.equal(o.SOAP) && s.RPC.equal(o.RPC) && s.Diameter.equal(o.Diameter) && s.MQTT.equal(o.MQTT) && s.SNMP.equal(o.SNMP) &&
		s.Username == o.Username && s.Password == o.Password && s.DSCP == o.DSCP && s.Adaptive.equal(o.Adaptive) &&
		s.Debug == o.Debug && s.ProbeTimeout == o.ProbeTimeout && s.DownOnResponse == o.DownOnResponse &&
		s.Attempts == o.Attempts && s.AttemptInterval == o.AttemptInterval && s.GTPVersion == o.GTPVersion
}

// IsDownResponse reports whether a failed probe's error is an answer
// that said down (a refused connection, an ICMP unreachable, a reply
// that does not match) rather than no answer before the deadline.
func IsDownResponse(err error) bool {
	return err != nil && !errors.Is(err, ErrNoResponse) && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled)
}

// Check reports settings a probe could not run with, so a commit is
// refused rather than the monitor failing on every probe.
func (s *Spec) Check() error {
	if s.DSCP > MaxDSCP {
		return fmt.Errorf("ip-dscp %d is out of range (0-%d)", s.DSCP, MaxDSCP)
	}
	if err := s.Adaptive.check(); err != nil {
		return err
	}
	switch s.Type {
	case TCP, TCPHalfOpen, HTTP, GatewayICMP, ICMP, UDP:
	case HTTPS:
	case HTTP2:
		if _, err := parseH2Send(s.Send); err != nil {
			return err
		}
	case SMTP, POP3, IMAP, FTP, NNTP:
		return s.Login.check()
	case LDAP:
		return s.LDAP.check()
	case SIP:
		if err := s.SIP.check(); err != nil {
			return err
		}
	case RADIUS, RADIUSAccounting:
	case PostgreSQL, MySQL, MSSQL:
		if err := s.DB.check(); err != nil {
			return err
		}
	case TCPEcho:
	case Scripted:
		return s.Script.check()
	case SOAP:
		return s.SOAP.check()
	case RPC:
		return s.RPC.check()
	case Diameter:
		return s.Diameter.check()
	case MQTT:
		return s.MQTT.check()
	case GTP:
		if s.GTPVersion != 1 && s.GTPVersion != 2 {
			return fmt.Errorf("protocol-version %d is not a GTP version (1 or 2)", s.GTPVersion)
		}
	case SNMPDCA, SNMPDCABase:
		return s.SNMP.check()
	case DNS:
		if s.DNS == nil || s.DNS.Name == "" {
			return errors.New("a dns monitor needs qname (the name to query)")
		}
		if err := s.DNS.check(); err != nil {
			return err
		}
	case External:
		if s.External == nil || s.External.Path == "" {
			return errors.New("an external monitor needs run (the sys file external-monitor to execute)")
		}
		if _, err := splitArgs(s.External.Args); err != nil {
			return fmt.Errorf("args: %v", err)
		}
	case Inband:
		if s.Inband == nil {
			return nil
		}
		return s.Inband.check()
	default:
		return fmt.Errorf("unsupported monitor type %q", s.Type)
	}
	if s.TLS != nil || s.Type == HTTPS {
		if _, err := s.TLS.config(s.Send); err != nil {
			return err
		}
	}
	return nil
}

// Outcome is one probe's verdict.
type Outcome struct {
	Up bool
	// Disabled is set when recv-disable matched: up, but no new flows.
	Disabled bool
	// DynamicRatio is the ratio an snmp-dca monitor weighed from the
	// agent's load (1-100); 0 from the monitors that give none.
	DynamicRatio int
}

// Errors a probe reports as the monitor's last error, worded like BIG-IP's.
var (
	ErrNoResponse = errors.New("No successful responses received before deadline")
	ErrNoMatch    = errors.New("Response did not match the receive string")
	// ErrReverseMatch is a reverse monitor's receive string matching.
	ErrReverseMatch = errors.New("Response matched the receive string of a reverse monitor")
)

const maxReply = 64 << 10

// Probe runs one check of spec against target within ctx's deadline.
func Probe(ctx context.Context, spec *Spec, target netip.AddrPort) (Outcome, error) {
	ctx = withDSCP(ctx, spec.DSCP)
	switch spec.Type {
	case GatewayICMP, ICMP:
		return probeICMP(ctx, target.Addr())
	case UDP:
		return probeUDP(ctx, spec, target)
	case DNS:
		return probeDNS(ctx, spec, target)
	case External:
		return probeExternal(ctx, spec, target)
	case Inband:
		return Outcome{}, errors.New("inband is passive and has no probe; the dataplane reports connections to a Passive")
	case TCPHalfOpen:
		c, err := dial(ctx, target)
		if err != nil {
			return Outcome{}, err
		}
		c.SetLinger(0)
		c.Close()
		return Outcome{Up: true}, nil
	case TCP, HTTP, HTTPS:
		return probeStream(ctx, spec, target)
	case HTTP2:
		return probeHTTP2(ctx, spec, target)
	case SMTP, POP3, IMAP, FTP, NNTP:
		return probeLogin(ctx, spec, target)
	case LDAP:
		return probeLDAP(ctx, spec, target)
	case SIP:
		return probeSIP(ctx, spec, target)
	case RADIUS, RADIUSAccounting:
		return probeRADIUS(ctx, spec, target)
	case PostgreSQL, MySQL, MSSQL:
		return probeDB(ctx, spec, target, nil)
	case TCPEcho:
		return probeTCPEcho(ctx, spec, target)
	case Scripted:
		return probeScripted(ctx, spec, target)
	case SOAP:
		return probeSOAP(ctx, spec, target)
	case RPC:
		return probeRPC(ctx, spec, target)
	case Diameter:
		return probeDiameter(ctx, spec, target)
	case MQTT:
		return probeMQTT(ctx, spec, target)
	case GTP:
		return probeGTP(ctx, spec, target)
	case SNMPDCA, SNMPDCABase:
		return probeSNMP(ctx, spec, target)
	}
	return Outcome{}, fmt.Errorf("unsupported monitor type %q", spec.Type)
}

func dial(ctx context.Context, target netip.AddrPort) (*net.TCPConn, error) {
	c, err := tcpDialer(ctx).DialContext(ctx, "tcp", target.String())
	if err != nil {
		if ctx.Err() != nil {
			return nil, ErrNoResponse
		}
		return nil, fmt.Errorf("Unable to connect; %v", unwrapSyscall(err))
	}
	return c.(*net.TCPConn), nil
}

func unwrapSyscall(err error) error {
	var op *net.OpError
	if errors.As(err, &op) {
		return op.Err
	}
	return err
}

// probeStream connects, sends, and reads until the receive strings decide or
// the server closes or the deadline passes.
func probeStream(ctx context.Context, spec *Spec, target netip.AddrPort) (Outcome, error) {
	tc, err := dial(ctx, target)
	if err != nil {
		return Outcome{}, err
	}
	defer tc.Close()
	if dl, ok := ctx.Deadline(); ok {
		tc.SetDeadline(dl)
	}
	var c net.Conn = tc
	if spec.TLS != nil || spec.Type == HTTPS {
		cfg, err := spec.TLS.config(spec.Send)
		if err != nil {
			return Outcome{}, err
		}
		sc := tls.Client(tc, cfg)
		if err := sc.HandshakeContext(ctx); err != nil {
			if ctx.Err() != nil {
				return Outcome{}, ErrNoResponse
			}
			return Outcome{}, fmt.Errorf("SSL handshake failed; %v", unwrapSyscall(err))
		}
		c = sc
	}
	send := spec.Send
	if spec.Username != "" && (spec.Type == HTTP || spec.Type == HTTPS) {
		send = basicAuthSend(send, spec.Username, spec.Password)
	}
	if send != "" {
		if _, err := io.WriteString(c, send); err != nil {
			return Outcome{}, fmt.Errorf("Unable to send; %v", unwrapSyscall(err))
		}
	}
	needReply := spec.Recv != nil || spec.RecvDisable != nil || spec.Type == HTTP || spec.Type == HTTPS
	if !needReply {
		return Outcome{Up: true}, nil
	}
	var buf bytes.Buffer
	chunk := make([]byte, 4096)
	for buf.Len() < maxReply {
		n, rerr := c.Read(chunk)
		buf.Write(chunk[:n])
		if o, done := judge(spec, buf.Bytes(), false); done {
			return verdict(o)
		}
		if rerr != nil {
			break
		}
	}
	if o, done := judge(spec, buf.Bytes(), true); done {
		return verdict(o)
	}
	if buf.Len() == 0 {
		return Outcome{}, ErrNoResponse
	}
	return Outcome{}, ErrNoMatch
}

func verdict(o Outcome) (Outcome, error) {
	if !o.Up {
		return o, ErrReverseMatch
	}
	return o, nil
}

// judge decides on the reply so far; final means no more bytes will come.
func judge(spec *Spec, reply []byte, final bool) (Outcome, bool) {
	if spec.Recv == nil && spec.RecvDisable == nil {
		return Outcome{Up: true}, len(reply) > 0
	}
	if spec.Reverse && spec.Recv != nil {
		if spec.Recv.Match(reply) {
			return Outcome{}, true
		}
		return Outcome{Up: true}, final && len(reply) > 0
	}
	if spec.Recv != nil && spec.Recv.Match(reply) {
		return Outcome{Up: true}, true
	}
	if spec.RecvDisable != nil && spec.RecvDisable.Match(reply) {
		return Outcome{Up: true, Disabled: true}, true
	}
	if spec.Recv == nil && final && len(reply) > 0 {
		return Outcome{Up: true}, true
	}
	return Outcome{}, false
}
