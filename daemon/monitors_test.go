package daemon

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// The https, udp, icmp and dns monitors run against real servers on loopback:
// up when the server answers as the monitor expects, down otherwise.
func TestMoreMonitorsRun(t *testing.T) {
	t.Parallel()
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)

	ln, err := net.Listen("tcp", "127.0.74.11:0")
	if err != nil {
		t.Fatal(err)
	}
	web := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "healthy") }))
	web.Listener.Close()
	web.Listener = ln
	web.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
	web.StartTLS()
	defer web.Close()

	echo, err := net.ListenPacket("udp", "127.0.74.12:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		buf := make([]byte, 512)
		for {
			n, from, err := echo.ReadFrom(buf)
			if err != nil {
				return
			}
			echo.WriteTo(buf[:n], from)
		}
	}()
	dnsConn, err := net.ListenPacket("udp", "127.0.74.15:0")
	if err != nil {
		t.Fatal(err)
	}
	dnsSrv := &dns.Server{PacketConn: dnsConn, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, q *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(q)
		if q.Question[0].Name == "health.example." {
			rr, _ := dns.NewRR("health.example. 30 IN A 127.0.74.99")
			m.Answer = append(m.Answer, rr)
		} else {
			m.Rcode = dns.RcodeNameError
		}
		w.WriteMsg(m)
	})}
	go dnsSrv.ActivateAndServe()
	defer dnsSrv.Shutdown()

	closed, _ := net.ListenPacket("udp", "127.0.74.13:0")
	closedAddr := closed.LocalAddr().String()
	closed.Close() // nothing listens: port unreachable

	for _, c := range []string{
		`create ltm monitor https m_https send "GET / HTTP/1.0\r\n\r\n" recv healthy interval 1 timeout 3`,
		`create ltm monitor https m_https_bad send "GET / HTTP/1.0\r\n\r\n" recv sick interval 1 timeout 3`,
		`create ltm monitor udp m_udp send ping recv ping interval 1 timeout 3`,
		`create ltm monitor icmp m_ping interval 1 timeout 3`,
		`create ltm monitor dns m_dns qname health.example recv 127.0.74.99 interval 1 timeout 3`,
		`create ltm monitor dns m_dns_nx qname missing.example interval 1 timeout 3`,
		"create ltm pool p_https members add { " + ln.Addr().String() + " } monitor m_https",
		"create ltm pool p_https_bad members add { " + ln.Addr().String() + " } monitor m_https_bad",
		"create ltm pool p_udp members add { " + echo.LocalAddr().String() + " } monitor m_udp",
		"create ltm pool p_udp_closed members add { " + closedAddr + " } monitor m_udp",
		"create ltm pool p_ping members add { 127.0.74.14:80 } monitor m_ping",
		"create ltm pool p_dns members add { " + dnsConn.LocalAddr().String() + " } monitor m_dns",
		"create ltm pool p_dns_nx members add { " + dnsConn.LocalAddr().String() + " } monitor m_dns_nx",
	} {
		if out, errText := run(t, s, c); errText != "" || strings.Contains(out, "Warning") {
			t.Fatalf("%s: %q %s", c, out, errText)
		}
	}
	want := map[string]string{"p_https": "available", "p_https_bad": "offline", "p_udp": "available", "p_udp_closed": "offline", "p_ping": "available", "p_dns": "available", "p_dns_nx": "offline"}
	got := map[string]string{}
	for range 100 { // up to 20 s: a down verdict waits for the monitor's timeout
		done := true
		for pool, w := range want {
			out, _ := run(t, s, "show ltm pool "+pool)
			got[pool] = out
			if !strings.Contains(out, "Availability : "+w) {
				done = false
			}
		}
		if done {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	for pool, w := range want {
		if !strings.Contains(got[pool], "Availability : "+w) {
			t.Errorf("%s: want %s, show says:\n%s", pool, w, got[pool])
		}
	}
}
