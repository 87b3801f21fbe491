package rules

import (
	"net"
	"net/netip"
	"strconv"
	"strings"

	"github.com/miekg/dns"
	"github.com/openltm/openltm/rules/tcl"
)

// DNSConn is implemented by a Conn answering DNS queries (a GSLB listener
// or wide IP), found by type assertion as HTTPConn is: a Conn without it
// makes every DNS:: command, cname and host Tcl errors. The dataplane
// owns both messages: the query as it arrived and the response it builds;
// rules read and edit them in place, and actions recorded with DNSDo are
// performed when the event returns.
type DNSConn interface {
	// DNSQuery is the query being answered. DNS::question edits it in
	// DNS_REQUEST, before the answer is decided.
	DNSQuery() *dns.Msg
	// DNSResponse is the response: in DNS_REQUEST the reply being built
	// (empty until a rule inserts records or sets header fields), in
	// DNS_RESPONSE the answer about to be sent.
	DNSResponse() *dns.Msg
	// DNSLen is the query's length on the wire.
	DNSLen() int
	// DNSDo records an action. An error (an action not valid in this
	// event or on this object) becomes a Tcl error.
	DNSDo(a DNSAction) error
}

// DNSExpress is what DNS::query reads: on BIG-IP the DNS Express
// database of transferred zones, in openltm the server's own zones (the
// GSLB's static zones, which answer authoritatively as DNS Express
// does). Optional: a DNSConn without it answers every DNS::query with
// an empty list.
type DNSExpress interface {
	// DNSExpressQuery answers name (a fully qualified name) and qtype,
	// class IN, as a query to the zones would be answered; ok is false
	// when no zone holds the name.
	DNSExpressQuery(name string, qtype uint16) (m *dns.Msg, ok bool)
}

// DNSActionKind says what a DNSAction asks of the DNS server.
type DNSActionKind uint8

// The actions of DNS::return, DNS::drop, cname and host (pool choices go
// through Conn.Decide like an LTM pool).
const (
	// DNSReturn sends DNSResponse as it stands, skipping what has not
	// run yet (resolution, in DNS_REQUEST).
	DNSReturn DNSActionKind = iota
	// DNSDrop sends nothing.
	DNSDrop
	// DNSCNAME answers a wide IP with a CNAME to Name.
	DNSCNAME
	// DNSHost answers a wide IP with Addr.
	DNSHost
	// DNSDisable skips the service Name (a DNSComponent) for this query
	// (DNS::disable).
	DNSDisable
	// DNSEnable undoes a DNSDisable of the service Name (DNS::enable).
	DNSEnable
	// DNSLastAct makes Name (allow, drop, reject, hint, noerror) this
	// query's unhandled-query-action (DNS::last_act).
	DNSLastAct
)

// DNSAction is one DNS action; a value, so recording it allocates
// nothing.
type DNSAction struct {
	Kind DNSActionKind
	Name string
	Addr netip.Addr
}

