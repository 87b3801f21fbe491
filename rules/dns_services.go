package rules

import (
	"strings"

	"github.com/miekg/dns"
	"github.com/openltm/openltm/rules/tcl"
)

// DNSServices is what DNS::origin, DNS::is_wideip and DNS::log ask of
// the DNS server beside DNSConn: which of its services built the
// response, whether a name is a wide IP, and the dns profile's logging.
// Optional, found by type assertion: a DNSConn without it makes those
// commands Tcl errors.
type DNSServices interface {
	// DNSOrigin names what last built the message the event sees, in
	// BIG-IP's words: CLIENT (the query as it arrived), SERVER (a pool
	// member or BIND), CACHE, GTM_BUILD, DNSX, LAST_ACTION
	// (unhandled-query-action), TCL (a rule's DNS::return), RPZ (a
	// cache's response policy zone).
	DNSOrigin() string
	// DNSIsWideIP says whether name (fully qualified, any case) is a
	// wide IP's name or alias, of any type.
	DNSIsWideIP(name string) bool
	// DNSLog sends msg through the dns profile's logging profile; with
	// msg empty it only asks. It reports whether the profile logs.
	DNSLog(msg string) bool
}

// DNSComponent names, as DNS::disable and DNS::enable take them and
// DNSAction.Name carries them.
const (
	DNSComponentAll    = "all"
	DNSComponentDNSX   = "dnsx" // DNS Express (dns-express is taken too)
	DNSComponentGTM    = "gtm"
	DNSComponentCache  = "cache"
	DNSComponentDNSSEC = "dnssec"
	// avr is a service BIG-IP has and openltm does not: there is
	// nothing of it to skip, and a rule naming it runs.
	DNSComponentAVR = "avr"
	// rpz is the cache's response policy zones.
	DNSComponentRPZ = "rpz"
)

// DNSPolicy is what DNS::rpz_policy asks of the DNS server beside
// DNSConn: which response policy zone trigger, if any, built or let
// through the response. Optional, found by type assertion: a DNSConn
// without it has no policy to report ("").
type DNSPolicy interface {
	// DNSRPZPolicy is the policy applied, as the Tcl list "ZONE POLICY
	// TRIGGER", "" when none was.
	DNSRPZPolicy() string
}

func dnsComponent(s string) (string, bool) {
	switch c := strings.ToLower(s); c {
	case DNSComponentAll, DNSComponentDNSX, DNSComponentGTM, DNSComponentCache, DNSComponentDNSSEC, DNSComponentAVR, DNSComponentRPZ:
		return c, true
	case "dns-express", "dns_express":
		return DNSComponentDNSX, true
	}
	return "", false
}

var lastActs = []string{"allow", "drop", "reject", "hint", "noerror"}

func registerDNSServices(t *tcl.Commands) {
	t.Register("DNS::disable", dnsToggle("DNS::disable", DNSDisable))
	t.Register("DNS::enable", dnsToggle("DNS::enable", DNSEnable))
	t.Register("DNS::last_act", cmdDNSLastAct)
	t.Register("DNS::origin", cmdDNSOrigin)
	t.Register("DNS::is_wideip", cmdDNSIsWideIP)
	t.Register("DNS::log", cmdDNSLog)
	t.Register("DNS::tsig", cmdDNSTSIG)
	t.Register("DNS::scrape", cmdDNSScrape)
	t.Register("DNS::rpz_policy", cmdDNSRPZPolicy)
}

// DNS::rpz_policy: the response policy zone's policy the cache applied
// to this query, "" when none: the zone, the policy (nxdomain, nodata,
// local-data, walled-garden, passthru) and the trigger's name within the
// zone [M: BIG-IP documents the command, not its value's form]. In
// DNS_REQUEST no policy has run yet: "".
func cmdDNSRPZPolicy(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	s, dc, err := dnsConn(in, "DNS::rpz_policy")
	if err != nil {
		return tcl.Empty, err
	}
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs("DNS::rpz_policy")
	}
	p, ok := dc.(DNSPolicy)
	if !ok || s.event == DNSRequest {
		return tcl.Empty, nil
	}
	pol := p.DNSRPZPolicy()
	if pol == "" {
		return tcl.Empty, nil
	}
	f := strings.Fields(pol)
	out := make([]tcl.Value, len(f))
	for i := range f {
		out[i] = tcl.Str(f[i])
	}
	return tcl.List(out...), nil
}

