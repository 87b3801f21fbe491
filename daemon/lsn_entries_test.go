package daemon

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestLSNPoolUDPSAPicked: on a UDP virtual, SA_PICKED runs when the pool
// gives the flow its translation: XLAT::src_addr and src_port there are
// what the member sees, XLAT::src_config the pool; a reject there ends
// the flow and gives the translation back.
func TestLSNPoolUDPSAPicked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e, _ := openWithPlane(t, dir)
	s := e.NewSession("admin").(*Session)
	lsnUDPPeer(t, "127.198.80.10:29053")
	runAll(t, s,
		"create ltm pool p members add { 127.198.80.10:29053 }",
		"create ltm lsn-pool u members add { 127.198.81.0/31 } translation-port-range 34000:34999",
		`create ltm rule picked { when SA_PICKED {
    if { [IP::client_addr] eq "127.198.82.91" } { reject ; return }
    log local0. "picked [XLAT::src_addr]:[XLAT::src_port] [XLAT::src_config] [XLAT::src_nat_valid_range]"
} }`,
		"create ltm virtual v destination 127.198.80.1:29053 ip-protocol udp pool p rules { picked } source-address-translation { type lsn pool u } profiles replace-all-with { udp { } }",
	)
	ask := func(from string) (netip.AddrPort, error) {
		c, err := net.DialUDP("udp", &net.UDPAddr{IP: net.ParseIP(from)}, &net.UDPAddr{IP: net.ParseIP("127.198.80.1"), Port: 29053})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.Write([]byte("hello"))
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		buf := make([]byte, 512)
		n, err := c.Read(buf)
		if err != nil {
			return netip.AddrPort{}, err
		}
		return netip.ParseAddrPort(string(buf[:n]))
	}
	var seen netip.AddrPort
	lsnEventually(t, "an answer through the udp virtual", func() string {
		var err error
		if seen, err = ask("127.198.82.90"); err != nil {
			return err.Error()
		}
		return ""
	})
	inPrefix(t, seen, "127.198.81.0/31", 34000, 34999)
	lsnEventually(t, "the SA_PICKED log line", func() string {
		b, _ := os.ReadFile(filepath.Join(dir, "log", "ltm"))
		if want := "Rule /Common/picked <SA_PICKED>: picked " + seen.String() + " LSN /Common/u {" + seen.Addr().String() + " 34000 34999}"; !strings.Contains(string(b), want) {
			return "missing " + want + " in:\n" + string(b)
		}
		return ""
	})
	if got, err := ask("127.198.82.91"); err == nil {
		t.Fatalf("rejected in SA_PICKED, yet the member saw %s", got)
	}
	lsnShowEventually(t, s, "the rejected flow's translation given back", "u", "Translations", "Active", "1")
}

