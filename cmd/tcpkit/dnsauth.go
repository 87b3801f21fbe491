package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/recursor/authtest"
)

const dnsAuthUsage = "-listen ADDR:PORT -record 'NAME TTL IN TYPE DATA' ... [-label A1] [-tc] [-sign [-nsec3 [-iterations N]] [-secure CHILD]... [-broken NAME]... [-expired NAME]... [-wrong-key]] | -ds ZONE"

// dnsAuthMain is an authoritative name server of a delegation tree, a
// root, TLD or zone server for a resolver cache's root-hints: it holds
// the zones whose SOA records it is given and answers their names, or
// refers to a child zone (its NS records, with their glue), or answers
// NXDOMAIN / NODATA with the SOA. Each query is logged with the label,
// its name spelled as received. With -tc every UDP answer is truncated,
// so that a resolver must ask again over TCP. With -sign its zones are
// signed (authtest.Sign: a key derived from each zone's name, DS records
// for the -secure children, NSEC or with -nsec3 NSEC3 denial, with
// -iterations extra hash iterations; -broken,
// -expired and -wrong-key spoil signatures for a validating resolver to
// refuse); -ds ZONE prints the DS such a zone's parent or a resolver's
// trust anchor names, and exits.
func dnsAuthMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("dnsauth", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "", "ADDR:PORT to serve on (UDP and TCP)")
	label := fs.String("label", "A1", "the label each logged query starts with")
	tc := fs.Bool("tc", false, "answer every UDP query truncated")
	var records addrList // dnsprimary.go: a repeatable flag
	fs.Var(&records, "record", "a record in zone-file form, fully qualified (repeatable); SOA records say which zones are served")
	sign := fs.Bool("sign", false, "sign the zones (DNSSEC, Ed25519 keys derived from the zones' names)")
	nsec3 := fs.Bool("nsec3", false, "with -sign: deny with NSEC3 instead of NSEC")
	iterations := fs.Uint("iterations", 0, "with -nsec3: the NSEC3 records' extra iterations (RFC 9276 asks for 0; a resolver treats more than 150 as insecure)")
	optOut := fs.Bool("opt-out", false, "with -nsec3: set the Opt-Out flag and leave unsigned delegations out of the chain")
	wrongKey := fs.Bool("wrong-key", false, "with -sign: sign with a key the parent's DS does not name")
	var secure, broken, expired addrList
	fs.Var(&secure, "secure", "with -sign: a signed child zone whose DS is published at its cut (repeatable)")
	fs.Var(&broken, "broken", "with -sign: a name whose signatures are spoilt (repeatable)")
	fs.Var(&expired, "expired", "with -sign: a name whose signatures have expired (repeatable)")
	ds := fs.String("ds", "", "print the DS record of ZONE's key and exit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *ds != "" {
		fmt.Fprintln(stdout, authtest.DS(*ds).String())
		return nil
	}
	if *listen == "" || len(records) == 0 {
		return fmt.Errorf("-listen and at least one -record are required")
	}
	if *iterations > 2500 {
		return fmt.Errorf("-iterations %d: at most 2500 (RFC 5155)", *iterations)
	}
	s, err := authtest.New(records...)
	if err != nil {
		return err
	}
	s.TruncateUDP = *tc
	if *sign {
		if err := s.Sign(authtest.Signing{NSEC3: *nsec3, OptOut: *optOut, Iterations: uint16(*iterations), Secure: secure, Broken: broken, Expired: expired, WrongKey: *wrongKey}); err != nil {
			return err
		}
	}
	var mu sync.Mutex
	s.Log = func(name string, qtype uint16, network string, rcode int) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(stdout, "%s query %s %s from %s: %s\n", *label, name, dns.TypeToString[qtype], network, dns.RcodeToString[rcode])
	}
	if err := s.Start(*listen); err != nil {
		return err
	}
	defer s.Close()
	fmt.Fprintf(stdout, "dnsauth listening on %s (%s)\n", *listen, strings.Join(s.Zones(), " "))
	<-ctx.Done()
	return nil
}
