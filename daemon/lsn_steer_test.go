package daemon

import (
	"io"
	"net"
	"net/http"
	"net/netip"
	"testing"
	"time"
)

// lsnUDPAsk sends datagrams from src to vip until one is answered (the
// lsnUDPPeer member answers with the address and port it saw), bounded.
func lsnUDPAsk(t *testing.T, src, vip string) netip.AddrPort {
	t.Helper()
	c, err := net.DialUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort(src)), net.UDPAddrFromAddrPort(netip.MustParseAddrPort(vip)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var seen netip.AddrPort
	lsnEventually(t, "an answer from "+src+" through "+vip, func() string {
		c.Write([]byte("hello"))
		c.SetReadDeadline(time.Now().Add(time.Second))
		buf := make([]byte, 512)
		n, err := c.Read(buf)
		if err != nil {
			return err.Error()
		}
		if seen, err = netip.ParseAddrPort(string(buf[:n])); err != nil {
			return err.Error()
		}
		return ""
	})
	return seen
}

// TestLSNSteeringUDP: on a UDP virtual, LSN::pool translates a flow's
// server side through another pool (on a virtual without an lsn pool
// too), LSN::address and LSN::port ask for a translation, LSN::disable
// leaves the client's address, and XLAT::src_config follows them.
func TestLSNSteeringUDP(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	lsnUDPPeer(t, "127.203.0.180:29053")
	runAll(t, s,
		"create ltm pool p members add { 127.203.0.180:29053 }",
		"create ltm lsn-pool a members add { 127.203.40.0/30 } translation-port-range 34000:34999",
		"create ltm lsn-pool b members add { 127.203.41.0/30 } translation-port-range 34000:34999",
		`create ltm rule r { when CLIENT_ACCEPTED {
    switch [IP::client_addr] {
        127.203.1.80 { LSN::pool b }
        127.203.1.81 { LSN::address 127.203.40.3 ; LSN::port 34444 }
        127.203.1.82 { LSN::disable }
    }
    log local0. "config [IP::client_addr] [XLAT::src_config]"
} }`,
		"create ltm virtual v destination 127.203.0.70:29053 ip-protocol udp pool p rules { r } source-address-translation { type lsn pool a } profiles replace-all-with { udp { } }",
		"create ltm virtual w destination 127.203.0.71:29053 ip-protocol udp pool p rules { r } profiles replace-all-with { udp { } }",
	)
	inPrefix(t, lsnUDPAsk(t, "127.203.1.79:0", "127.203.0.70:29053"), "127.203.40.0/30", 34000, 34999)
	inPrefix(t, lsnUDPAsk(t, "127.203.1.80:0", "127.203.0.70:29053"), "127.203.41.0/30", 34000, 34999)
	if got := lsnUDPAsk(t, "127.203.1.81:0", "127.203.0.70:29053"); got != netip.MustParseAddrPort("127.203.40.3:34444") {
		t.Errorf("LSN::address and LSN::port: %s", got)
	}
	if got := lsnUDPAsk(t, "127.203.1.82:0", "127.203.0.70:29053").Addr(); got != netip.MustParseAddr("127.203.1.82") {
		t.Errorf("LSN::disable: %s", got)
	}
	// A virtual without an lsn pool: LSN::pool translates, the others
	// leave the client's address.
	inPrefix(t, lsnUDPAsk(t, "127.203.1.80:0", "127.203.0.71:29053"), "127.203.41.0/30", 34000, 34999)
	if got := lsnUDPAsk(t, "127.203.1.79:0", "127.203.0.71:29053").Addr(); got != netip.MustParseAddr("127.203.1.79") {
		t.Errorf("no lsn pool: %s", got)
	}
	out, _ := run(t, s, "show ltm lsn-pool b")
	if showField(out, "Translations", "Active") != "2" {
		t.Errorf("pool b's translations:\n%s", out)
	}
}

// TestLSNSteeringHTTP: on an http virtual, the client's LSN:: commands
// choose the translation of the member connections opened for it:
// LSN::pool another pool (on a virtual without an lsn pool too),
// LSN::address and LSN::port a translation, LSN::disable none; the
// choice may depend on the request (HTTP_REQUEST).
func TestLSNSteeringHTTP(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	ln, err := net.Listen("tcp", "127.203.0.190:29080")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.RemoteAddr)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	runAll(t, s,
		"create ltm pool p members add { 127.203.0.190:29080 }",
		"create ltm lsn-pool a members add { 127.203.50.0/30 } translation-port-range 35000:35999",
		"create ltm lsn-pool b members add { 127.203.51.0/30 } translation-port-range 35000:35999",
		`create ltm rule r { when HTTP_REQUEST {
    switch [HTTP::path] {
        /b { LSN::pool b }
        /fixed { LSN::address 127.203.50.3 ; LSN::port 35555 }
        /off { LSN::disable }
    }
} }`,
		"create ltm virtual v destination 127.203.0.80:29080 pool p rules { r } source-address-translation { type lsn pool a } profiles replace-all-with { tcp { } http { } }",
		"create ltm virtual w destination 127.203.0.81:29080 pool p rules { r } profiles replace-all-with { tcp { } http { } }",
	)
	get := func(from, url string) netip.AddrPort {
		t.Helper()
		c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true,
			DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}).DialContext}}
		var seen netip.AddrPort
		lsnEventually(t, "an answer to "+url, func() string {
			r, err := c.Get(url)
			if err != nil {
				return err.Error()
			}
			defer r.Body.Close()
			b, err := io.ReadAll(r.Body)
			if err != nil {
				return err.Error()
			}
			if seen, err = netip.ParseAddrPort(string(b)); err != nil {
				return err.Error()
			}
			return ""
		})
		return seen
	}
	inPrefix(t, get("127.203.2.1", "http://127.203.0.80:29080/"), "127.203.50.0/30", 35000, 35999)
	inPrefix(t, get("127.203.2.2", "http://127.203.0.80:29080/b"), "127.203.51.0/30", 35000, 35999)
	if got := get("127.203.2.3", "http://127.203.0.80:29080/fixed"); got != netip.MustParseAddrPort("127.203.50.3:35555") {
		t.Errorf("LSN::address and LSN::port: %s", got)
	}
	if got := get("127.203.2.4", "http://127.203.0.80:29080/off").Addr(); got != netip.MustParseAddr("127.203.2.4") {
		t.Errorf("LSN::disable: %s", got)
	}
	inPrefix(t, get("127.203.2.5", "http://127.203.0.81:29080/b"), "127.203.51.0/30", 35000, 35999)
	if got := get("127.203.2.6", "http://127.203.0.81:29080/").Addr(); got != netip.MustParseAddr("127.203.2.6") {
		t.Errorf("no lsn pool: %s", got)
	}
}
