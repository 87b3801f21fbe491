package daemon

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// dohSourceSeen POSTs an A query to url over HTTP/1.1 from the address
// from, a few times for a lost exchange, and returns the source the
// member saw ("" for no answer).
func dohSourceSeen(t *testing.T, url, from string) string {
	t.Helper()
	d := &net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	tr := &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	q := new(dns.Msg)
	q.SetQuestion("who.example.net.", dns.TypeA)
	q.Id = 0 // RFC 8484
	wire, err := q.Pack()
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, url, bytes.NewReader(wire))
		req.Header.Set("content-type", "application/dns-message")
		req.Header.Set("accept", "application/dns-message")
		res, err := c.Do(req)
		if err != nil {
			continue
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		m := new(dns.Msg)
		if res.StatusCode != http.StatusOK || m.Unpack(b) != nil || len(m.Answer) != 1 {
			continue
		}
		if a, ok := m.Answer[0].(*dns.A); ok {
			return a.A.String()
		}
	}
	return ""
}

// TestSNATVLANsDoH: a DoH virtual's member queries take the client
// connection's arrival VLAN (lo's), on a doh-server (its dns profile's
// pool step) and a doh-proxy without a dns profile (the query passed
// to the member as is): an ltm snat enabled on it translates them,
// disabled on it (or enabled on another VLAN) leaves them to the wider
// SNAT; an ltm nat likewise.
func TestSNATVLANsDoH(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	sourceEchoDNS(t, "127.247.60.11:30053")
	s := e.NewSession("admin").(*Session)
	runSteps(t, s, []step{
		{cmd: "create net vlan loop interfaces { lo { } } tag 0"},
		{cmd: "create net vlan other"},
		{cmd: "create ltm pool dp members add { 127.247.60.11:30053 }"},
		{cmd: "create ltm profile dns dnsp"},
		{cmd: "create ltm virtual doh_srv destination 127.247.60.1:30080 ip-protocol tcp profiles add { tcp http dnsp doh-server } pool dp"},
		{cmd: "create ltm virtual doh_proxy destination 127.247.60.2:30080 ip-protocol tcp profiles add { tcp http doh-proxy } pool dp"},
		{cmd: "create ltm snat s_wide origins add { 127.247.0.0/16 } translation 127.247.60.100"},
		{cmd: "create ltm snat s_lo origins add { 127.247.61.0/24 } translation 127.247.60.101 vlans add { loop } vlans-enabled",
			out: "dns virtuals' member queries (UDP, TCP and DoH clients)"},
		{cmd: "create ltm nat n1 originating-address 127.247.62.10 translation-address 127.247.60.110 vlans add { loop } vlans-enabled",
			out: "dns and DoH virtuals' member queries"},
	})
	urls := []string{"http://127.247.60.1:30080/dns-query", "http://127.247.60.2:30080/dns-query"}
	check := func(when string, probes map[string]string) {
		t.Helper()
		for _, url := range urls {
			for from, want := range probes {
				if got := dohSourceSeen(t, url, from); got != want {
					t.Errorf("%s, %s from %s: the member saw %q, want %s", when, url, from, got, want)
				}
			}
		}
	}
	check("enabled on loop", map[string]string{"127.247.61.5": "127.247.60.101", "127.247.62.10": "127.247.60.110", "127.247.63.5": "127.247.60.100"})
	runSteps(t, s, []step{
		{cmd: "modify ltm snat s_lo vlans-disabled"},
		{cmd: "modify ltm nat n1 vlans-disabled"},
	})
	check("disabled on loop", map[string]string{"127.247.61.5": "127.247.60.100", "127.247.62.10": "127.247.60.100"})
	runSteps(t, s, []step{{cmd: "modify ltm snat s_lo vlans replace-all-with { other } vlans-enabled"}})
	check("enabled on another VLAN", map[string]string{"127.247.61.5": "127.247.60.100"})
}