func registerDNS(t *tcl.Commands) {
	t.Register("DNS::question", cmdDNSQuestion)
	t.Register("DNS::answer", dnsSection("DNS::answer", func(m *dns.Msg) *[]dns.RR { return &m.Answer }))
	t.Register("DNS::authority", dnsSection("DNS::authority", func(m *dns.Msg) *[]dns.RR { return &m.Ns }))
	t.Register("DNS::additional", dnsSection("DNS::additional", func(m *dns.Msg) *[]dns.RR { return &m.Extra }))
	t.Register("DNS::rr", cmdDNSRR)
	t.Register("DNS::name", dnsRRField("DNS::name", rrName, setRRName))
	t.Register("DNS::ttl", dnsRRField("DNS::ttl", func(rr dns.RR) string { return strconv.FormatUint(uint64(rr.Header().Ttl), 10) }, setRRTTL))
	t.Register("DNS::type", dnsRRField("DNS::type", func(rr dns.RR) string { return dns.TypeToString[rr.Header().Rrtype] }, nil))
	t.Register("DNS::class", dnsRRField("DNS::class", func(rr dns.RR) string { return dns.ClassToString[rr.Header().Class] }, nil))
	t.Register("DNS::rdata", dnsRRField("DNS::rdata", rrData, setRRData))
	t.Register("DNS::header", cmdDNSHeader)
	t.Register("DNS::return", dnsAction("DNS::return", DNSReturn))
	t.Register("DNS::drop", dnsAction("DNS::drop", DNSDrop))
	t.Register("DNS::len", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		_, dc, err := dnsConn(in, "DNS::len")
		if err != nil {
			return tcl.Empty, err
		}
		return tcl.Int(int64(dc.DNSLen())), nil
	})
	t.Register("DNS::edns0", cmdDNSEDNS0)
	t.Register("DNS::ptype", cmdDNSPtype)
	t.Register("DNS::query", cmdDNSQuery)
	registerDNSServices(t)
	t.Register("cname", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		_, dc, err := dnsConn(in, "cname")
		if err != nil {
			return tcl.Empty, err
		}
		if len(args) != 2 || args[1].String() == "" {
			return tcl.Empty, tcl.WrongArgs("cname name")
		}
		return tcl.Empty, tclErr(dc.DNSDo(DNSAction{Kind: DNSCNAME, Name: dns.Fqdn(args[1].String())}))
	})
	t.Register("host", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		_, dc, err := dnsConn(in, "host")
		if err != nil {
			return tcl.Empty, err
		}
		if len(args) != 2 {
			return tcl.Empty, tcl.WrongArgs("host addr")
		}
		a, perr := netip.ParseAddr(args[1].String())
		if perr != nil {
			return tcl.Empty, tcl.Errorf("host: %q is not an IP address", args[1].String())
		}
		return tcl.Empty, tclErr(dc.DNSDo(DNSAction{Kind: DNSHost, Addr: a.Unmap()}))
	})
}

// dnsConn returns the session and its DNS side, refusing DNS:: commands on
// connections that have none.
func dnsConn(in *tcl.Interp, cmd string) (*ConnState, DNSConn, error) {
	s, c, err := sess(in, cmd)
	if err != nil {
		return s, nil, err
	}
	dc, ok := c.(DNSConn)
	if !ok {
		return s, nil, tcl.Errorf("%s: command is not valid in this context (not a DNS listener or wide IP)", cmd)
	}
	return s, dc, nil
}

func dnsAction(cmd string, k DNSActionKind) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		_, dc, err := dnsConn(in, cmd)
		if err != nil {
			return tcl.Empty, err
		}
		if len(args) != 1 {
			return tcl.Empty, tcl.WrongArgs(cmd)
		}
		return tcl.Empty, tclErr(dc.DNSDo(DNSAction{Kind: k}))
	}
}

// DNS::question ?name|type|class ?value??: the query's question; name
// without the final dot, as BIG-IP gives it. Setting it in DNS_REQUEST
// changes what is resolved.
func cmdDNSQuestion(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	_, dc, err := dnsConn(in, "DNS::question")
	if err != nil {
		return tcl.Empty, err
	}
	q := dc.DNSQuery()
	if q == nil || len(q.Question) == 0 {
		return tcl.Empty, nil
	}
	qq := &q.Question[0]
	if len(args) == 1 {
		return tcl.List(tcl.Str(strings.TrimSuffix(qq.Name, ".")), tcl.Str(dns.TypeToString[qq.Qtype]), tcl.Str(dns.ClassToString[qq.Qclass])), nil
	}
	if len(args) > 3 {
		return tcl.Empty, tcl.WrongArgs("DNS::question ?name|type|class ?value??")
	}
	field := args[1].String()
	set := len(args) == 3
	var v string
	if set {
		v = args[2].String()
	}
	switch field {
	case "name":
		if set {
			if _, ok := dns.IsDomainName(v); !ok || v == "" {
				return tcl.Empty, tcl.Errorf("DNS::question name: %q is not a domain name", v)
			}
			qq.Name = dns.Fqdn(v)
			return tcl.Empty, nil
		}
		return tcl.Str(strings.TrimSuffix(qq.Name, ".")), nil
	case "type":
		if set {
			t, ok := dns.StringToType[strings.ToUpper(v)]
			if !ok {
				return tcl.Empty, tcl.Errorf("DNS::question type: unknown type %q", v)
			}
			qq.Qtype = t
			return tcl.Empty, nil
		}
		return tcl.Str(dns.TypeToString[qq.Qtype]), nil
	case "class":
		if set {
			c, ok := dns.StringToClass[strings.ToUpper(v)]
			if !ok {
				return tcl.Empty, tcl.Errorf("DNS::question class: unknown class %q", v)
			}
			qq.Qclass = c
			return tcl.Empty, nil
		}
		return tcl.Str(dns.ClassToString[qq.Qclass]), nil
	}
	return tcl.Empty, tcl.Errorf("DNS::question: unknown field %q: must be name, type or class", field)
}

