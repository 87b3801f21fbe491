package daemon

import (
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quic-go/quic-go/http3"
)

// TestHTTP3ProfileStack: a UDP virtual with udp, quic, http3, http and
// client-ssl profiles serves HTTP/3 with the quic profile's stream
// limits; an incomplete stack is refused with what it lacks.
func TestHTTP3ProfileStack(t *testing.T) {
	ln, err := net.Listen("tcp", "127.169.1.11:8080")
	if err != nil {
		t.Skipf("loopback 127.169.1.11: %v", err)
	}
	member := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "member saw "+r.Proto+" "+r.URL.Path+" X-Rule="+r.Header.Get("X-Rule"))
	})}
	go member.Serve(ln)
	defer member.Close()
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.169.1.11:8080 }",
		"create ltm rule r_h3 { when HTTP_REQUEST { HTTP::header insert X-Rule \"[HTTP::version] [SSL::cipher version] [SSL::cipher name]\" } }",
		"create ltm rule r_ssl { when CLIENTSSL_HANDSHAKE { log local0. [SSL::cipher name] } }",
		"create ltm rule r_data { when CLIENT_DATA { TCP::release } }",
		"create ltm profile quic q_edge bidi-concurrent-streams-per-connection 50 uni-concurrent-streams-per-connection 5",
		"create ltm virtual v_h3 destination 127.169.1.1:443 ip-protocol udp pool p profiles replace-all-with { udp { } q_edge { } http3 { } http { } clientssl { context clientside } } rules { r_h3 } source-address-translation { type automap }",
		"create ltm virtual v_udp destination 127.169.1.2:53 ip-protocol udp pool p profiles replace-all-with { udp { } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	// A request through the running virtual: HTTP/3 in front, HTTP/1.1
	// to the member, the rule's HTTP_REQUEST in between.
	tr := &http3.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	defer tr.Close()
	c := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	resp, err := c.Get("https://127.169.1.1/hello")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.Proto != "HTTP/3.0" || string(body) != "member saw HTTP/1.1 /hello X-Rule=3.0 TLSv1.3 TLS13-AES128-GCM-SHA256" {
		t.Fatalf("%s %q", resp.Proto, body)
	}
	// Deleted and made again on the same destination, at once: the QUIC
	// socket was freed by the first commit.
	for _, cmd := range []string{"delete ltm virtual v_h3",
		"create ltm virtual v_h3 destination 127.169.1.1:443 ip-protocol udp pool p profiles replace-all-with { udp { } quic { } http3 { } http { } clientssl { context clientside } } source-address-translation { type automap }"} {
		if _, err := run(t, s, cmd); err != "" {
			t.Fatalf("%s: %s", cmd, err)
		}
	}
	tr.CloseIdleConnections()
	resp, err = c.Get("https://127.169.1.1/again")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "member saw HTTP/1.1 /again X-Rule=" {
		t.Fatalf("after the virtual was made again: %q", body)
	}
	// A plain UDP virtual turned into HTTP/3 on its destination, and
	// back: the commit frees the one socket before it binds the other.
	if _, err := run(t, s, "modify ltm virtual v_udp profiles replace-all-with { udp { } quic { } http3 { } http { } clientssl { context clientside } } source-address-translation { type automap }"); err != "" {
		t.Fatal(err)
	}
	resp, err = c.Get("https://127.169.1.2:53/turned")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "member saw HTTP/1.1 /turned X-Rule=" {
		t.Fatalf("a UDP virtual turned HTTP/3: %q", body)
	}
	if _, err := run(t, s, "modify ltm virtual v_udp profiles replace-all-with { udp { } } source-address-translation { type none }"); err != "" {
		t.Fatal(err)
	}
	if pc, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.169.1.2:53"))); err == nil {
		pc.Close()
		t.Error("the virtual turned back into plain UDP has no socket on its destination")
	}
	out, _ := run(t, s, "show ltm profile http3 http3")
	if !strings.Contains(out, "Ltm::HTTP3 Profile: http3") {
		t.Errorf("show ltm profile http3:\n%s", out)
	}

	for _, c := range []struct{ cmd, err string }{
		{"modify ltm virtual v_h3 profiles replace-all-with { udp { } http3 { } http { } clientssl { context clientside } }", "profile /Common/http3 (http3) requires a quic profile on the virtual server (/Common/v_h3)"},
		{"modify ltm virtual v_h3 profiles replace-all-with { udp { } quic { } http { } clientssl { context clientside } }", "profile /Common/quic (quic) requires an http3 profile on the virtual server (/Common/v_h3)"},
		{"modify ltm virtual v_h3 profiles replace-all-with { udp { } quic { } http3 { } http { } }", "profile /Common/quic (quic) requires a client-ssl profile on the virtual server (/Common/v_h3)"},
		{"modify ltm virtual v_h3 rules none profiles replace-all-with { udp { } quic { } http3 { } clientssl { context clientside } }", "profile /Common/http3 (http3) requires an http profile on the virtual server (/Common/v_h3)"},
		{"modify ltm virtual v_h3 profiles replace-all-with { udp { } quic { } http3 { } http { } http2 { } clientssl { context clientside } }", "cannot be used with profile /Common/http3 (http3)"},
		{"modify ltm virtual v_udp profiles replace-all-with { udp { } http { } }", "needs ip-protocol tcp"},
		{"modify ltm profile quic q_edge bidi-concurrent-streams-per-connection 0", "bidi-concurrent-streams-per-connection"},
	} {
		t.Run(c.cmd, func(t *testing.T) {
			if _, err := run(t, s, c.cmd); !strings.Contains(err, c.err) {
				t.Fatalf("refused with %q, want %q", err, c.err)
			}
		})
	}
	// A rule with an event HTTP/3 clients never raise is kept, with a
	// warning, as BIG-IP keeps it; CLIENTSSL_HANDSHAKE runs, unwarned.
	out, errs := run(t, s, "modify ltm virtual v_h3 rules { r_ssl r_data }")
	if want := "CLIENT_DATA event in rule (/Common/r_data) does not run for HTTP/3 clients"; !strings.Contains(out+errs, want) {
		t.Fatalf("modify with r_data: out %q err %q, want a warning %q", out, errs, want)
	}
	if strings.Contains(out+errs, "r_ssl") {
		t.Fatalf("modify with r_ssl warned of it: out %q err %q", out, errs)
	}
	if list, _ := run(t, s, "list ltm virtual v_h3 rules"); !strings.Contains(list, "r_ssl") || !strings.Contains(list, "r_data") {
		t.Fatalf("r_ssl or r_data not kept on v_h3:\n%s", list)
	}
}

