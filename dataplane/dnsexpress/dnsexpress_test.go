package dnsexpress

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/dnszone/zonetest"

	"github.com/openltm/openltm/dataplane/dnszone"
)

const zoneV1 = zonetest.Example

func TestIncremental(t *testing.T) {
	have := dnszone.Build("example.com.", zonetest.Parse(t, zoneV1))
	soa := func(serial int) dns.RR {
		return zonetest.Parse(t, fmt.Sprintf("@ 300 IN SOA ns1 hostmaster %d 3600 600 86400 60", serial))[0]
	}
	rr := func(s string) dns.RR { return zonetest.Parse(t, s)[0] }
	tests := []struct {
		name    string
		rrs     []dns.RR
		serial  uint32
		www     string // www's A after it, "" for none
		count   int
		wantErr bool
	}{
		{"one version", []dns.RR{soa(2), soa(1), rr("www 300 IN A 127.32.1.1"), soa(2), rr("www 300 IN A 127.32.1.9"), soa(2)}, 2, "127.32.1.9", 12, false},
		{"two versions", []dns.RR{soa(3), soa(1), rr("www 300 IN A 127.32.1.1"), soa(2), soa(2), soa(3), rr("new 60 IN A 127.32.1.8"), soa(3)}, 3, "", 12, false},
		{"a deletion whose TTL differs", []dns.RR{soa(2), soa(1), rr("www 5 IN A 127.32.1.1"), soa(2), soa(2)}, 2, "", 11, false},
		{"no final SOA", []dns.RR{soa(2), soa(1), rr("www 300 IN A 127.32.1.1"), soa(2), rr("x 1 IN A 127.32.1.7")}, 0, "", 0, true},
	}
	for _, tt := range tests {
		d, err := incremental("example.com.", have, tt.rrs)
		if (err != nil) != tt.wantErr {
			t.Errorf("%s: err %v", tt.name, err)
			continue
		}
		if err != nil {
			continue
		}
		got := ""
		if a := d.Set("www.example.com.")[dns.TypeA]; len(a) == 1 {
			got = a[0].(*dns.A).A.String()
		}
		if d.SOA().Serial != tt.serial || got != tt.www || d.Count() != tt.count {
			t.Errorf("%s: serial %d www %q count %d, want %d %q %d", tt.name, d.SOA().Serial, got, d.Count(), tt.serial, tt.www, tt.count)
		}
	}
	// The copy it started from is not changed.
	if have.SOA().Serial != 1 || len(have.Set("www.example.com.")[dns.TypeA]) != 1 {
		t.Error("incremental changed the copy it started from")
	}
}

// primary is an in-process primary: AXFR, and IXFR from the version
// before the current one, signed with key when it is set.
type primary struct {
	addr string
	key  *Key

	mu        sync.Mutex
	versions  []string // zone texts, the last current
	transfers []string // "AXFR 1", "IXFR 2", ...
	refused   atomic.Int64
}

func startPrimary(t *testing.T, addr string, key *Key, text string) *primary {
	t.Helper()
	p := &primary{addr: addr, key: key, versions: []string{text}}
	srv := &dns.Server{Addr: addr, Net: "tcp", Handler: p}
	if key != nil {
		srv.TsigSecret = map[string]string{key.Name: key.Secret}
	}
	started := make(chan struct{})
	srv.NotifyStartedFunc = func() { close(started) }
	go srv.ListenAndServe()
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatalf("primary %s did not start", addr)
	}
	t.Cleanup(func() { srv.Shutdown() })
	return p
}

func (p *primary) set(text string) {
	p.mu.Lock()
	p.versions = append(p.versions, text)
	p.mu.Unlock()
}

func (p *primary) log() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.transfers...)
}

func (p *primary) ServeDNS(w dns.ResponseWriter, r *dns.Msg) {
	q := r.Question[0]
	if p.key != nil && (r.IsTsig() == nil || w.TsigStatus() != nil) {
		p.refused.Add(1)
		m := new(dns.Msg)
		m.SetRcode(r, dns.RcodeNotAuth)
		w.WriteMsg(m)
		return
	}
	p.mu.Lock()
	cur := p.versions[len(p.versions)-1]
	var prev string
	if len(p.versions) > 1 {
		prev = p.versions[len(p.versions)-2]
	}
	p.mu.Unlock()
	zp := func(text string) (*dns.SOA, []dns.RR) {
		var soa *dns.SOA
		var rest []dns.RR
		z := dns.NewZoneParser(strings.NewReader(text), "example.com.", "")
		for rr, ok := z.Next(); ok; rr, ok = z.Next() {
			if s, ok := rr.(*dns.SOA); ok {
				soa = s
			} else {
				rest = append(rest, rr)
			}
		}
		return soa, rest
	}
	soa, rrs := zp(cur)
	out := append(append([]dns.RR{soa}, rrs...), soa)
	how := "AXFR"
	if q.Qtype == dns.TypeIXFR && len(r.Ns) == 1 {
		have := r.Ns[0].(*dns.SOA).Serial
		if prev != "" {
			if psoa, prr := zp(prev); have == psoa.Serial {
				// Everything of the old goes, everything of the new comes:
				// a real difference, if a coarse one.
				out = append(append(append(append([]dns.RR{soa, psoa}, prr...), soa), rrs...), soa)
				how = "IXFR"
			}
		}
		if have == soa.Serial {
			out, how = []dns.RR{soa}, "IXFR current"
		}
	}
	p.mu.Lock()
	p.transfers = append(p.transfers, fmt.Sprintf("%s %d", how, soa.Serial))
	p.mu.Unlock()
	ch := make(chan *dns.Envelope, 1)
	ch <- &dns.Envelope{RR: out}
	close(ch)
	new(dns.Transfer).Out(w, r, ch)
	w.Close()
}