// parseRR reads a resource record as rules write it: master-file text
// ("name ttl class type rdata"), the form DNS::rr and the section lists
// give.
func parseRR(cmd, text string) (dns.RR, error) {
	rr, err := dns.NewRR(text)
	if err != nil {
		return nil, tcl.Errorf("%s: bad resource record %q: %v", cmd, text, err)
	}
	if rr == nil {
		return nil, tcl.Errorf("%s: empty resource record", cmd)
	}
	return rr, nil
}

// rrValue is a record as a Tcl value: its master-file text.
func rrValue(rr dns.RR) tcl.Value { return tcl.Str(rr.String()) }

// dnsSection is DNS::answer, DNS::authority and DNS::additional: the
// response's section as a list of records, or insert, remove and clear.
func dnsSection(cmd string, sec func(*dns.Msg) *[]dns.RR) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		_, dc, err := dnsConn(in, cmd)
		if err != nil {
			return tcl.Empty, err
		}
		m := dc.DNSResponse()
		if m == nil {
			return tcl.Empty, tcl.Errorf("%s: no response in this event", cmd)
		}
		rrs := sec(m)
		if len(args) == 1 {
			return rrList(*rrs), nil
		}
		switch op := args[1].String(); {
		case op == "clear" && len(args) == 2:
			kept := (*rrs)[:0]
			for _, rr := range *rrs {
				if rr.Header().Rrtype == dns.TypeOPT {
					kept = append(kept, rr) // EDNS is not the rule's record
				}
			}
			*rrs = kept
			return tcl.Empty, nil
		case op == "insert" && len(args) == 3:
			rr, err := parseRR(cmd, args[2].String())
			if err != nil {
				return tcl.Empty, err
			}
			*rrs = append(*rrs, rr)
			return tcl.Empty, nil
		case op == "remove" && len(args) == 3:
			rr, err := parseRR(cmd, args[2].String())
			if err != nil {
				return tcl.Empty, err
			}
			want := rr.String()
			for i, x := range *rrs {
				if x.String() == want {
					*rrs = append((*rrs)[:i], (*rrs)[i+1:]...)
					break
				}
			}
			return tcl.Empty, nil
		}
		return tcl.Empty, tcl.WrongArgs(cmd + " ?insert rr|remove rr|clear?")
	}
}

// DNS::rr "name ttl class type rdata" | DNS::rr name type class ttl rdata:
// a record, checked, in canonical text.
func cmdDNSRR(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	var text string
	switch len(args) {
	case 2:
		text = args[1].String()
	case 6:
		text = args[1].String() + " " + args[4].String() + " " + args[3].String() + " " + args[2].String() + " " + args[5].String()
	default:
		return tcl.Empty, tcl.WrongArgs(`DNS::rr "name ttl class type rdata" | DNS::rr name type class ttl rdata`)
	}
	rr, err := parseRR("DNS::rr", text)
	if err != nil {
		return tcl.Empty, err
	}
	return rrValue(rr), nil
}

func rrName(rr dns.RR) string { return strings.TrimSuffix(rr.Header().Name, ".") }

// rrData is the record's data as master-file text (after the type).
func rrData(rr dns.RR) string {
	h := rr.Header().String()
	return strings.TrimPrefix(rr.String(), h)
}

func setRRName(rr dns.RR, v string) error {
	if _, ok := dns.IsDomainName(v); !ok || v == "" {
		return tcl.Errorf("DNS::name: %q is not a domain name", v)
	}
	rr.Header().Name = dns.Fqdn(v)
	return nil
}

func setRRTTL(rr dns.RR, v string) error {
	n, err := strconv.ParseUint(v, 10, 32)
	if err != nil {
		return tcl.Errorf("DNS::ttl: %q is not a TTL (0 to 4294967295)", v)
	}
	rr.Header().Ttl = uint32(n)
	return nil
}

