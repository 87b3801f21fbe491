package iquery

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// The TLS policies of the two ends decide whether the channel opens and
// with which version and suite: the GSLB (subscriber) and the datacenter
// (publisher) on loopback, each case a fresh pair.
func TestTLSPolicyHandshake(t *testing.T) {
	gcm128 := tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
	gcm256 := tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384
	only12 := func(s ...uint16) *TLSPolicy {
		return &TLSPolicy{MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS12, CipherSuites: s}
	}
	from12 := &TLSPolicy{MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS13, CipherSuites: []uint16{gcm128, gcm256}}
	cases := []struct {
		name     string
		sub, pub *TLSPolicy
		want     string // "" when the handshake must fail
		why      string // a word of the publisher's logged refusal
	}{
		{"default both ends", nil, nil, "TLSv1.3 ", ""},
		{"TLS 1.2 and one suite both ends", only12(gcm128), only12(gcm128), "TLSv1.2 ECDHE-ECDSA-AES128-GCM-SHA256", ""},
		{"publisher picks among the subscriber's", only12(gcm128, gcm256), only12(gcm256), "TLSv1.2 ECDHE-ECDSA-AES256-GCM-SHA384", ""},
		{"minimum TLS 1.2 meets TLS 1.3 only", from12, nil, "TLSv1.3 ", ""},
		{"TLS 1.2 only against TLS 1.3 only", only12(gcm128), nil, "", "version"},
		{"no suite in common", only12(gcm128), only12(gcm256), "", "cipher"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			gtm, dc := identity(t, "gtm"), identity(t, "dc")
			var logs logBuf
			p, err := Listen(fmt.Sprintf("127.99.1.%d:0", i+1), dc, trusting(t, gtm), slog.New(slog.NewTextHandler(&logs, nil)))
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			p.SetTLS(c.pub)
			s, ch := subscriber(t, gtm, trusting(t, dc), nil)
			addr := p.Addr().String()
			s.FollowTLS(addr, []string{addr}, c.sub)
			if c.want == "" {
				next(t, ch, addr, func(e event) bool { return e.down })
				if ps := s.Peers(); ps[0].Connected || ps[0].LastError == "" {
					t.Errorf("peer state %+v", ps[0])
				}
				deadline := time.Now().Add(10 * time.Second)
				for !strings.Contains(logs.String(), c.why) && time.Now().Before(deadline) {
					time.Sleep(20 * time.Millisecond)
				}
				if !strings.Contains(logs.String(), "iquery: refused a peer") || !strings.Contains(logs.String(), c.why) {
					t.Errorf("the publisher logged %q", logs.String())
				}
				return
			}
			next(t, ch, addr, func(e event) bool { return !e.down })
			if got := s.Peers()[0].TLS; !strings.HasPrefix(got, c.want) {
				t.Errorf("stream over %q, want %q", got, c.want)
			}
		})
	}
}

// A stricter policy ends the open streams it does not allow, on either
// end; the subscriber dials again under the new one.
func TestTLSPolicyChangeEndsStreams(t *testing.T) {
	gcm128 := tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
	gtm, dc := identity(t, "gtm"), identity(t, "dc")
	p, err := Listen("127.99.1.20:0", dc, trusting(t, gtm), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	s, ch := subscriber(t, gtm, trusting(t, dc), nil)
	addr := p.Addr().String()
	s.FollowTLS(addr, []string{addr}, &TLSPolicy{MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS13, CipherSuites: []uint16{gcm128}})
	next(t, ch, addr, func(e event) bool { return !e.down })
	if got := s.Peers()[0].TLS; !strings.HasPrefix(got, "TLSv1.3") {
		t.Fatalf("stream over %q", got)
	}
	// The publisher allows TLS 1.2 only: the TLS 1.3 stream ends, and
	// the next one is TLS 1.2.
	p.SetTLS(&TLSPolicy{MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{gcm128}})
	next(t, ch, addr, func(e event) bool { return e.down })
	next(t, ch, addr, func(e event) bool { return !e.down })
	if got := s.Peers()[0].TLS; got != "TLSv1.2 ECDHE-ECDSA-AES128-GCM-SHA256" {
		t.Fatalf("stream over %q", got)
	}
	// The subscriber goes back to TLS 1.3 only: its stream ends and no
	// other opens (the publisher allows TLS 1.2 only).
	s.FollowTLS(addr, []string{addr}, nil)
	next(t, ch, addr, func(e event) bool { return e.down })
	deadline := time.Now().Add(10 * time.Second)
	for {
		ps := s.Peers()[0]
		if !ps.Connected && strings.Contains(ps.LastError, "version") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("peer state %+v", ps)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Setting the same policy again keeps the stream: the next event is
	// a keepalive report, not a Down.
	p.SetTLS(nil)
	next(t, ch, addr, func(e event) bool { return !e.down })
	for len(ch) > 0 {
		<-ch
	}
	p.SetTLS(nil)
	s.FollowTLS(addr, []string{addr}, nil)
	if e := next(t, ch, addr, func(event) bool { return true }); e.down {
		t.Error("setting the same policy again ended the stream")
	}
}
