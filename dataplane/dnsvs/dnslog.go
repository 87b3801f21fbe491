package dnsvs

import (
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/gslb"
	"github.com/openltm/openltm/dataplane/internal/config"
)

type logSender struct {
	send func(publisher string, line []byte) bool
}

// SetLogSender lets the logging profiles send their lines through the
// log publishers (the daemon's, which follow the running configuration);
// nil drops them.
func (e *Engine) SetLogSender(send func(publisher string, line []byte) bool) {
	if send == nil {
		e.out.Store(nil)
		return
	}
	e.out.Store(&logSender{send})
}

// logger is a dns profile's ltm profile dns-logging: one line per query
// and one per response, in the form of BIG-IP's DNS logging [M]:
//
//	2026-01-02 03:04:05 bigip1 qid 4242 from 10.0.0.9#53001: view none: query: www.example.com IN A + (10.0.0.1%0)
//	2026-01-02 03:04:05 bigip1 qid 4242 to 10.0.0.9#53001: [NOERROR qr,aa,rd] response: www.example.com. 300 IN A 10.0.0.80;
//
// the include-* settings leaving out the time (UTC [M]) and host, the
// qid, the client, the view. include-complete-answer yes logs every
// section's records, no the answer section's alone [M].
type logger struct {
	e   *Engine
	cfg config.DNSLog
}

// newLogger is the logger of a profile's logging profile, nil when it
// logs nothing.
func newLogger(e *Engine, l *config.DNSLog) *logger {
	if l == nil || (!l.Query && !l.Response) || l.Publisher == "" {
		return nil
	}
	return &logger{e: e, cfg: *l}
}

// head is a line's start: time, host and qid as configured.
func (l *logger) head(b []byte, id uint16) []byte {
	if l.cfg.Timestamp {
		b = time.Now().UTC().AppendFormat(b, "2006-01-02 15:04:05 ")
		b = append(b, l.cfg.Hostname...)
		b = append(b, ' ')
	}
	if l.cfg.QueryID {
		b = append(b, "qid "...)
		b = strconv.AppendUint(b, uint64(id), 10)
		b = append(b, ' ')
	}
	return b
}

func (l *logger) emit(b []byte) {
	if o := l.e.out.Load(); o != nil {
		o.send(l.cfg.Publisher, b)
	}
}

// query logs r, from client to local.
func (l *logger) query(r *dns.Msg, client, local netip.AddrPort) {
	if !l.cfg.Query || r.Response {
		return
	}
	b := l.head(make([]byte, 0, 160), r.Id)
	if l.cfg.Source {
		b = append(b, "from "...)
		b = appendPeer(b, client)
		b = append(b, ": "...)
	}
	if l.cfg.View {
		b = append(b, "view none: "...) // openltm has no views [M]
	}
	b = append(b, "query: "...)
	if len(r.Question) > 0 {
		q := r.Question[0]
		b = append(b, strings.TrimSuffix(q.Name, ".")...)
		b = append(b, ' ')
		b = append(b, dns.ClassToString[q.Qclass]...)
		b = append(b, ' ')
		b = append(b, typeString(q.Qtype)...)
		b = append(b, ' ')
	}
	if r.RecursionDesired {
		b = append(b, '+')
	} else {
		b = append(b, '-')
	}
	if o := r.IsEdns0(); o != nil {
		b = append(b, 'E')
		if o.Do() {
			b = append(b, 'D')
		}
	}
	if r.IsTsig() != nil {
		b = append(b, 'S')
	}
	b = append(b, " ("...)
	b = append(b, local.Addr().String()...)
	b = append(b, "%0)"...)
	l.emit(b)
}

// response logs m, going to client.
func (l *logger) response(m *dns.Msg, client netip.AddrPort) {
	if !l.cfg.Response {
		return
	}
	b := l.head(make([]byte, 0, 256), m.Id)
	if l.cfg.Source {
		b = append(b, "to "...)
		b = appendPeer(b, client)
		b = append(b, ": "...)
	}
	if l.cfg.View {
		b = append(b, "view none: "...)
	}
	b = append(b, '[')
	b = append(b, dns.RcodeToString[m.Rcode]...)
	sep := byte(' ')
	for _, f := range []struct {
		on   bool
		name string
	}{{m.Response, "qr"}, {m.Authoritative, "aa"}, {m.Truncated, "tc"}, {m.RecursionDesired, "rd"}, {m.RecursionAvailable, "ra"}, {m.AuthenticatedData, "ad"}, {m.CheckingDisabled, "cd"}} {
		if f.on {
			b = append(b, sep)
			b = append(b, f.name...)
			sep = ','
		}
	}
	b = append(b, "] response: "...)
	rrs := m.Answer
	if l.cfg.CompleteAnswer {
		rrs = append(append(append([]dns.RR(nil), m.Answer...), m.Ns...), m.Extra...)
	}
	n := 0
	for _, rr := range rrs {
		if rr.Header().Rrtype == dns.TypeOPT || rr.Header().Rrtype == dns.TypeTSIG {
			continue
		}
		b = append(b, strings.ReplaceAll(rr.String(), "\t", " ")...)
		b = append(b, "; "...)
		n++
	}
	if n == 0 {
		b = append(b, "empty"...)
	} else {
		b = b[:len(b)-1]
	}
	l.emit(b)
}

func appendPeer(b []byte, ap netip.AddrPort) []byte {
	b = ap.Addr().AppendTo(b)
	b = append(b, '#')
	return strconv.AppendUint(b, uint64(ap.Port()), 10)
}

func typeString(t uint16) string {
	if s, ok := dns.TypeToString[t]; ok {
		return s
	}
	return "TYPE" + strconv.Itoa(int(t))
}

// QueryLog is the logging profile l as a gtm listener logs through it
// (gslb.Listener.Log), in the same form and through the same publishers
// as a dns-profile virtual; nil when it logs nothing (no publisher, or
// neither queries nor responses).
func (e *Engine) QueryLog(l *config.DNSLog) gslb.QueryLog {
	lg := newLogger(e, l)
	if lg == nil {
		return nil
	}
	return listenerLog{lg}
}

// listenerLog is a logger seen from the GSLB.
type listenerLog struct{ l *logger }

func (x listenerLog) Query(r *dns.Msg, client, local netip.AddrPort) { x.l.query(r, client, local) }

func (x listenerLog) Response(m *dns.Msg, client netip.AddrPort) { x.l.response(m, client) }

// Message implements gslb.MessageLog: a listener's rule's DNS::log.
func (x listenerLog) Message(id uint16, msg string) { x.l.message(id, msg) }

// ruleLog is what a virtual's rule's DNS::log sends through: the
// logging profile's publisher, whether or not the profile logs queries
// or responses; nil without a publisher.
func ruleLog(e *Engine, l *config.DNSLog) func(id uint16, msg string) {
	if l == nil || l.Publisher == "" {
		return nil
	}
	return (&logger{e: e, cfg: *l}).message
}

// message logs a rule's own line (DNS::log): the head the profile's
// settings give, then msg as the rule wrote it.
func (l *logger) message(id uint16, msg string) {
	b := l.head(make([]byte, 0, 48+len(msg)), id)
	l.emit(append(b, msg...))
}