func setRRData(rr dns.RR, v string) error {
	h := rr.Header()
	nr, err := dns.NewRR(h.Name + " " + strconv.FormatUint(uint64(h.Ttl), 10) + " " + dns.ClassToString[h.Class] + " " + dns.TypeToString[h.Rrtype] + " " + v)
	if err != nil || nr == nil {
		return tcl.Errorf("DNS::rdata: bad data %q for a %s record", v, dns.TypeToString[h.Rrtype])
	}
	switch x := rr.(type) {
	case *dns.A:
		x.A = append(net.IP(nil), nr.(*dns.A).A...)
	case *dns.AAAA:
		x.AAAA = append(net.IP(nil), nr.(*dns.AAAA).AAAA...)
	case *dns.CNAME:
		x.Target = nr.(*dns.CNAME).Target
	case *dns.TXT:
		x.Txt = nr.(*dns.TXT).Txt
	case *dns.PTR:
		x.Ptr = nr.(*dns.PTR).Ptr
	case *dns.NS:
		x.Ns = nr.(*dns.NS).Ns
	case *dns.MX:
		x.Preference, x.Mx = nr.(*dns.MX).Preference, nr.(*dns.MX).Mx
	default:
		return tcl.Errorf("DNS::rdata: setting the data of a %s record is not supported", dns.TypeToString[h.Rrtype])
	}
	return nil
}

// dnsRRField is DNS::name, DNS::ttl, DNS::type, DNS::class and
// DNS::rdata: a field of a record given as text; with a value, the field
// of the matching record of the response (the first record of any section
// whose text is the same) is changed, as BIG-IP changes the record object.
func dnsRRField(cmd string, get func(dns.RR) string, set func(dns.RR, string) error) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) == 2 {
			rr, err := parseRR(cmd, args[1].String())
			if err != nil {
				return tcl.Empty, err
			}
			return tcl.Str(get(rr)), nil
		}
		if len(args) != 3 || set == nil {
			if set == nil {
				return tcl.Empty, tcl.WrongArgs(cmd + " rr")
			}
			return tcl.Empty, tcl.WrongArgs(cmd + " rr ?value?")
		}
		_, dc, err := dnsConn(in, cmd)
		if err != nil {
			return tcl.Empty, err
		}
		rr, err := parseRR(cmd, args[1].String())
		if err != nil {
			return tcl.Empty, err
		}
		want := rr.String()
		m := dc.DNSResponse()
		if m == nil {
			return tcl.Empty, tcl.Errorf("%s: no response in this event", cmd)
		}
		for _, sec := range [][]dns.RR{m.Answer, m.Ns, m.Extra} {
			for _, x := range sec {
				if x.String() == want {
					return tcl.Empty, set(x, args[2].String())
				}
			}
		}
		return tcl.Empty, tcl.Errorf("%s: the record %q is not in the response", cmd, want)
	}
}

var rcodeNames = map[string]int{
	"NOERROR": dns.RcodeSuccess, "FORMERR": dns.RcodeFormatError, "SERVFAIL": dns.RcodeServerFailure,
	"NXDOMAIN": dns.RcodeNameError, "NOTIMPL": dns.RcodeNotImplemented, "REFUSED": dns.RcodeRefused,
	"YXDOMAIN": dns.RcodeYXDomain, "YXRRSET": dns.RcodeYXRrset, "NXRRSET": dns.RcodeNXRrset,
	"NOTAUTH": dns.RcodeNotAuth, "NOTZONE": dns.RcodeNotZone,
}

var opcodeNames = map[string]int{
	"QUERY": dns.OpcodeQuery, "IQUERY": dns.OpcodeIQuery, "STATUS": dns.OpcodeStatus,
	"NOTIFY": dns.OpcodeNotify, "UPDATE": dns.OpcodeUpdate,
}

func rcodeName(rc int) string {
	for n, v := range rcodeNames {
		if v == rc {
			return n
		}
	}
	return strconv.Itoa(rc)
}