// dnsToggle is DNS::disable and DNS::enable: one DNSAction per service
// named; a name openltm does not know is refused before any is taken.
func dnsToggle(cmd string, k DNSActionKind) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		_, dc, err := dnsConn(in, cmd)
		if err != nil {
			return tcl.Empty, err
		}
		if len(args) < 2 {
			return tcl.Empty, tcl.WrongArgs(cmd + " all|dnsx|gtm|cache|dnssec|avr|rpz ?...?")
		}
		var names [8]string
		comps := names[:0]
		for _, a := range args[1:] {
			c, ok := dnsComponent(a.String())
			if !ok {
				return tcl.Empty, tcl.Errorf("%s: unknown service %q: must be all, dnsx, gtm, cache, dnssec, avr or rpz", cmd, a.String())
			}
			comps = append(comps, c)
		}
		for _, c := range comps {
			if err := dc.DNSDo(DNSAction{Kind: k, Name: c}); err != nil {
				return tcl.Empty, tclErr(err)
			}
		}
		return tcl.Empty, nil
	}
}

// DNS::last_act allow|drop|reject|hint|noerror: this query's
// unhandled-query-action.
func cmdDNSLastAct(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	_, dc, err := dnsConn(in, "DNS::last_act")
	if err != nil {
		return tcl.Empty, err
	}
	if len(args) != 2 {
		return tcl.Empty, tcl.WrongArgs("DNS::last_act allow|drop|reject|hint|noerror")
	}
	a := strings.ToLower(args[1].String())
	for _, x := range lastActs {
		if a == x {
			return tcl.Empty, tclErr(dc.DNSDo(DNSAction{Kind: DNSLastAct, Name: x}))
		}
	}
	return tcl.Empty, tcl.Errorf("DNS::last_act: unknown action %q: must be allow, drop, reject, hint or noerror", args[1].String())
}

func dnsServices(in *tcl.Interp, cmd string) (*ConnState, DNSServices, error) {
	s, dc, err := dnsConn(in, cmd)
	if err != nil {
		return s, nil, err
	}
	ds, ok := dc.(DNSServices)
	if !ok {
		return s, nil, tcl.Errorf("%s: command is not valid in this context (no dns profile services)", cmd)
	}
	return s, ds, nil
}

// DNS::origin: what built the message; CLIENT in DNS_REQUEST.
func cmdDNSOrigin(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	s, ds, err := dnsServices(in, "DNS::origin")
	if err != nil {
		return tcl.Empty, err
	}
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs("DNS::origin")
	}
	if s.event == DNSRequest {
		return tcl.Str("CLIENT"), nil
	}
	return tcl.Str(ds.DNSOrigin()), nil
}

// DNS::is_wideip NAME: whether NAME is a configured wide IP.
func cmdDNSIsWideIP(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	_, ds, err := dnsServices(in, "DNS::is_wideip")
	if err != nil {
		return tcl.Empty, err
	}
	if len(args) != 2 {
		return tcl.Empty, tcl.WrongArgs("DNS::is_wideip name")
	}
	name := args[1].String()
	if _, ok := dns.IsDomainName(name); !ok || name == "" {
		return tcl.Bool(false), nil
	}
	return tcl.Bool(ds.DNSIsWideIP(strings.ToLower(dns.Fqdn(name)))), nil
}

// DNS::log ?message?: without a message, whether the dns profile has a
// logging profile; with one, the message through it.
func cmdDNSLog(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	_, ds, err := dnsServices(in, "DNS::log")
	if err != nil {
		return tcl.Empty, err
	}
	switch len(args) {
	case 1:
		return tcl.Bool(ds.DNSLog("")), nil
	case 2:
		if msg := args[1].String(); msg != "" {
			ds.DNSLog(msg)
		}
		return tcl.Empty, nil
	}
	return tcl.Empty, tcl.WrongArgs("DNS::log ?message?")
}

// dnsMsgOf is the message a reading command sees: the query in
// DNS_REQUEST, the response in DNS_RESPONSE.
func dnsMsgOf(s *ConnState, dc DNSConn) *dns.Msg {
	if s.event == DNSRequest {
		return dc.DNSQuery()
	}
	return dc.DNSResponse()
}