// TestLSNPoolRuleEntries: a rule's reservation makes the connection
// take the endpoint it reserved; XLAT::listen and LSN::inbound-entry
// open translation endpoints that relay an outside connection to the
// subscriber's own server.
func TestLSNPoolRuleEntries(t *testing.T) {
	dir := t.TempDir()
	e, _ := openWithPlane(t, dir)
	s := e.NewSession("admin").(*Session)
	fromMember(t, "127.198.83.10:29000", fromHostPort, true)
	fromMember(t, "127.198.84.6:29100", fromHostPort, true) // the subscriber's own server
	runAll(t, s,
		"create ltm pool p members add { 127.198.83.10:29000 }",
		"create ltm lsn-pool a members add { 127.198.85.0/30 } translation-port-range 32000:32999",
		`create ltm rule entries {
when CLIENT_ACCEPTED {
    if { [IP::client_addr] eq "127.198.84.5" } {
        log local0. "reserved [XLAT::src_endpoint_reservation create -translation-strict 127.198.85.2 32222 [IP::client_addr] [TCP::client_port] TCP 60]"
    }
}
when SERVER_CONNECTED {
    if { [IP::client_addr] eq "127.198.84.6" } {
        log local0. "listen [XLAT::listen 60 { proto 6; server [IP::client_addr] 29100 }]"
        log local0. "inbound [LSN::inbound-entry create a 60 [IP::client_addr]:29100 127.198.85.3:32333 tcp]"
    }
} }`,
		"create ltm virtual v destination 127.198.83.1:29000 pool p rules { entries } source-address-translation { type lsn pool a } profiles replace-all-with { tcp { } }",
	)
	if got := mustLSNDial(t, "127.198.84.5:0", "127.198.83.1:29000").seen; got != netip.MustParseAddrPort("127.198.85.2:32222") {
		t.Errorf("the reserved endpoint: the member saw %s", got)
	}
	mustLSNDial(t, "127.198.84.6:0", "127.198.83.1:29000")
	var listen string
	lsnEventually(t, "the rule's log lines", func() string {
		b, _ := os.ReadFile(filepath.Join(dir, "log", "ltm"))
		m := regexp.MustCompile(`<SERVER_CONNECTED>: listen (127\.198\.85\.[0-3]),(3[0-9]{4}),0\.0\.0\.0,0,127\.198\.84\.6,29100,0,6`).FindStringSubmatch(string(b))
		if m == nil || !strings.Contains(string(b), "<SERVER_CONNECTED>: inbound 127.198.85.3:32333") ||
			!strings.Contains(string(b), "<CLIENT_ACCEPTED>: reserved 127.198.85.2 32222 /Common/a 60") {
			return string(b)
		}
		listen = m[1] + ":" + m[2]
		return ""
	})
	for _, at := range []string{listen, "127.198.85.3:32333"} {
		d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.198.86.9")}}
		c, err := d.Dial("tcp", at)
		if err != nil {
			t.Fatalf("%s: %v", at, err)
		}
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		line, err := bufio.NewReader(c).ReadString('\n')
		c.Close()
		if err != nil || !strings.HasPrefix(line, "127.198.86.9:") {
			t.Errorf("through %s the subscriber's server saw %q %v", at, line, err)
		}
	}
}

// TestLSNPoolHTTPSAPicked: on an http virtual, SA_PICKED runs for each
// member connection the pool translates: the member's peer address is
// the one XLAT::src_addr and src_port logged; a reject there resets the
// client.
func TestLSNPoolHTTPSAPicked(t *testing.T) {
	dir := t.TempDir()
	e, _ := openWithPlane(t, dir)
	s := e.NewSession("admin").(*Session)
	ln, err := net.Listen("tcp", "127.198.87.10:29080")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.RemoteAddr)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	runAll(t, s,
		"create ltm pool p members add { 127.198.87.10:29080 }",
		"create ltm lsn-pool h members add { 127.198.88.0/31 } translation-port-range 35000:35999",
		`create ltm rule picked { when SA_PICKED {
    if { [IP::client_addr] eq "127.198.89.91" } { reject ; return }
    log local0. "picked [XLAT::src_addr]:[XLAT::src_port] [XLAT::src_config]"
} }`,
		"create ltm virtual v destination 127.198.87.1:29080 pool p rules { picked } source-address-translation { type lsn pool h } profiles replace-all-with { tcp { } http { } }",
	)
	get := func(from string) (string, error) {
		c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true,
			DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}).DialContext}}
		r, err := c.Get("http://127.198.87.1:29080/")
		if err != nil {
			return "", err
		}
		defer r.Body.Close()
		b, err := io.ReadAll(r.Body)
		return string(b), err
	}
	var seen string
	lsnEventually(t, "an answer through the http virtual", func() string {
		var err error
		if seen, err = get("127.198.89.90"); err != nil {
			return err.Error()
		}
		return ""
	})
	ap, err := netip.ParseAddrPort(seen)
	if err != nil {
		t.Fatalf("the member saw %q", seen)
	}
	inPrefix(t, ap, "127.198.88.0/31", 35000, 35999)
	lsnEventually(t, "the SA_PICKED log line", func() string {
		b, _ := os.ReadFile(filepath.Join(dir, "log", "ltm"))
		if want := "Rule /Common/picked <SA_PICKED>: picked " + seen + " LSN /Common/h"; !strings.Contains(string(b), want) {
			return "missing " + want + " in:\n" + string(b)
		}
		return ""
	})
	if got, err := get("127.198.89.91"); err == nil {
		t.Fatalf("rejected in SA_PICKED, yet the member answered %q", got)
	}
}