// DNS::header field ?value?: reads the query in DNS_REQUEST and the
// response in DNS_RESPONSE; values set go to the response (the answer a
// DNS_REQUEST rule builds and returns).
func cmdDNSHeader(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	s, dc, err := dnsConn(in, "DNS::header")
	if err != nil {
		return tcl.Empty, err
	}
	if len(args) < 2 || len(args) > 3 {
		return tcl.Empty, tcl.WrongArgs("DNS::header id|qr|opcode|aa|tc|rd|ra|ad|cd|rcode|qdcount|ancount|nscount|arcount ?value?")
	}
	read := dc.DNSResponse()
	if s.event == DNSRequest {
		read = dc.DNSQuery()
	}
	field := args[1].String()
	if len(args) == 2 {
		if read == nil {
			return tcl.Empty, nil
		}
		switch field {
		case "id":
			return tcl.Int(int64(read.Id)), nil
		case "qr":
			return tcl.Bool(read.Response), nil
		case "opcode":
			return tcl.Str(dns.OpcodeToString[read.Opcode]), nil
		case "aa":
			return tcl.Bool(read.Authoritative), nil
		case "tc":
			return tcl.Bool(read.Truncated), nil
		case "rd":
			return tcl.Bool(read.RecursionDesired), nil
		case "ra":
			return tcl.Bool(read.RecursionAvailable), nil
		case "ad":
			return tcl.Bool(read.AuthenticatedData), nil
		case "cd":
			return tcl.Bool(read.CheckingDisabled), nil
		case "rcode":
			return tcl.Str(rcodeName(read.Rcode)), nil
		case "qdcount":
			return tcl.Int(int64(len(read.Question))), nil
		case "ancount":
			return tcl.Int(int64(len(read.Answer))), nil
		case "nscount":
			return tcl.Int(int64(len(read.Ns))), nil
		case "arcount":
			return tcl.Int(int64(len(read.Extra))), nil
		}
		return tcl.Empty, tcl.Errorf("DNS::header: unknown field %q", field)
	}
	m := dc.DNSResponse()
	if m == nil {
		return tcl.Empty, tcl.Errorf("DNS::header: no response in this event")
	}
	v := args[2]
	flag := func(p *bool) (tcl.Value, error) {
		b, err := v.Truth()
		if err != nil {
			return tcl.Empty, err
		}
		*p = b
		return tcl.Empty, nil
	}
	switch field {
	case "id":
		n, err := v.Int64()
		if err != nil || n < 0 || n > 0xFFFF {
			return tcl.Empty, tcl.Errorf("DNS::header id: %q is not 0 to 65535", v.String())
		}
		m.Id = uint16(n)
		return tcl.Empty, nil
	case "qr":
		return flag(&m.Response)
	case "aa":
		return flag(&m.Authoritative)
	case "tc":
		return flag(&m.Truncated)
	case "rd":
		return flag(&m.RecursionDesired)
	case "ra":
		return flag(&m.RecursionAvailable)
	case "ad":
		return flag(&m.AuthenticatedData)
	case "cd":
		return flag(&m.CheckingDisabled)
	case "rcode":
		rc, ok := rcodeNames[strings.ToUpper(v.String())]
		if !ok {
			return tcl.Empty, tcl.Errorf("DNS::header rcode: unknown rcode %q: must be noerror, formerr, servfail, nxdomain, notimpl, refused, yxdomain, yxrrset, nxrrset, notauth or notzone", v.String())
		}
		m.Rcode = rc
		return tcl.Empty, nil
	case "opcode":
		op, ok := opcodeNames[strings.ToUpper(v.String())]
		if !ok {
			return tcl.Empty, tcl.Errorf("DNS::header opcode: unknown opcode %q", v.String())
		}
		m.Opcode = op
		return tcl.Empty, nil
	case "qdcount", "ancount", "nscount", "arcount":
		return tcl.Empty, tcl.Errorf("DNS::header %s: the counts follow the sections (DNS::answer insert|clear)", field)
	}
	return tcl.Empty, tcl.Errorf("DNS::header: unknown field %q", field)
}