// waitFor polls the zone's counters until ok says so, for at most 10 s.
func waitFor(t *testing.T, z *Zone, what string, ok func(ZoneStats) bool) ZoneStats {
	t.Helper()
	var st ZoneStats
	for i := 0; i < 500; i++ {
		if st = z.Stats(); ok(st) {
			return st
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("zone %s: %s did not happen: %+v", z.name, what, st)
	return st
}

func ask(s *Store, name string, qtype uint16) string {
	q := new(dns.Msg)
	q.SetQuestion(name, qtype)
	m := s.Answer(q, strings.ToLower(name))
	if m == nil {
		return "none"
	}
	return zonetest.Describe(m)
}

// notifyWire is a NOTIFY for example.com, signed with key when set.
func notifyWire(t *testing.T, zone string, key *Key) ([]byte, *dns.Msg) {
	t.Helper()
	n := new(dns.Msg)
	n.SetNotify(zone)
	if key == nil {
		b, err := n.Pack()
		if err != nil {
			t.Fatal(err)
		}
		return b, n
	}
	n.SetTsig(key.Name, key.Algorithm, 300, time.Now().Unix())
	b, _, err := dns.TsigGenerate(n, key.Secret, "", false)
	if err != nil {
		t.Fatal(err)
	}
	r := new(dns.Msg)
	if err := r.Unpack(b); err != nil {
		t.Fatal(err)
	}
	return b, r
}

func TestTransferAndNotify(t *testing.T) {
	key := &Key{Name: "xfer.", Algorithm: dns.HmacSHA256, Secret: "c2VjcmV0c2VjcmV0"}
	p := startPrimary(t, "127.32.1.53:5301", key, zoneV1)
	s := New(Options{Source: netip.MustParseAddr("127.32.1.100"), Dir: t.TempDir()})
	defer s.Close()
	cfg := ZoneConfig{Name: "example.com.", Server: netip.MustParseAddrPort("127.32.1.53:5301"), Key: key, Enabled: true,
		NotifyAction: "consume", AllowNotify: []netip.Addr{netip.MustParseAddr("127.32.1.54")}, VerifyNotify: true}
	s.Apply([]ZoneConfig{cfg})
	z := s.Zone("example.com")
	st := waitFor(t, z, "the first transfer", func(st ZoneStats) bool { return st.Loaded })
	if st.Serial != 1 || st.Records != 12 || st.LastResult != "axfr" {
		t.Fatalf("after the AXFR: %+v", st)
	}
	if got, want := ask(s, "www.example.com.", dns.TypeA), "NOERROR aa an:www.example.com. A 127.32.1.1"; got != want {
		t.Errorf("www: %s, want %s", got, want)
	}
	if got := ask(s, "www.example.org.", dns.TypeA); got != "none" {
		t.Errorf("a name of no zone: %s", got)
	}

	p.set(strings.Replace(strings.Replace(zoneV1, " 1 3600", " 2 3600", 1), "127.32.1.1", "127.32.1.11", 1))
	other := &Key{Name: "xfer.", Algorithm: dns.HmacSHA256, Secret: "b3RoZXJvdGhlcg=="}
	from := func(a string) netip.Addr { return netip.MustParseAddr(a) }
	notifies := []struct {
		name  string
		zone  string
		key   *Key
		src   netip.Addr
		unsig bool // wire not at hand
		rcode int
		pass  bool
	}{
		{"another zone", "example.org.", key, from("127.32.1.53"), false, dns.RcodeRefused, true},
		{"a source not allowed", "example.com.", key, from("127.32.1.99"), false, dns.RcodeRefused, false},
		{"unsigned", "example.com.", nil, from("127.32.1.53"), false, dns.RcodeNotAuth, false},
		{"signed with another secret", "example.com.", other, from("127.32.1.53"), false, dns.RcodeNotAuth, false},
		{"no wire to check", "example.com.", key, from("127.32.1.53"), true, dns.RcodeNotAuth, false},
		{"from an allowed address", "example.com.", key, from("127.32.1.54"), false, dns.RcodeSuccess, false},
	}
	for _, tt := range notifies {
		wire, r := notifyWire(t, tt.zone, tt.key)
		if tt.unsig {
			wire = nil
		}
		m, pass := s.Notify(wire, r, tt.src)
		if m == nil || m.Rcode != tt.rcode || pass != tt.pass || m.Opcode != dns.OpcodeNotify {
			t.Errorf("NOTIFY %s: %v pass %v, want %s pass %v", tt.name, m, pass, dns.RcodeToString[tt.rcode], tt.pass)
		}
	}
	st = waitFor(t, z, "the IXFR after the NOTIFY", func(st ZoneStats) bool { return st.Serial == 2 })
	if st.LastResult != "ixfr" || st.Notifies != 1 || st.NotifyRejected != 4 || st.Records != 12 {
		t.Errorf("after the NOTIFY: %+v", st)
	}
	if got, want := ask(s, "www.example.com.", dns.TypeA), "NOERROR aa an:www.example.com. A 127.32.1.11"; got != want {
		t.Errorf("www after the IXFR: %s, want %s", got, want)
	}
	if l := p.log(); len(l) < 2 || l[0] != "AXFR 1" || l[1] != "IXFR 2" {
		t.Errorf("the primary saw %q", l)
	}

	// notify-action: repeat takes it and passes it on, bypass only passes.
	for _, tt := range []struct {
		action string
		rcode  int
		count  uint64
	}{{"repeat", dns.RcodeSuccess, 2}, {"bypass", dns.RcodeRefused, 2}} {
		c := cfg
		c.NotifyAction = tt.action
		s.Apply([]ZoneConfig{c})
		wire, r := notifyWire(t, "example.com.", key)
		m, pass := s.Notify(wire, r, from("127.32.1.53"))
		if m.Rcode != tt.rcode || !pass || z.Stats().Notifies != tt.count {
			t.Errorf("notify-action %s: %s pass %v, %d taken", tt.action, dns.RcodeToString[m.Rcode], pass, z.Stats().Notifies)
		}
	}

	// A restarted store answers from its saved copy at once, though the
	// primary no longer lets it in.
	dir := s.opts.Dir
	s.Close()
	s2 := New(Options{Source: netip.MustParseAddr("127.32.1.100"), Dir: dir})
	defer s2.Close()
	c := cfg
	c.Key = other
	s2.Apply([]ZoneConfig{c})
	if got, want := ask(s2, "www.example.com.", dns.TypeA), "NOERROR aa an:www.example.com. A 127.32.1.11"; got != want {
		t.Errorf("www after a restart: %s, want %s", got, want)
	}
	st = waitFor(t, s2.Zone("example.com."), "the refused refresh", func(st ZoneStats) bool { return st.Failures > 0 })
	if !st.Loaded || st.Serial != 2 {
		t.Errorf("after the refused refresh: %+v", st)
	}

	// A disabled zone does not answer; a removed one is forgotten.
	c.Enabled = false
	s2.Apply([]ZoneConfig{c})
	if got := ask(s2, "www.example.com.", dns.TypeA); got != "none" {
		t.Errorf("a disabled zone answered %s", got)
	}
	s2.Apply(nil)
	if s2.Zone("example.com.") != nil || len(s2.Stats()) != 0 {
		t.Error("a removed zone is still there")
	}
}

func TestTransferFailures(t *testing.T) {
	key := &Key{Name: "xfer.", Algorithm: dns.HmacMD5, Secret: "c2VjcmV0c2VjcmV0"}
	p := startPrimary(t, "127.32.1.53:5302", key, zoneV1)
	// Nothing listens on 127.32.1.53:5303.
	ln, err := net.Listen("tcp", "127.32.1.53:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	tests := []struct {
		name   string
		server string
		key    *Key
		want   string // in LastResult
	}{
		{"unsigned", "127.32.1.53:5302", nil, "NOTAUTH"},
		{"nothing listens", closed, nil, "refused"},
	}
	for _, tt := range tests {
		s := New(Options{Source: netip.MustParseAddr("127.32.1.100")})
		s.Apply([]ZoneConfig{{Name: "example.com.", Server: netip.MustParseAddrPort(tt.server), Key: tt.key, Enabled: true, NotifyAction: "consume"}})
		st := waitFor(t, s.Zone("example.com."), "a failure", func(st ZoneStats) bool { return st.Failures > 0 })
		if st.Loaded || !strings.Contains(strings.ToUpper(st.LastResult), strings.ToUpper(tt.want)) {
			t.Errorf("%s: %+v", tt.name, st)
		}
		if ask(s, "www.example.com.", dns.TypeA) != "none" {
			t.Errorf("%s: a zone without a copy answered", tt.name)
		}
		s.Close()
	}
	if p.refused.Load() == 0 {
		t.Error("the primary refused nothing")
	}
}
