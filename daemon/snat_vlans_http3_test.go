package daemon

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// http3SourceSeen sends one HTTP/3 request to vip from the address
// from (a QUIC connection of its own) and returns what the member
// answered: the source its connection came from ("" for no answer).
func http3SourceSeen(t *testing.T, from, vip string) string {
	t.Helper()
	tr := &http3.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
		Dial: func(ctx context.Context, addr string, tc *tls.Config, qc *quic.Config) (*quic.Conn, error) {
			pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.ParseIP(from)})
			if err != nil {
				return nil, err
			}
			ra, err := net.ResolveUDPAddr("udp", addr)
			if err != nil {
				pc.Close()
				return nil, err
			}
			c, err := quic.DialEarly(ctx, pc, ra, tc, qc)
			if err != nil {
				pc.Close()
				return nil, err
			}
			context.AfterFunc(c.Context(), func() { pc.Close() })
			return c, nil
		},
	}
	defer tr.Close()
	c := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	res, err := c.Get("https://" + vip + "/")
	if err != nil {
		t.Logf("from %s: %v", from, err)
		return ""
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return string(b)
}

// TestSNATVLANsHTTP3: an HTTP/3 virtual's member connections take the
// arrival VLAN (lo's) of the QUIC connection's handshake, as an HTTP
// virtual's take its TCP client's: an ltm snat enabled on it translates
// them, disabled on it (or enabled on another VLAN) leaves them to the
// wider SNAT; an ltm nat likewise.
func TestSNATVLANsHTTP3(t *testing.T) {
	ln, err := net.Listen("tcp", "127.247.70.11:30280")
	if err != nil {
		t.Skipf("loopback 127.247.70.11: %v", err)
	}
	member := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		io.WriteString(w, host)
	})}
	go member.Serve(ln)
	t.Cleanup(func() { member.Close() })
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	runSteps(t, s, []step{
		{cmd: "create net vlan loop interfaces { lo { } } tag 0"},
		{cmd: "create net vlan other"},
		{cmd: "create ltm pool ph members add { 127.247.70.11:30280 }"},
		{cmd: "create ltm virtual v_h3 destination 127.247.70.1:30443 ip-protocol udp pool ph profiles replace-all-with { udp { } quic { } http3 { } http { } clientssl { context clientside } }"},
		{cmd: "create ltm snat s_wide origins add { 127.247.0.0/16 } translation 127.247.70.100"},
		{cmd: "create ltm snat s_lo origins add { 127.247.71.0/24 } translation 127.247.70.101 vlans add { loop } vlans-enabled",
			out: "rules' listen relays (TCP and UDP) and HTTP/3 clients' requests;"},
		{cmd: "create ltm nat n1 originating-address 127.247.72.10 translation-address 127.247.70.110 vlans add { loop } vlans-enabled",
			out: "rules' listen relays and HTTP/3 clients"},
	})
	const vip = "127.247.70.1:30443"
	check := func(when string, probes map[string]string) {
		t.Helper()
		for from, want := range probes {
			if got := http3SourceSeen(t, from, vip); got != want {
				t.Errorf("%s, from %s: the member saw %q, want %s", when, from, got, want)
			}
		}
	}
	check("enabled on loop", map[string]string{"127.247.71.5": "127.247.70.101", "127.247.72.10": "127.247.70.110", "127.247.73.5": "127.247.70.100"})
	runSteps(t, s, []step{
		{cmd: "modify ltm snat s_lo vlans-disabled"},
		{cmd: "modify ltm nat n1 vlans-disabled"},
	})
	check("disabled on loop", map[string]string{"127.247.71.5": "127.247.70.100", "127.247.72.10": "127.247.70.100"})
	runSteps(t, s, []step{{cmd: "modify ltm snat s_lo vlans replace-all-with { other } vlans-enabled"}})
	check("enabled on another VLAN", map[string]string{"127.247.71.5": "127.247.70.100"})
}
