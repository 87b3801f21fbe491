package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"time"

	"github.com/miekg/dns"
	"github.com/openltm/openltm/dataplane/gslb/gslbtest"
)

// ldnsUsage is the usage line of the ldns subcommand.
const ldnsUsage = "tcpkit ldns -addr IP [-port N] [-delay SRC=D,...] [-default-delay D] [-ask NAME -server ADDR:PORT [-type A] [-count N] [-interval D] [-tcp]]"

// ldnsMain emulates a local DNS server for seed 001's GSLB procedure: it
// answers the GSLB's RTT probes on -addr (UDP and TCP -port) after a delay
// that depends on the probe's source address, and with -ask it queries
// the GSLB from -addr and prints each answer. Without -ask it serves until
// ctx ends; with -ask it exits after -count queries.
func ldnsMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("ldns", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "", "the LDNS address: probes are answered and queries sent from it")
	port := fs.Uint("port", 53, "port the probes are answered on (0 picks one)")
	delays := fs.String("delay", "", "per-source probe delays: SRC=DURATION,SRC=DURATION")
	defDelay := fs.Duration("default-delay", 0, "probe delay for other sources")
	ask := fs.String("ask", "", "name to ask the GSLB for")
	server := fs.String("server", "", "the GSLB listener, address:port")
	qtype := fs.String("type", "A", "query type")
	count := fs.Int("count", 1, "queries to send with -ask")
	interval := fs.Duration("interval", time.Second, "pause between queries")
	useTCP := fs.Bool("tcp", false, "ask over TCP")
	if err := fs.Parse(args); err != nil {
		return err
	}
	a, err := netip.ParseAddr(*addr)
	if err != nil {
		return fmt.Errorf("-addr: %v", err)
	}
	if *port > 65535 {
		return fmt.Errorf("-port %d: out of range", *port)
	}
	l, err := gslbtest.NewLDNS(a, uint16(*port))
	if err != nil {
		return err
	}
	defer l.Close()
	l.SetDefaultDelay(*defDelay)
	if *delays != "" {
		for _, kv := range strings.Split(*delays, ",") {
			src, d, ok := strings.Cut(strings.TrimSpace(kv), "=")
			if !ok {
				return fmt.Errorf("-delay %q: want SRC=DURATION", kv)
			}
			sa, err := netip.ParseAddr(src)
			if err != nil {
				return fmt.Errorf("-delay %q: %v", kv, err)
			}
			dd, err := time.ParseDuration(d)
			if err != nil {
				return fmt.Errorf("-delay %q: %v", kv, err)
			}
			l.SetDelay(sa, dd)
		}
	}
	fmt.Fprintf(stdout, "ldns %s answering probes on udp+tcp port %d\n", a, l.Port())
	if *ask == "" {
		<-ctx.Done()
		return nil
	}
	srv, err := netip.ParseAddrPort(*server)
	if err != nil {
		return fmt.Errorf("-server: %v", err)
	}
	t, ok := dns.StringToType[strings.ToUpper(*qtype)]
	if !ok {
		return fmt.Errorf("-type %q: unknown", *qtype)
	}
	network := "udp"
	if *useTCP {
		network = "tcp"
	}
	for i := 0; i < *count; i++ {
		if i > 0 {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(*interval):
			}
		}
		m, err := gslbtest.Query(a, srv, network, *ask, t, 2*time.Second)
		if err != nil {
			fmt.Fprintf(stdout, "%s %s: %v\n", dns.Fqdn(*ask), *qtype, err)
			continue
		}
		fmt.Fprintln(stdout, formatReply(m))
	}
	return nil
}

// formatReply is one line per reply: the rcode, then each answer record.
func formatReply(m *dns.Msg) string {
	var b strings.Builder
	b.WriteString(dns.RcodeToString[m.Rcode])
	if m.Authoritative {
		b.WriteString(" aa")
	}
	if len(m.Answer) == 0 {
		b.WriteString(" (no answer)")
	}
	for _, rr := range m.Answer {
		b.WriteString(" | ")
		b.WriteString(strings.ReplaceAll(rr.String(), "\t", " "))
	}
	return b.String()
}
