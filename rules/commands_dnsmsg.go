package rules

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"github.com/miekg/dns"
	"github.com/openltm/openltm/rules/tcl"
)

// MsgResolver is a net dns-resolver as RESOLVER::name_lookup asks it:
// the whole answer to one question, so that DNSMSG:: can read its
// header and sections.
type MsgResolver interface {
	Message(ctx context.Context, name string, qtype uint16) (*dns.Msg, error)
}

// dnsMsgPrefix marks a dns_message value: the message on the wire,
// base64, opaque to a rule as BIG-IP's is [M].
const dnsMsgPrefix = "dns_message:"

func registerDNSMsg(t *tcl.Commands) {
	t.Register("DNSMSG::header", cmdDNSMsgHeader)
	t.Register("DNSMSG::section", cmdDNSMsgSection)
	t.Register("DNSMSG::record", cmdDNSMsgRecord)
}

// cmdResolverNameLookup is `RESOLVER::name_lookup RESOLVER NAME TYPE`:
// NAME's answer of TYPE (a, aaaa, mx, any record type) through the net
// dns-resolver RESOLVER, as a dns_message for DNSMSG::; an empty string
// when no nameserver answered (logged) [M]. The rule waits, within its
// event's time, as RESOLV::lookup does.
func cmdResolverNameLookup(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const use = "RESOLVER::name_lookup resolver name type"
	if len(args) != 4 {
		return tcl.Empty, tcl.WrongArgs(use)
	}
	rname, name := args[1].String(), args[2].String()
	qtype, ok := dns.StringToType[strings.ToUpper(args[3].String())]
	if !ok {
		return tcl.Empty, tcl.Errorf("RESOLVER::name_lookup: unknown record type %q", args[3].String())
	}
	if _, ok := dns.IsDomainName(name); !ok || name == "" || strings.ContainsAny(name, " \t\r\n") {
		return tcl.Empty, tcl.Errorf("RESOLVER::name_lookup: %q is not a domain name", name)
	}
	s, _, err := sess(in, "RESOLVER::name_lookup")
	if err != nil {
		return tcl.Empty, err
	}
	var r MsgResolver
	if env := s.prog.env; env != nil && env.NetResolver != nil {
		full := rname
		if !strings.HasPrefix(full, "/") {
			full = "/Common/" + full
		}
		r, ok = env.NetResolver(full)
	}
	if r == nil || !ok {
		return tcl.Empty, tcl.Errorf("RESOLVER::name_lookup: no net dns-resolver %s", rname)
	}
	wait := waitFor(in, maxLookupWait)
	if wait <= 0 {
		return tcl.Empty, tcl.Errorf("RESOLVER::name_lookup: the event's time is up")
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	start := time.Now()
	m, err := r.Message(ctx, name, qtype)
	waited(in, start)
	var wire []byte
	if err == nil {
		wire, err = m.Pack()
	}
	if err != nil {
		s.prog.env.log("local0.warning", s.logLine(fmt.Sprintf("RESOLVER::name_lookup %s %s %s: %v", rname, name, dns.TypeToString[qtype], err), false))
		return tcl.Empty, nil
	}
	return tcl.Str(dnsMsgPrefix + base64.StdEncoding.EncodeToString(wire)), nil
}

// dnsMsgArg reads a dns_message value.
func dnsMsgArg(cmd string, v tcl.Value) (*dns.Msg, error) {
	t, ok := strings.CutPrefix(v.String(), dnsMsgPrefix)
	if !ok {
		return nil, tcl.Errorf("%s: not a dns_message (RESOLVER::name_lookup gives one)", cmd)
	}
	wire, err := base64.StdEncoding.DecodeString(t)
	m := new(dns.Msg)
	if err == nil {
		err = m.Unpack(wire)
	}
	if err != nil {
		return nil, tcl.Errorf("%s: not a dns_message: %v", cmd, err)
	}
	return m, nil
}

// DNSMSG::header MESSAGE rcode|opcode|id|ra|rd|tc|qr|aa|ad|cd.
func cmdDNSMsgHeader(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 3 {
		return tcl.Empty, tcl.WrongArgs("DNSMSG::header dns_message rcode|opcode|id|ra|rd|tc|qr|aa|ad|cd")
	}
	m, err := dnsMsgArg("DNSMSG::header", args[1])
	if err != nil {
		return tcl.Empty, err
	}
	switch f := args[2].String(); f {
	case "rcode":
		return tcl.Str(rcodeName(m.Rcode)), nil
	case "opcode":
		return tcl.Str(dns.OpcodeToString[m.Opcode]), nil
	case "id":
		return tcl.Int(int64(m.Id)), nil
	case "ra":
		return tcl.Bool(m.RecursionAvailable), nil
	case "rd":
		return tcl.Bool(m.RecursionDesired), nil
	case "tc":
		return tcl.Bool(m.Truncated), nil
	case "qr":
		return tcl.Bool(m.Response), nil
	case "aa":
		return tcl.Bool(m.Authoritative), nil
	case "ad":
		return tcl.Bool(m.AuthenticatedData), nil
	case "cd":
		return tcl.Bool(m.CheckingDisabled), nil
	default:
		return tcl.Empty, tcl.Errorf("DNSMSG::header: unknown field %q: must be rcode, opcode, id, ra, rd, tc, qr, aa, ad or cd", f)
	}
}

// DNSMSG::section MESSAGE question|answer|authority|additional: the
// section's records as master-file text (a question as "name class
// type" [M]), EDNS's OPT left out.
func cmdDNSMsgSection(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 3 {
		return tcl.Empty, tcl.WrongArgs("DNSMSG::section dns_message question|answer|authority|additional")
	}
	m, err := dnsMsgArg("DNSMSG::section", args[1])
	if err != nil {
		return tcl.Empty, err
	}
	switch sec := args[2].String(); sec {
	case "question":
		out := make([]tcl.Value, len(m.Question))
		for i, q := range m.Question {
			out[i] = tcl.Str(q.Name + " " + dns.ClassToString[q.Qclass] + " " + dns.TypeToString[q.Qtype])
		}
		return tcl.List(out...), nil
	case "answer":
		return rrList(m.Answer), nil
	case "authority":
		return rrList(m.Ns), nil
	case "additional":
		return rrList(m.Extra), nil
	default:
		return tcl.Empty, tcl.Errorf("DNSMSG::section: unknown section %q: must be question, answer, authority or additional", sec)
	}
}

// DNSMSG::record RR owner|type|ttl|class|rdata: a field of a record
// DNSMSG::section gave; the owner without its final dot, as DNS::name.
func cmdDNSMsgRecord(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 3 {
		return tcl.Empty, tcl.WrongArgs("DNSMSG::record rr owner|type|ttl|class|rdata")
	}
	rr, err := parseRR("DNSMSG::record", args[1].String())
	if err != nil {
		return tcl.Empty, err
	}
	h := rr.Header()
	switch f := args[2].String(); f {
	case "owner":
		return tcl.Str(rrName(rr)), nil
	case "type":
		return tcl.Str(dns.TypeToString[h.Rrtype]), nil
	case "ttl":
		return tcl.Int(int64(h.Ttl)), nil
	case "class":
		return tcl.Str(dns.ClassToString[h.Class]), nil
	case "rdata":
		return tcl.Str(strings.TrimPrefix(rrData(rr), "\t")), nil
	default:
		return tcl.Empty, tcl.Errorf("DNSMSG::record: unknown field %q: must be owner, type, ttl, class or rdata", f)
	}
}
