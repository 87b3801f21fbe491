package aaa_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/aaa"
	"github.com/openltm/openltm/dataplane/authn/authntest"
	"github.com/openltm/openltm/dataplane/radius"
)

// hooks edits the request (renames user "al" to "alice") and reads the
// answer's Filter-Id, or ends the exchange.
type hooks struct {
	filterID string
	server   netip.AddrPort
	end      bool
}

func (h *hooks) Request(acct bool, pkt []byte) ([]byte, error) {
	if h.end {
		return nil, errors.New("rejected")
	}
	if v, ok := radius.Attr(pkt, radius.AttrID{Type: radius.AttrUserName}, 0); ok && string(v) == "al" {
		return radius.Replace(pkt, radius.AttrID{Type: radius.AttrUserName}, 0, []byte("alice"))
	}
	return pkt, nil
}

func (h *hooks) Response(acct bool, pkt []byte, server netip.AddrPort) ([]byte, error) {
	v, _ := radius.Attr(pkt, radius.AttrID{Type: 11}, 0)
	h.filterID, h.server = string(v), server
	return pkt, nil
}

func TestExchanges(t *testing.T) {
	const addr = "127.166.1.1:18120"
	srv, err := authntest.StartRADIUS(addr, "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	up := netip.MustParseAddrPort(addr)
	// A port nothing answers on: the request is sent again to the member
	// the pool picks next.
	silent, err := net.ListenPacket("udp", "127.166.1.2:18120")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	down := netip.MustParseAddrPort("127.166.1.2:18120")

	for _, tc := range []struct {
		name           string
		user, password string
		acct           []aaa.Attr
		secret         string
		pick           []netip.AddrPort
		end            bool
		want           aaa.Outcome
		filterID       string
	}{
		{name: "accept", user: "alice", password: "wonder", want: aaa.OK, filterID: "staff"},
		{name: "reject", user: "alice", password: "nope", want: aaa.Fail},
		{name: "challenge is a failure", user: "bob", password: "x", want: aaa.Fail},
		{name: "request edited by the rules", user: "al", password: "wonder", want: aaa.OK, filterID: "staff"},
		{name: "wrong secret: no answer is one", user: "alice", password: "wonder", secret: "other", want: aaa.Error},
		{name: "retransmitted to the next member", user: "alice", password: "wonder", pick: []netip.AddrPort{down, up}, want: aaa.OK, filterID: "staff"},
		{name: "no member", user: "alice", password: "wonder", pick: []netip.AddrPort{}, want: aaa.Error},
		{name: "the rules end it", user: "alice", password: "wonder", end: true, want: aaa.Error},
		{name: "accounting", acct: []aaa.Attr{{Type: 1, Value: []byte("alice")}, {Type: 44, Value: []byte("s1")}, {Type: 40, Value: []byte{0, 0, 0, 1}}}, want: aaa.OK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &hooks{end: tc.end}
			secret := tc.secret
			if secret == "" {
				secret = "s3cret"
			}
			picks := tc.pick
			if picks == nil {
				picks = []netip.AddrPort{up}
			}
			n := 0
			svc := &aaa.Service{Name: "/Common/aaa_ivs", Secret: []byte(secret), Retransmit: time.Second, Transaction: 4 * time.Second, Hooks: h,
				Pick: func() (netip.AddrPort, bool) {
					if len(picks) == 0 {
						return netip.AddrPort{}, false
					}
					ap := picks[n%len(picks)]
					n++
					return ap, true
				}}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var r aaa.Result
			if tc.acct != nil {
				r = svc.Acct(ctx, tc.acct)
			} else {
				r = svc.Auth(ctx, tc.user, tc.password)
			}
			if r.Outcome != tc.want {
				t.Fatalf("outcome %s (%v), want %s", r.Outcome, r.Err, tc.want)
			}
			if h.filterID != tc.filterID {
				t.Errorf("Filter-Id %q in the answer's rules, want %q", h.filterID, tc.filterID)
			}
			if tc.want == aaa.OK && h.server != up {
				t.Errorf("answer from %v, want %v", h.server, up)
			}
		})
	}
	if acct := srv.Accounting(); len(acct) != 1 || !strings.HasPrefix(acct[0], "alice s1 1") {
		t.Errorf("accounting records %q, want one of alice's session s1 (start)", acct)
	}
}
