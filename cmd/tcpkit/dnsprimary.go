package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"
)

const dnsPrimaryUsage = "-listen ADDR:PORT -origin ZONE -zone FILE [-label P1] [-tsig NAME:SECRET[:ALG]] [-notify ADDR:PORT ...] [-source ADDR] [-poll D]"

// addrList collects repeatable address flags.
type addrList []string

func (a *addrList) String() string     { return strings.Join(*a, ",") }
func (a *addrList) Set(s string) error { *a = append(*a, s); return nil }

// primaryZone is one version of the zone the primary serves.
type primaryZone struct {
	soa *dns.SOA
	rrs []dns.RR // the SOA aside
}

// dnsPrimaryMain is a zone's primary name server, the dns-express-server
// of a DNS Express zone: it serves the zone in -zone by AXFR over TCP,
// and by IXFR from the version before the current one (the whole zone
// otherwise), answers SOA queries over UDP and TCP, and reads the file
// again when it changes, sending a NOTIFY to each -notify address (from
// -source) for every new serial. With -tsig, transfers must be signed
// with that key, and NOTIFYs are signed with it. Each transfer and
// NOTIFY is logged with the label.
func dnsPrimaryMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("dns-primary", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "", "ADDR:PORT to serve on (UDP and TCP)")
	origin := fs.String("origin", "", "the zone's name")
	file := fs.String("zone", "", "the zone's master file; read again when it changes")
	label := fs.String("label", "P1", "the label each logged line starts with")
	tsig := fs.String("tsig", "", "NAME:SECRET[:hmac-md5|hmac-sha1|hmac-sha256] that transfers must be signed with")
	source := fs.String("source", "", "the address NOTIFYs come from")
	poll := fs.Duration("poll", 200*time.Millisecond, "how often the zone file is checked for changes")
	var notify addrList
	fs.Var(&notify, "notify", "ADDR:PORT to send a NOTIFY to for every new serial (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *listen == "" || *origin == "" || *file == "" {
		return fmt.Errorf("-listen, -origin and -zone are required")
	}
	zone := dns.Fqdn(strings.ToLower(*origin))
	var keyName, secret, alg string
	if *tsig != "" {
		f := strings.Split(*tsig, ":")
		if len(f) < 2 {
			return fmt.Errorf("-tsig %q: want NAME:SECRET[:ALG]", *tsig)
		}
		keyName, secret, alg = dns.Fqdn(strings.ToLower(f[0])), f[1], dns.HmacMD5
		if len(f) > 2 {
			switch f[2] {
			case "hmac-sha1":
				alg = dns.HmacSHA1
			case "hmac-sha256":
				alg = dns.HmacSHA256
			}
		}
	}
	var (
		mu        sync.Mutex
		cur, prev *primaryZone
		out       sync.Mutex // log lines whole
		logf      = func(format string, a ...any) {
			out.Lock()
			fmt.Fprintf(stdout, *label+" "+format+"\n", a...)
			out.Unlock()
		}
		lastChange time.Time
	)
	read := func() (*primaryZone, error) {
		b, err := os.ReadFile(*file)
		if err != nil {
			return nil, err
		}
		zp := dns.NewZoneParser(strings.NewReader(string(b)), zone, *file)
		z := &primaryZone{}
		for rr, ok := zp.Next(); ok; rr, ok = zp.Next() {
			if s, isSOA := rr.(*dns.SOA); isSOA && strings.EqualFold(s.Hdr.Name, zone) {
				z.soa = s
				continue
			}
			z.rrs = append(z.rrs, rr)
		}
		if err := zp.Err(); err != nil {
			return nil, err
		}
		if z.soa == nil {
			return nil, fmt.Errorf("%s: no SOA for %s", *file, zone)
		}
		return z, nil
	}
	first, err := read()
	if err != nil {
		return err
	}
	cur = first
	if fi, err := os.Stat(*file); err == nil {
		lastChange = fi.ModTime()
	}
	signed := func(w dns.ResponseWriter, r *dns.Msg) bool {
		if keyName == "" {
			return true
		}
		t := r.IsTsig()
		return t != nil && strings.EqualFold(t.Hdr.Name, keyName) && w.TsigStatus() == nil
	}
	h := dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		if len(r.Question) != 1 || !strings.EqualFold(r.Question[0].Name, zone) {
			m.Rcode = dns.RcodeRefused
			w.WriteMsg(m)
			return
		}
		q := r.Question[0]
		mu.Lock()
		z, old := cur, prev
		mu.Unlock()
		from := w.RemoteAddr().String()
		if (q.Qtype == dns.TypeAXFR || q.Qtype == dns.TypeIXFR) && !signed(w, r) {
			logf("%s refused to %s: not signed with %s", dns.TypeToString[q.Qtype], from, strings.TrimSuffix(keyName, "."))
			m.Rcode = dns.RcodeNotAuth
			w.WriteMsg(m)
			return
		}
		if r.IsTsig() != nil && keyName != "" {
			m.SetTsig(keyName, alg, 300, time.Now().Unix())
		}
		switch q.Qtype {
		case dns.TypeSOA:
			m.Authoritative = true
			m.Answer = []dns.RR{z.soa}
			w.WriteMsg(m)
		case dns.TypeAXFR, dns.TypeIXFR:
			if _, tcp := w.RemoteAddr().(*net.TCPAddr); !tcp {
				m.Truncated = true // transfers go over TCP
				w.WriteMsg(m)
				return
			}
			var have uint32
			if q.Qtype == dns.TypeIXFR && len(r.Ns) == 1 {
				if s, ok := r.Ns[0].(*dns.SOA); ok {
					have = s.Serial
				}
			}
			var rrs []dns.RR
			how := "AXFR"
			switch {
			case q.Qtype == dns.TypeIXFR && have == z.soa.Serial:
				rrs, how = []dns.RR{z.soa}, "IXFR current"
			case q.Qtype == dns.TypeIXFR && old != nil && have == old.soa.Serial:
				rrs, how = ixfrDiff(old, z), "IXFR"
			default:
				rrs = append(append([]dns.RR{z.soa}, z.rrs...), z.soa)
			}
			logf("%s %s serial %d to %s (%d records)", how, strings.TrimSuffix(zone, "."), z.soa.Serial, from, len(rrs))
			ch := make(chan *dns.Envelope, 1)
			tr := new(dns.Transfer)
			go func() {
				defer close(ch)
				for len(rrs) > 0 { // 100 records a message, well within 64 KiB
					n := min(len(rrs), 100)
					ch <- &dns.Envelope{RR: rrs[:n]}
					rrs = rrs[n:]
				}
			}()
			if err := tr.Out(w, r, ch); err != nil {
				logf("transfer to %s failed: %v", from, err)
				for range ch { // let the sender end
				}
			}
			w.Close()
		default:
			m.Rcode = dns.RcodeNotImplemented
			w.WriteMsg(m)
		}
	})
	var servers []*dns.Server
	for _, network := range []string{"udp", "tcp"} {
		started := make(chan struct{})
		srv := &dns.Server{Addr: *listen, Net: network, Handler: h, NotifyStartedFunc: func() { close(started) }}
		if keyName != "" {
			srv.TsigSecret = map[string]string{keyName: secret}
		}
		errc := make(chan error, 1)
		go func() { errc <- srv.ListenAndServe() }()
		select {
		case <-started:
		case err := <-errc:
			return fmt.Errorf("listen %s/%s: %v", *listen, network, err)
		}
		servers = append(servers, srv)
	}
	defer func() {
		for _, s := range servers {
			s.Shutdown()
		}
	}()
	logf("serving %s serial %d on %s", strings.TrimSuffix(zone, "."), cur.soa.Serial, *listen)
	sendNotify := func(serial uint32) {
		for _, to := range notify {
			n := new(dns.Msg)
			n.SetNotify(zone)
			c := &dns.Client{Net: "udp", Timeout: 2 * time.Second}
			if *source != "" {
				c.Dialer = &net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.UDPAddr{IP: net.ParseIP(*source)}}
			}
			if keyName != "" {
				n.SetTsig(keyName, alg, 300, time.Now().Unix())
				c.TsigSecret = map[string]string{keyName: secret}
			}
			r, _, err := c.Exchange(n, to)
			switch {
			case err != nil:
				logf("NOTIFY %s serial %d to %s: %v", strings.TrimSuffix(zone, "."), serial, to, err)
			default:
				logf("NOTIFY %s serial %d to %s: %s", strings.TrimSuffix(zone, "."), serial, to, dns.RcodeToString[r.Rcode])
			}
		}
	}
	t := time.NewTicker(*poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		fi, err := os.Stat(*file)
		if err != nil || fi.ModTime().Equal(lastChange) {
			continue
		}
		lastChange = fi.ModTime()
		z, err := read()
		if err != nil {
			logf("zone file: %v", err)
			continue
		}
		mu.Lock()
		changed := z.soa.Serial != cur.soa.Serial
		if changed {
			prev, cur = cur, z
		}
		mu.Unlock()
		if changed {
			logf("loaded %s serial %d", strings.TrimSuffix(zone, "."), z.soa.Serial)
			sendNotify(z.soa.Serial)
		}
	}
}

// ixfrDiff is the IXFR answer (RFC 1995) from old to cur: the new SOA,
// the old SOA and what went, the new SOA and what came, the new SOA.
func ixfrDiff(old, cur *primaryZone) []dns.RR {
	key := func(rr dns.RR) string {
		c := dns.Copy(rr)
		c.Header().Ttl = 0
		return strings.ToLower(c.String())
	}
	in := func(z *primaryZone) map[string]dns.RR {
		m := map[string]dns.RR{}
		for _, rr := range z.rrs {
			m[key(rr)] = rr
		}
		return m
	}
	was, is := in(old), in(cur)
	out := []dns.RR{cur.soa, old.soa}
	for _, rr := range old.rrs {
		if _, ok := is[key(rr)]; !ok {
			out = append(out, rr)
		}
	}
	out = append(out, cur.soa)
	for _, rr := range cur.rrs {
		if _, ok := was[key(rr)]; !ok {
			out = append(out, rr)
		}
	}
	return append(out, cur.soa)
}
