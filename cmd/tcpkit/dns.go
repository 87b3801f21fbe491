package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/miekg/dns"
)

// recordList collects -record flags.
type recordList []dns.RR

func (r *recordList) String() string { return fmt.Sprint(len(*r)) }

func (r *recordList) Set(s string) error {
	rr, err := dns.NewRR(s)
	if err != nil {
		return err
	}
	if rr == nil {
		return fmt.Errorf("%q holds no record", s)
	}
	*r = append(*r, rr)
	return nil
}

// dnsMain is a small authoritative DNS server, a DNS pool member for a
// virtual with a dns profile: it answers the records given with -record
// over UDP and TCP on -listen, NODATA for another type of a name it
// holds, NXDOMAIN for any other name, the A and AAAA records it holds of
// an MX or NS answer's targets in the additional section, as an
// authoritative server gives glue, and logs each query with the label
// so that a transcript sees which queries reached it. With -doh it
// answers the same over DNS over HTTPS instead (RFC 8484, GET and POST,
// any path), in TLS with -cert and -key (ALPN h2 and http/1.1; -http1
// offers http/1.1 only), a DoH member for a doh-proxy virtual; each
// query's line then says the HTTP version it came over.
func dnsMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("dns", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "", "ADDR:PORT to answer on (UDP and TCP)")
	label := fs.String("label", "D1", "the label each logged query starts with")
	var records recordList
	fs.Var(&records, "record", "a record in master-file form, e.g. 'www.example.net. 60 IN A 192.0.2.1' (repeatable)")
	dohMode := fs.Bool("doh", false, "serve DNS over HTTPS (TCP only) instead of DNS over UDP and TCP")
	certFile := fs.String("cert", "", "with -doh: the PEM certificate to serve TLS with (without: cleartext HTTP/1.1 and h2c)")
	keyFile := fs.String("key", "", "with -doh: the PEM key of -cert")
	http1 := fs.Bool("http1", false, "with -doh: offer only http/1.1 in the TLS handshake")
	peer := fs.Bool("peer", false, "log the address each query came from too (from udp ADDR:PORT), so a transcript sees the proxy's source address translation")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *listen == "" {
		return fmt.Errorf("-listen is required")
	}
	if (*certFile == "") != (*keyFile == "") || !*dohMode && (*certFile != "" || *http1) {
		return fmt.Errorf("-cert and -key go together, and with -doh")
	}
	names := map[string]bool{}
	for _, rr := range records {
		names[strings.ToLower(rr.Header().Name)] = true
	}
	var mu sync.Mutex
	h := dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		m.Authoritative = true
		if len(r.Question) != 1 {
			m.Rcode = dns.RcodeFormatError
			w.WriteMsg(m)
			return
		}
		q := r.Question[0]
		name := strings.ToLower(q.Name)
		for _, rr := range records {
			if strings.ToLower(rr.Header().Name) == name && (rr.Header().Rrtype == q.Qtype || q.Qtype == dns.TypeANY) {
				m.Answer = append(m.Answer, rr)
			}
		}
		if !names[name] {
			m.Rcode = dns.RcodeNameError
		}
		m.Extra = glue(records, m.Answer)
		from := w.RemoteAddr().Network()
		if *peer {
			from += " " + w.RemoteAddr().String()
		}
		mu.Lock()
		fmt.Fprintf(stdout, "%s query %s %s from %s: %s\n", *label, q.Name, dns.TypeToString[q.Qtype], from, dns.RcodeToString[m.Rcode])
		mu.Unlock()
		w.WriteMsg(m)
	})
	if *dohMode {
		return serveDoH(ctx, *listen, *label, *certFile, *keyFile, *http1, len(records), h, stdout)
	}
	errs := make(chan error, 2)
	var servers []*dns.Server
	var started sync.WaitGroup
	for _, network := range []string{"udp", "tcp"} {
		started.Add(1)
		srv := &dns.Server{Addr: *listen, Net: network, Handler: h, NotifyStartedFunc: started.Done}
		servers = append(servers, srv)
		go func() { errs <- srv.ListenAndServe() }()
	}
	ready := make(chan struct{})
	go func() { started.Wait(); close(ready) }()
	select {
	case err := <-errs:
		for _, s := range servers {
			s.Shutdown()
		}
		return err
	case <-ready:
	}
	fmt.Fprintf(stdout, "%s answering %d records on %s (udp+tcp)\n", *label, len(records), *listen)
	select {
	case <-ctx.Done():
	case err := <-errs:
		for _, s := range servers {
			s.Shutdown()
		}
		return err
	}
	for _, s := range servers {
		s.Shutdown()
	}
	return nil
}

// glue are the A and AAAA records of the targets of answer's MX and NS
// records among records.
func glue(records, answer []dns.RR) []dns.RR {
	var out []dns.RR
	for _, a := range answer {
		var target string
		switch x := a.(type) {
		case *dns.MX:
			target = x.Mx
		case *dns.NS:
			target = x.Ns
		default:
			continue
		}
		for _, rr := range records {
			if t := rr.Header().Rrtype; (t == dns.TypeA || t == dns.TypeAAAA) && strings.EqualFold(rr.Header().Name, target) {
				out = append(out, rr)
			}
		}
	}
	return out
}
