package dataplane

import (
	"encoding/binary"
	"net/http"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// TestCloneDoH: a DNS over HTTPS virtual with a dns profile copies each
// query, taken out of its GET or POST, to its clone pool, as a dns
// virtual's TCP queries are: on one clone connection per client
// connection, each with its length prefix, so that the clone member
// reads DNS over TCP; over HTTP/1.1 and over HTTP/2 (whose queries are
// answered at once). So does a doh-proxy without a dns profile, which
// passes the queries to its member itself, to clientside and serverside
// pools alike (the member gets the query as the client sent it). The
// client's answers come from the pool's member.
func TestCloneDoH(t *testing.T) {
	dohMember(t, "127.202.70.11:25353")
	var unencrypted http.Protocols
	unencrypted.SetUnencryptedHTTP2(true)
	for i, tc := range []struct {
		name   string
		client *http.Client
		proxy  bool // a doh-proxy without a dns profile
		server bool // the clone pool's context serverside
	}{
		{"http/1.1", &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{}}, false, false},
		{"h2c", &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{Protocols: &unencrypted}}, false, false},
		{"proxy http/1.1", &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{}}, true, false},
		{"proxy h2c serverside", &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{Protocols: &unencrypted}}, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := "127.202.70." + string(rune('1'+i)) + ":28053"
			cl := "127.202.70." + string(rune('1'+i)) + "1:29053"
			cc := startCloneCollector(t, cl)
			p, _ := newPlane(t)
			cfg := basic(vs, "127.202.70.11:25353")
			v := cfg.Virtuals["/Common/vs"]
			if tc.proxy {
				v.DoH = &DoH{Profile: "doh-proxy /Common/doh-proxy", Proxy: true, H2C: true}
			} else {
				v.DoH = &DoH{Profile: "doh-server /Common/doh-server", H2C: true}
				v.DNS = &DNSProfile{Name: "/Common/dns", Unhandled: "allow"}
			}
			withClone(cfg, "/Common/ids", tc.server, cl)
			mustApply(t, p, cfg)
			for k, name := range []string{"one.example.", "two.example."} {
				m, res := dohAsk(t, tc.client, "http://"+vs+"/dns-query", name, k == 1)
				if m == nil || len(m.Answer) != 1 {
					t.Fatalf("%s: status %d, answer %v", name, res.StatusCode, m)
				}
			}
			tc.client.CloseIdleConnections()
			got := cc.wait(t, 1)[0]
			var names []string
			for b := []byte(got); len(b) >= 2; {
				n := int(binary.BigEndian.Uint16(b))
				if len(b) < 2+n {
					t.Fatalf("clone got a cut frame: %q", got)
				}
				q := new(dns.Msg)
				if err := q.Unpack(b[2 : 2+n]); err != nil || len(q.Question) != 1 {
					t.Fatalf("clone got %q: %v", b[2:2+n], err)
				}
				names = append(names, q.Question[0].Name)
				b = b[2+n:]
			}
			if len(names) != 2 || names[0] != "one.example." || names[1] != "two.example." {
				t.Fatalf("clone member got the queries %v; want one.example. and two.example. on one connection", names)
			}
			eventually(t, "clone counters", func() bool {
				st, _ := p.Virtual("/Common/vs")
				return st.Clone != nil && st.Clone.Conns == 1 && st.Clone.Dropped == 0
			})
		})
	}
}
