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

const dnsAuthUsage = "-listen ADDR:PORT -record 'NAME TTL IN TYPE DATA' ... [-label A1] [-tc]"

// dnsAuthMain is an authoritative name server of a delegation tree, a
// root, TLD or zone server for a resolver cache's root-hints: it holds
// the zones whose SOA records it is given and answers their names, or
// refers to a child zone (its NS records, with their glue), or answers
// NXDOMAIN / NODATA with the SOA. Each query is logged with the label,
// its name spelled as received. With -tc every UDP answer is truncated,
// so that a resolver must ask again over TCP.
func dnsAuthMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("dnsauth", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "", "ADDR:PORT to serve on (UDP and TCP)")
	label := fs.String("label", "A1", "the label each logged query starts with")
	tc := fs.Bool("tc", false, "answer every UDP query truncated")
	var records addrList // dnsprimary.go: a repeatable flag
	fs.Var(&records, "record", "a record in zone-file form, fully qualified (repeatable); SOA records say which zones are served")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *listen == "" || len(records) == 0 {
		return fmt.Errorf("-listen and at least one -record are required")
	}
	s, err := authtest.New(records...)
	if err != nil {
		return err
	}
	s.TruncateUDP = *tc
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