// DNS::edns0 exists|size|do|subnet ?address|source|scope?: the query's
// EDNS0 record (read only).
func cmdDNSEDNS0(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	_, dc, err := dnsConn(in, "DNS::edns0")
	if err != nil {
		return tcl.Empty, err
	}
	if len(args) < 2 || len(args) > 3 {
		return tcl.Empty, tcl.WrongArgs("DNS::edns0 exists|size|do|version|subnet ?address|source|scope?")
	}
	var opt *dns.OPT
	if q := dc.DNSQuery(); q != nil {
		opt = q.IsEdns0()
	}
	var ecs *dns.EDNS0_SUBNET
	if opt != nil {
		for _, o := range opt.Option {
			if e, ok := o.(*dns.EDNS0_SUBNET); ok {
				ecs = e
			}
		}
	}
	switch args[1].String() {
	case "exists":
		return tcl.Bool(opt != nil), nil
	case "size":
		if opt == nil {
			return tcl.Int(0), nil
		}
		return tcl.Int(int64(opt.UDPSize())), nil
	case "do":
		return tcl.Bool(opt != nil && opt.Do()), nil
	case "version":
		if opt == nil {
			return tcl.Int(0), nil
		}
		return tcl.Int(int64(opt.Version())), nil
	case "subnet":
		what := "address"
		if len(args) == 3 {
			what = args[2].String()
		}
		if len(args) == 2 {
			return tcl.Bool(ecs != nil), nil
		}
		if ecs == nil {
			return tcl.Empty, nil
		}
		switch what {
		case "address":
			if a, ok := netip.AddrFromSlice(ecs.Address); ok {
				return tcl.Str(a.Unmap().String()), nil
			}
			return tcl.Empty, nil
		case "source":
			return tcl.Int(int64(ecs.SourceNetmask)), nil
		case "scope":
			return tcl.Int(int64(ecs.SourceScope)), nil
		}
		return tcl.Empty, tcl.Errorf("DNS::edns0 subnet: unknown field %q: must be address, source or scope", what)
	}
	return tcl.Empty, tcl.Errorf("DNS::edns0: unknown field %q", args[1].String())
}

// DNS::ptype: QUESTION in DNS_REQUEST; in DNS_RESPONSE ANSWER, NXDOMAIN,
// NODATA or REFERRAL as the response stands.
func cmdDNSPtype(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	s, dc, err := dnsConn(in, "DNS::ptype")
	if err != nil {
		return tcl.Empty, err
	}
	m := dc.DNSResponse()
	if s.event == DNSRequest || m == nil {
		return tcl.Str("QUESTION"), nil
	}
	switch {
	case m.Rcode == dns.RcodeNameError:
		return tcl.Str("NXDOMAIN"), nil
	case len(m.Answer) > 0:
		return tcl.Str("ANSWER"), nil
	}
	for _, rr := range m.Ns {
		if rr.Header().Rrtype == dns.TypeNS {
			return tcl.Str("REFERRAL"), nil
		}
	}
	return tcl.Str("NODATA"), nil
}

// DNS::query dnsx|dns-express NAME TYPE ?dnssec?: the answer the zones
// give for NAME and TYPE (class IN), as F5's documented use reads it: a
// list of the answer, authority and additional sections, each a list of
// records (`foreach rrs $rrsl { foreach rr $rrs { ... } }`); an empty
// list when no zone holds the name. The response being built is left as
// it is. There is no DNSSEC here: the dnssec flag is taken and no
// signature comes back.
func cmdDNSQuery(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	_, dc, err := dnsConn(in, "DNS::query")
	if err != nil {
		return tcl.Empty, err
	}
	const usage = "DNS::query dnsx|dns-express name type ?dnssec?"
	if len(args) < 4 || len(args) > 5 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	switch src := args[1].String(); src {
	case "dnsx", "dns-express":
	default:
		return tcl.Empty, tcl.Errorf("DNS::query: bad source %q: must be dnsx or dns-express", src)
	}
	if len(args) == 5 && !strings.EqualFold(args[4].String(), "dnssec") {
		return tcl.Empty, tcl.Errorf("DNS::query: bad option %q: must be dnssec", args[4].String())
	}
	name := args[2].String()
	if _, ok := dns.IsDomainName(name); !ok || name == "" || strings.ContainsAny(name, " \t\r\n") {
		return tcl.Empty, tcl.Errorf("DNS::query: %q is not a domain name", name)
	}
	qtype, ok := dns.StringToType[strings.ToUpper(args[3].String())]
	if !ok {
		return tcl.Empty, tcl.Errorf("DNS::query: unknown record type %q", args[3].String())
	}
	dx, ok := dc.(DNSExpress)
	if !ok {
		return tcl.Empty, nil
	}
	m, ok := dx.DNSExpressQuery(dns.Fqdn(name), qtype)
	if !ok || m == nil {
		return tcl.Empty, nil
	}
	return tcl.List(rrList(m.Answer), rrList(m.Ns), rrList(m.Extra)), nil
}

// rrList is a section's records as a Tcl list, EDNS's OPT left out (it is
// not a record a rule lists).
func rrList(rrs []dns.RR) tcl.Value {
	out := make([]tcl.Value, 0, len(rrs))
	for _, rr := range rrs {
		if rr.Header().Rrtype != dns.TypeOPT {
			out = append(out, rrValue(rr))
		}
	}
	return tcl.List(out...)
}