// DNS::tsig exists|remove: whether the message (the query in
// DNS_REQUEST, the response in DNS_RESPONSE) is signed, or its TSIG
// record taken off (the query then goes on unsigned).
func cmdDNSTSIG(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	s, dc, err := dnsConn(in, "DNS::tsig")
	if err != nil {
		return tcl.Empty, err
	}
	if len(args) != 2 {
		return tcl.Empty, tcl.WrongArgs("DNS::tsig exists|remove")
	}
	m := dnsMsgOf(s, dc)
	switch args[1].String() {
	case "exists":
		return tcl.Bool(m != nil && m.IsTsig() != nil), nil
	case "remove":
		if m == nil {
			return tcl.Empty, nil
		}
		kept := m.Extra[:0]
		for _, rr := range m.Extra {
			if rr.Header().Rrtype != dns.TypeTSIG {
				kept = append(kept, rr)
			}
		}
		for i := len(kept); i < len(m.Extra); i++ {
			m.Extra[i] = nil
		}
		m.Extra = kept
		return tcl.Empty, nil
	}
	return tcl.Empty, tcl.Errorf("DNS::tsig: unknown option %q: must be exists or remove", args[1].String())
}

var scrapeFields = []string{"name", "type", "class", "ttl", "rdata", "qnamelen", "rdatalen", "section"}

// DNS::scrape ANSWER|AUTHORITY|ADDITIONAL|ALL field ?field ...?: one
// list per record of the section (of all three for ALL, in order), the
// fields asked for in the order asked; the message read is the query
// in DNS_REQUEST and the response in DNS_RESPONSE, EDNS's OPT left out.
func cmdDNSScrape(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	s, dc, err := dnsConn(in, "DNS::scrape")
	if err != nil {
		return tcl.Empty, err
	}
	if len(args) < 3 {
		return tcl.Empty, tcl.WrongArgs("DNS::scrape ANSWER|AUTHORITY|ADDITIONAL|ALL field ?field ...?")
	}
	sec := strings.ToUpper(args[1].String())
	switch sec {
	case "ANSWER", "AUTHORITY", "ADDITIONAL", "ALL":
	default:
		return tcl.Empty, tcl.Errorf("DNS::scrape: unknown section %q: must be ANSWER, AUTHORITY, ADDITIONAL or ALL", args[1].String())
	}
	fields := make([]string, 0, len(args)-2)
	for _, a := range args[2:] {
		f := strings.ToLower(a.String())
		ok := false
		for _, x := range scrapeFields {
			ok = ok || f == x
		}
		if !ok {
			return tcl.Empty, tcl.Errorf("DNS::scrape: unknown field %q: must be %s", a.String(), strings.Join(scrapeFields, ", "))
		}
		fields = append(fields, f)
	}
	m := dnsMsgOf(s, dc)
	if m == nil {
		return tcl.List(), nil
	}
	var out []tcl.Value
	add := func(name string, rrs []dns.RR) {
		for _, rr := range rrs {
			if rr.Header().Rrtype == dns.TypeOPT {
				continue
			}
			row := make([]tcl.Value, len(fields))
			for i, f := range fields {
				row[i] = scrapeField(f, name, rr)
			}
			out = append(out, tcl.List(row...))
		}
	}
	if sec == "ANSWER" || sec == "ALL" {
		add("answer", m.Answer)
	}
	if sec == "AUTHORITY" || sec == "ALL" {
		add("authority", m.Ns)
	}
	if sec == "ADDITIONAL" || sec == "ALL" {
		add("additional", m.Extra)
	}
	return tcl.List(out...), nil
}

func scrapeField(f, section string, rr dns.RR) tcl.Value {
	h := rr.Header()
	switch f {
	case "name":
		return tcl.Str(rrName(rr))
	case "type":
		return tcl.Str(dns.TypeToString[h.Rrtype])
	case "class":
		return tcl.Str(dns.ClassToString[h.Class])
	case "ttl":
		return tcl.Int(int64(h.Ttl))
	case "rdata":
		return tcl.Str(strings.TrimPrefix(rrData(rr), "\t"))
	case "qnamelen":
		return tcl.Int(int64(len(rrName(rr))))
	case "rdatalen":
		return tcl.Int(int64(rdataLen(rr)))
	}
	return tcl.Str(section)
}

// rdataLen is the record's data length on the wire (uncompressed).
func rdataLen(rr dns.RR) int {
	name := rr.Header().Name
	owner := 1 // the root
	if name != "." && name != "" {
		owner = len(dns.Fqdn(name)) + 1
		if strings.ContainsRune(name, '\\') { // escaped labels: as packed
			var b [256]byte
			if n, err := dns.PackDomainName(dns.Fqdn(name), b[:], 0, nil, false); err == nil {
				owner = n
			}
		}
	}
	n := dns.Len(rr) - owner - 10
	if n < 0 {
		return 0
	}
	return n
}
