package mblbvs

import (
	"net/netip"
	"testing"

	"github.com/openltm/openltm/dataplane/httpx"
	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/dataplane/mblb"
)

func spreadVS() *VS {
	cfg := config.MBLB{Request: mblb.Framing{Mode: mblb.HTTP, HTTP: mblb.HTTPOptions{Cookie: httpx.CookieSpec{Name: "BIGipServerweb"}}}}
	return &VS{vs: &state.Virtual{Name: "/Common/vs"}, cfg: cfg}
}

func TestObserveRequest(t *testing.T) {
	client := netip.MustParseAddrPort("192.0.2.1:40000")
	tests := []struct {
		name     string
		requests []string
		xff      string // the heaviest X-Forwarded-For value, "" for none
		users    int
	}{
		{"no identity", []string{"GET / HTTP/1.1\r\nHost: a\r\n\r\n"}, "", 0},
		{"xff tells users apart", []string{
			"GET / HTTP/1.1\r\nX-Forwarded-For: 10.0.0.1, 172.16.0.1\r\n\r\n",
			"GET / HTTP/1.1\r\nx-forwarded-for: 10.0.0.2\r\n\r\n",
			"GET / HTTP/1.1\r\nX-Forwarded-For: 10.0.0.1\r\n\r\n",
		}, "10.0.0.1", 2},
		{"cookies beat xff; persistence cookies are no user", []string{
			"GET / HTTP/1.1\r\nX-Forwarded-For: 198.51.100.7\r\nCookie: session=u1; BIGipServerweb=1.2.0000\r\n\r\n",
			"GET / HTTP/1.1\r\nX-Forwarded-For: 198.51.100.7\r\nCookie: BIGipServerweb=1.2.0000; session=u1\r\n\r\n",
			"GET / HTTP/1.1\r\nX-Forwarded-For: 198.51.100.7\r\nCookie: session=u2\r\n\r\n",
			"GET / HTTP/1.1\r\nX-Forwarded-For: 198.51.100.7\r\nCookie: BIGipServerweb=1.2.0000\r\n\r\n",
		}, "198.51.100.7", 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mv := spreadVS()
			for _, r := range tc.requests {
				b := []byte(r)
				h, err := httpx.ParseRequest(b)
				if err != nil {
					t.Fatal(err)
				}
				mv.observeRequest(client, b, &h)
			}
			sp := mv.vs.Spread.Snapshot()
			if sp.Requests.Total != uint64(len(tc.requests)) || sp.Requests.Keys[0].Key != "192.0.2.1" {
				t.Errorf("requests %+v", sp.Requests)
			}
			got := ""
			if len(sp.XFF.Keys) > 0 {
				got = sp.XFF.Keys[0].Key
			}
			if got != tc.xff || sp.Users != tc.users {
				t.Errorf("xff %q users %d, want %q %d", got, sp.Users, tc.xff, tc.users)
			}
		})
	}
}

func TestObserveRequestAllocatesNothing(t *testing.T) {
	mv := spreadVS()
	b := []byte("GET /a HTTP/1.1\r\nHost: www\r\nX-Forwarded-For: 203.0.113.9\r\nCookie: session=abc; BIGipServerweb=1.2.0000\r\nAccept: */*\r\n\r\n")
	h, err := httpx.ParseRequest(b)
	if err != nil {
		t.Fatal(err)
	}
	c := netip.MustParseAddrPort("192.0.2.1:40000")
	if n := testing.AllocsPerRun(200, func() { mv.observeRequest(c, b, &h) }); n != 0 {
		t.Errorf("%v allocations per request, want 0", n)
	}
}

func BenchmarkObserveRequest(b *testing.B) {
	mv := spreadVS()
	req := []byte("GET /a HTTP/1.1\r\nHost: www\r\nUser-Agent: curl/8\r\nX-Forwarded-For: 203.0.113.9\r\nCookie: session=abc; BIGipServerweb=1.2.0000\r\nAccept: */*\r\n\r\n")
	h, err := httpx.ParseRequest(req)
	if err != nil {
		b.Fatal(err)
	}
	c := netip.MustParseAddrPort("192.0.2.1:40000")
	b.ReportAllocs()
	for b.Loop() {
		mv.observeRequest(c, req, &h)
	}
}
