package iquery

import (
	"context"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A store keeps its identity and trusted certificates across opens, and
// forgets a removed one on disk too.
func TestStoreKeepsIdentityAndTrust(t *testing.T) {
	dir := t.TempDir()
	st, err := OpenStore(dir, "gslb1")
	if err != nil {
		t.Fatal(err)
	}
	peer := identity(t, "dc1")
	d, err := st.Add(peer.CertPEM())
	if err != nil || d.Name != "dc1" || d.Fingerprint != peer.Fingerprint() {
		t.Fatalf("Add: %+v %v", d, err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "device.pem")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("device.pem: %v %v", fi, err)
	}
	again, err := OpenStore(dir, "another name")
	if err != nil {
		t.Fatal(err)
	}
	if again.ID.Name != "gslb1" || again.ID.Fingerprint() != st.ID.Fingerprint() {
		t.Errorf("identity not kept: %s %s", again.ID.Name, again.ID.Fingerprint())
	}
	if got := again.Trust.Trusted(); len(got) != 1 || got[0] != d {
		t.Errorf("trusted after reopening: %+v", got)
	}
	if n, err := again.Remove("dc1"); n != 1 || err != nil {
		t.Fatalf("Remove: %d %v", n, err)
	}
	third, err := OpenStore(dir, "x")
	if err != nil {
		t.Fatal(err)
	}
	if got := third.Trust.Trusted(); len(got) != 0 {
		t.Errorf("removed device still trusted: %+v", got)
	}
	if err := os.WriteFile(filepath.Join(dir, "trusted", "junk.pem"), []byte("junk"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenStore(dir, "x"); err == nil {
		t.Error("a store with a file that is no certificate opened")
	}
}

// FetchCertificate reads a publisher's certificate without being trusted
// by it; once trusted, the fetched certificate lets a subscriber in.
func TestFetchThenTrust(t *testing.T) {
	dc, gtm := identity(t, "dc1"), identity(t, "gtm")
	p, err := Listen("127.0.90.5:0", dc, trusting(t, gtm), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	pemBytes, d, err := FetchCertificate(ctx, p.Addr().String())
	if err != nil || d.Name != "dc1" || d.Fingerprint != dc.Fingerprint() {
		t.Fatalf("FetchCertificate: %+v %v", d, err)
	}
	tr := NewTrust()
	if _, err := tr.Add(pemBytes); err != nil {
		t.Fatal(err)
	}
	sub, ch := subscriber(t, gtm, tr, nil)
	sub.Follow(p.Addr().String())
	next(t, ch, p.Addr().String(), func(e event) bool { return !e.down && e.report.Device == "dc1" })
	if ps := sub.Peers(); len(ps) != 1 || !ps[0].Connected || ps[0].Device != "dc1" {
		t.Errorf("Peers: %+v", ps)
	}
	sub.Unfollow(p.Addr().String())
	if ps := sub.Peers(); len(ps) != 0 {
		t.Errorf("Peers after Unfollow: %+v", ps)
	}
	if _, _, err := FetchCertificate(ctx, "127.0.90.5:1"); err == nil {
		t.Error("fetching from a closed port succeeded")
	}
}

// A subscriber's probe request runs on the publisher and its result
// comes back on the stream, beside the reports.
func TestProbeOverTheStream(t *testing.T) {
	dc, gtm := identity(t, "dc1"), identity(t, "gtm")
	p, err := Listen("127.0.90.6:0", dc, trusting(t, gtm), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	src := netip.MustParseAddr("127.0.90.6")
	p.SetProber(func(r ProbeRequest) ProbeResult {
		if r.Src != src {
			return ProbeResult{Error: "not my address"}
		}
		return ProbeResult{RTTMicros: 1234, Protocol: "dns_dot"}
	})
	sub, ch := subscriber(t, gtm, trusting(t, dc), nil)
	a := p.Addr().String()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := sub.Probe(ctx, a, ProbeRequest{Src: src}); err == nil {
		t.Error("a probe before following succeeded")
	}
	sub.Follow(a)
	next(t, ch, a, func(e event) bool { return !e.down })
	r, err := sub.Probe(ctx, a, ProbeRequest{Src: src, LDNS: netip.MustParseAddr("127.0.91.9")})
	if err != nil || r.RTTMicros != 1234 || r.Protocol != "dns_dot" {
		t.Fatalf("Probe: %+v %v", r, err)
	}
	if _, err := sub.Probe(ctx, a, ProbeRequest{Src: netip.MustParseAddr("127.0.90.7")}); err == nil || err.Error() != "not my address" {
		t.Errorf("a probe from another address: %v", err)
	}
}