// TestHTTP3ClientSSLEvents: an HTTP/3 client's QUIC handshake raises
// CLIENTSSL_CLIENTHELLO (after CLIENT_ACCEPTED, before the server
// answers: a reject there fails the handshake) and CLIENTSSL_HANDSHAKE
// (the cipher chosen), whose variables the client's requests see.
func TestHTTP3ClientSSLEvents(t *testing.T) {
	ln, err := net.Listen("tcp", "127.187.6.11:0")
	if err != nil {
		t.Skipf("loopback 127.187.6.11: %v", err)
	}
	member := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.Header.Get("X-Seen"))
	})}
	go member.Serve(ln)
	defer member.Close()
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { " + ln.Addr().String() + " }",
		`create ltm rule r_hs {
when CLIENT_ACCEPTED { set seen accepted }
when CLIENTSSL_CLIENTHELLO {
    append seen " hello=[SSL::sni name]/[SSL::extensions count]"
    if { [SSL::sni name] eq "refused.test" } { reject }
    if { [SSL::sni name] eq "dropped.test" } { drop }
}
when CLIENTSSL_HANDSHAKE {
    append seen " handshake=[SSL::cipher version]/[SSL::cipher name]/[SSL::sni name]/[string length [SSL::sessionid]]"
    if { [SSL::sni name] eq "late.test" } { reject }
}
when HTTP_REQUEST { HTTP::header insert X-Seen $seen }
}`,
		"create ltm virtual v_h3 destination 127.187.6.1:24443 ip-protocol udp pool p profiles replace-all-with { udp { } quic { } http3 { } http { } clientssl { context clientside } } rules { r_hs } source-address-translation { type automap }",
	} {
		if out, err := run(t, s, c); err != "" || strings.Contains(out, "does not run") {
			t.Fatalf("%s: %s %s", c, out, err)
		}
	}
	get := func(sni string) (string, error) {
		tr := &http3.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, ServerName: sni}}
		defer tr.Close()
		c := &http.Client{Transport: tr, Timeout: 5 * time.Second}
		resp, err := c.Get("https://127.187.6.1:24443/")
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	for _, tc := range []struct {
		sni, want string
		fails     bool
	}{
		{sni: "www.test", want: "accepted hello=www.test/1 handshake=TLSv1.3/TLS13-AES128-GCM-SHA256/www.test/0"},
		{sni: "refused.test", fails: true},
		{sni: "dropped.test", fails: true},
		{sni: "late.test", fails: true},
		{sni: "again.test", want: "accepted hello=again.test/1 handshake=TLSv1.3/TLS13-AES128-GCM-SHA256/again.test/0"},
	} {
		t.Run(tc.sni, func(t *testing.T) {
			got, err := get(tc.sni)
			switch {
			case tc.fails && err == nil:
				t.Fatalf("answered %q, want the connection ended", got)
			case !tc.fails && err != nil:
				t.Fatal(err)
			case got != tc.want:
				t.Fatalf("the member saw %q, want %q", got, tc.want)
			}
		})
	}
	// The ended clients were refused (at least three: a client whose
	// connection closed after its handshake may try once more).
	out, _ := run(t, s, "show ltm profile quic quic")
	m := regexp.MustCompile(`Refused +(\d+)\n`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("show ltm profile quic has no Refused:\n%s", out)
	}
	if n, _ := strconv.Atoi(m[1]); n < 3 {
		t.Errorf("show ltm profile quic, want 3 refused or more:\n%s", out)
	}
}
