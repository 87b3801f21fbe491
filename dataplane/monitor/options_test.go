package monitor

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"net/netip"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"
	"golang.org/x/sys/unix"
)

func TestBasicAuthSend(t *testing.T) {
	const auth = "Authorization: Basic dXNlcjpwYXNz\r\n" // user:pass
	for _, tc := range []struct{ name, send, user, want string }{
		{"header block", "GET / HTTP/1.1\r\nHost: a\r\n\r\n", "user", "GET / HTTP/1.1\r\nHost: a\r\n" + auth + "\r\n"},
		{"request line only", "GET /\r\n", "user", "GET /\r\n" + auth + "\r\n"},
		{"no line end", "GET /", "user", "GET /\r\n" + auth + "\r\n"},
		{"headers not ended", "GET / HTTP/1.0\r\nHost: a\r\n", "user", "GET / HTTP/1.0\r\n" + auth + "Host: a\r\n\r\n"},
		{"body kept after the header", "POST / HTTP/1.0\r\nContent-Length: 2\r\n\r\nhi", "user", "POST / HTTP/1.0\r\nContent-Length: 2\r\n" + auth + "\r\nhi"},
		{"the send string's own wins", "GET / HTTP/1.0\r\nauthorization: Bearer x\r\n\r\n", "user", "GET / HTTP/1.0\r\nauthorization: Bearer x\r\n\r\n"},
		{"no username", "GET / HTTP/1.0\r\n\r\n", "", "GET / HTTP/1.0\r\n\r\n"},
		{"no send string", "", "user", ""},
	} {
		if got := basicAuthSend(tc.send, tc.user, "pass"); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// authMember serves HTTP that demands Basic authorization as user:pass
// (401 without it), over TLS when cfg is set.
func authMember(t *testing.T, cfg *tls.Config) netip.AddrPort {
	t.Helper()
	ln, err := net.Listen("tcp", "127.2.1.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if cfg != nil {
		ln = tls.NewListener(ln, cfg)
	}
	srv := &http.Server{ReadHeaderTimeout: 2 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "monitor" || p != "s3cret" {
			w.Header().Set("WWW-Authenticate", `Basic realm="app"`)
			http.Error(w, "authorization required", http.StatusUnauthorized)
			return
		}
		w.Write([]byte("healthy"))
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return netip.MustParseAddrPort(ln.Addr().String())
}

func TestProbeHTTPBasicAuth(t *testing.T) {
	t.Parallel()
	plain := authMember(t, nil)
	secure := authMember(t, &tls.Config{Certificates: []tls.Certificate{selfSigned(t, "app.example", false)}})
	send := "GET /health HTTP/1.0\r\nHost: app.example\r\n\r\n"
	for _, tc := range []struct {
		name       string
		typ        Type
		send, user string
		pass       string
		up         bool
	}{
		{"http without credentials", HTTP, send, "", "", false},
		{"http with credentials", HTTP, send, "monitor", "s3cret", true},
		{"http wrong password", HTTP, send, "monitor", "guess", false},
		{"http send string's own header wins", HTTP, "GET / HTTP/1.0\r\nAuthorization: Basic bW9uaXRvcjpndWVzcw==\r\n\r\n", "monitor", "s3cret", false},
		{"https without credentials", HTTPS, send, "", "", false},
		{"https with credentials", HTTPS, send, "monitor", "s3cret", true},
		{"https wrong password", HTTPS, send, "monitor", "guess", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target := plain
			if tc.typ == HTTPS {
				target = secure
			}
			spec := &Spec{Type: tc.typ, Send: tc.send, Recv: regexp.MustCompile("200 OK"), Username: tc.user, Password: tc.pass}
			out, err := probe(t, spec, target, 3*time.Second)
			wantVerdict(t, out, err, tc.up, "", nil)
		})
	}
}

// tosOf is the TOS byte IP_TOS reads on c's socket, or the traffic class
// of an IPv6 one.
func tosOf(t *testing.T, c syscall.Conn) int {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var v int
	var gerr error
	rc.Control(func(fd uintptr) {
		v, gerr = unix.GetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_TOS)
		if sa, err := unix.Getsockname(int(fd)); err == nil {
			if _, v6 := sa.(*unix.SockaddrInet6); v6 {
				v, gerr = unix.GetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_TCLASS)
			}
		}
	})
	if gerr != nil {
		t.Fatal(gerr)
	}
	return v
}

// TestDialDSCP reads IP_TOS back from the sockets the probes open, TCP
// (dial, which every TCP probe uses) and UDP (dialer), and the IPv6
// traffic class from an IPv6 socket.
func TestDialDSCP(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.2.1.2:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	target := netip.MustParseAddrPort(ln.Addr().String())
	for _, dscp := range []uint8{0, 10, 46, 63} {
		ctx := withDSCP(context.Background(), dscp)
		c, err := dial(ctx, target)
		if err != nil {
			t.Fatal(err)
		}
		if got := tosOf(t, c); got != int(dscp)<<2 {
			t.Errorf("tcp dscp %d: IP_TOS %#x, want %#x", dscp, got, int(dscp)<<2)
		}
		c.Close()
		u, err := dialer(ctx).DialContext(ctx, "udp", target.String())
		if err != nil {
			t.Fatal(err)
		}
		if got := tosOf(t, u.(*net.UDPConn)); got != int(dscp)<<2 {
			t.Errorf("udp dscp %d: IP_TOS %#x, want %#x", dscp, got, int(dscp)<<2)
		}
		u.Close()
	}
	// The icmp probes' raw socket (root or CAP_NET_RAW).
	if pc, err := listenConfig(withDSCP(context.Background(), 46)).ListenPacket(context.Background(), "ip4:icmp", "127.2.1.2"); err == nil {
		if got := tosOf(t, pc.(*net.IPConn)); got != 46<<2 {
			t.Errorf("icmp: IP_TOS %#x, want %#x", got, 46<<2)
		}
		pc.Close()
	} else {
		t.Logf("icmp not checked: no raw socket here (%v)", err)
	}
	// An IPv6 socket that sends nothing: its traffic class.
	fd, err := unix.Socket(unix.AF_INET6, unix.SOCK_DGRAM, 0)
	if err != nil {
		t.Skipf("no IPv6 sockets here: %v", err)
	}
	f := os.NewFile(uintptr(fd), "udp6")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	if err := control(withDSCP(context.Background(), 46))("udp6", "", rc); err != nil {
		t.Fatal(err)
	}
	var tclass int
	rc.Control(func(fd uintptr) { tclass, _ = unix.GetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_TCLASS) })
	if tclass != 46<<2 {
		t.Errorf("IPv6 traffic class %#x, want %#x", tclass, 46<<2)
	}
}

// tosListener receives datagrams on 127.2.1.3 and reports the TOS byte
// each came with (IP_RECVTOS).
func tosListener(t *testing.T) (netip.AddrPort, <-chan int) {
	t.Helper()
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		c.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_RECVTOS, 1) })
		return serr
	}}
	pc, err := lc.ListenPacket(context.Background(), "udp", "127.2.1.3:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	tos := make(chan int, 64)
	go func() {
		uc := pc.(*net.UDPConn)
		buf, oob := make([]byte, 2048), make([]byte, 128)
		for range 1000 {
			_, oobn, _, _, err := uc.ReadMsgUDP(buf, oob)
			if err != nil {
				return
			}
			msgs, _ := unix.ParseSocketControlMessage(oob[:oobn])
			for _, m := range msgs {
				if m.Header.Level == unix.IPPROTO_IP && m.Header.Type == unix.IP_TOS && len(m.Data) > 0 {
					select {
					case tos <- int(m.Data[0]):
					default:
					}
				}
			}
		}
	}()
	return netip.MustParseAddrPort(pc.LocalAddr().String()), tos
}

// TestProbeDSCPOnTheWire sends each UDP probe type to a listener that
// reads the TOS byte of what it receives: the probe's own packets carry
// the monitor's ip-dscp.
func TestProbeDSCPOnTheWire(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		spec Spec
	}{
		{"udp", Spec{Type: UDP, Send: "ping", Recv: regexp.MustCompile("pong")}},
		{"dns", Spec{Type: DNS, DNS: &DNSQuery{Name: "www.example", Type: dns.TypeA}}},
		{"sip", Spec{Type: SIP}},
		{"radius", Spec{Type: RADIUS, RADIUS: &RADIUSCheck{Secret: "s", Username: "u"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, tos := tosListener(t)
			for _, dscp := range []uint8{46, 0} {
				spec := tc.spec
				spec.DSCP = dscp
				probe(t, &spec, addr, 300*time.Millisecond) // no answer comes: only what was sent counts
				select {
				case got := <-tos:
					if got != int(dscp)<<2 {
						t.Errorf("dscp %d: the packet came with TOS %#x, want %#x", dscp, got, int(dscp)<<2)
					}
				case <-time.After(3 * time.Second):
					t.Fatalf("dscp %d: no packet came", dscp)
				}
				for len(tos) > 0 { // resent packets of the same probe
					<-tos
				}
			}
		})
	}
}

func TestSpecCheckOptions(t *testing.T) {
	for _, tc := range []struct {
		spec Spec
		err  string
	}{
		{Spec{Type: TCP, DSCP: 63}, ""},
		{Spec{Type: TCP, DSCP: 64}, "ip-dscp 64 is out of range (0-63)"},
		{Spec{Type: HTTP, Adaptive: &Adaptive{Limit: -1}}, "must not be negative"},
		{Spec{Type: HTTPS, TLS: &TLS{Ciphers: "DEFAULT", Strict: true}}, ""},
		{Spec{Type: HTTPS, TLS: &TLS{Ciphers: "TLSv1", Strict: true}}, "compatibility disabled"},
	} {
		err := tc.spec.Check()
		if (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%+v: Check() = %v, want %q", tc.spec, err, tc.err)
		}
	}
	for _, pair := range [][2]*Spec{
		{{Type: HTTP, Username: "a"}, {Type: HTTP}},
		{{Type: HTTP, Username: "a", Password: "x"}, {Type: HTTP, Username: "a", Password: "y"}},
		{{Type: TCP, DSCP: 1}, {Type: TCP}},
		{{Type: TCP, Adaptive: &Adaptive{Limit: time.Second}}, {Type: TCP}},
		{{Type: TCP, Adaptive: &Adaptive{Limit: time.Second}}, {Type: TCP, Adaptive: &Adaptive{Limit: 2 * time.Second}}},
		{{Type: HTTPS, TLS: &TLS{Strict: true}}, {Type: HTTPS, TLS: &TLS{}}},
		{{Type: HTTPS, TLS: &TLS{Profile: &tls.Config{}, ProfileID: "a"}}, {Type: HTTPS, TLS: &TLS{Profile: &tls.Config{}, ProfileID: "b"}}},
	} {
		if pair[0].Equal(pair[1]) || !pair[0].Equal(pair[0]) {
			t.Errorf("%+v and %+v compared equal", pair[0], pair[1])
		}
	}
}

// TestProbeHTTPSCompatibilityAndProfile: compatibility disabled keeps to
// TLS 1.2 and later, so a member that speaks only TLS 1.1 is down; a
// server-ssl profile's configuration presents its client certificate.
func TestProbeHTTPSCompatibilityAndProfile(t *testing.T) {
	t.Parallel()
	srvCert := selfSigned(t, "app.example", false)
	old := startTLSAt(t, "127.2.1.5:0", &tls.Config{Certificates: []tls.Certificate{srvCert}, MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11}, "HTTP/1.0 200 OK\r\n\r\nhealthy")
	clientCert := selfSigned(t, "monitor.example", true)
	pool := x509.NewCertPool()
	pool.AddCert(clientCert.Leaf)
	mtls := startTLSAt(t, "127.2.1.5:0", &tls.Config{Certificates: []tls.Certificate{srvCert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}, "HTTP/1.0 200 OK\r\n\r\nhealthy")
	profile := &tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{clientCert}, MinVersion: tls.VersionTLS12}
	send := "GET / HTTP/1.0\r\nHost: app.example\r\n\r\n"
	for _, tc := range []struct {
		name string
		tls  *TLS
		srv  *tlsServer
		up   bool
	}{
		{"compatibility enabled reaches TLS 1.1", &TLS{Ciphers: "DEFAULT"}, old, true},
		{"compatibility disabled refuses TLS 1.1", &TLS{Ciphers: "DEFAULT", Strict: true}, old, false},
		{"ssl-profile's client certificate", &TLS{Profile: profile, ProfileID: "p"}, mtls, true},
		{"ssl-profile wins over cert", &TLS{Profile: &tls.Config{InsecureSkipVerify: true}, ProfileID: "q", Certificate: &clientCert}, mtls, false},
		{"cert without ssl-profile", &TLS{Ciphers: "DEFAULT", Certificate: &clientCert}, mtls, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := &Spec{Type: HTTPS, Send: send, Recv: regexp.MustCompile("healthy"), TLS: tc.tls}
			if err := spec.Check(); err != nil {
				t.Fatal(err)
			}
			out, err := probe(t, spec, tc.srv.addr, 3*time.Second)
			wantVerdict(t, out, err, tc.up, "", nil)
			if !tc.up && tc.srv == old && !strings.Contains(err.Error(), "SSL handshake failed") {
				t.Fatalf("error %v, want a failed handshake", err)
			}
		})
	}
}

func TestAdaptiveJudge(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	t0 := time.Unix(1_000_000, 0)
	for _, tc := range []struct {
		name    string
		a       Adaptive
		history []time.Duration // one probe a second before the judged one
		rt      time.Duration
		err     string
	}{
		{"within the limit, no history", Adaptive{Relative: true, Divergence: 25, Limit: ms(200), Timespan: time.Minute}, nil, ms(150), ""},
		{"over the limit", Adaptive{Relative: true, Divergence: 25, Limit: ms(200), Timespan: time.Minute}, nil, ms(1000), "exceeds the adaptive limit of 200 ms"},
		{"relative within", Adaptive{Relative: true, Divergence: 25, Limit: ms(5000), Timespan: time.Minute}, []time.Duration{ms(100), ms(100)}, ms(124), ""},
		{"relative beyond", Adaptive{Relative: true, Divergence: 25, Limit: ms(5000), Timespan: time.Minute}, []time.Duration{ms(100), ms(100)}, ms(130), "diverges from the mean of 100 ms by more than 25 %"},
		{"absolute within", Adaptive{Divergence: 50, Limit: ms(5000), Timespan: time.Minute}, []time.Duration{ms(180), ms(220)}, ms(249), ""},
		{"absolute beyond", Adaptive{Divergence: 50, Limit: ms(5000), Timespan: time.Minute}, []time.Duration{ms(180), ms(220)}, ms(251), "diverges from the mean of 200 ms by more than 50 ms"},
		{"failed probes left out of the mean", Adaptive{Relative: true, Divergence: 25, Limit: ms(5000), Timespan: time.Minute}, []time.Duration{ms(100), ms(1000), ms(1000)}, ms(130), "diverges from the mean of 100 ms"},
		{"a new pace once the old one left the timespan", Adaptive{Relative: true, Divergence: 25, Limit: ms(5000), Timespan: 2500 * time.Millisecond}, []time.Duration{ms(100), ms(1000), ms(1000)}, ms(1000), ""},
		{"under a millisecond never diverges", Adaptive{Relative: true, Divergence: 25, Limit: ms(200), Timespan: time.Minute}, []time.Duration{ms(0) + 100*time.Microsecond}, 900 * time.Microsecond, ""},
		{"samples older than the timespan left out", Adaptive{Divergence: 50, Limit: ms(5000), Timespan: 3 * time.Second}, []time.Duration{ms(900), ms(900), ms(900), ms(100), ms(100)}, ms(140), ""},
		{"limit 0 sets none", Adaptive{Divergence: 50, Timespan: time.Minute}, nil, time.Hour, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h history
			n := len(tc.history)
			for i, rt := range tc.history {
				h.judge(&tc.a, t0.Add(time.Duration(i-n)*time.Second), rt)
			}
			err := h.judge(&tc.a, t0, tc.rt)
			if (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("judge = %v, want %q", err, tc.err)
			}
			if passed := tc.err == ""; len(h.s) > n+1 || passed && h.s[len(h.s)-1].rt != tc.rt || !passed && len(h.s) > 0 && h.s[len(h.s)-1].at.Equal(t0) {
				t.Fatalf("samples %v after a probe that passed=%v", h.s, passed)
			}
		})
	}
	// The history stays bounded however many probes come.
	var h history
	a := &Adaptive{Divergence: 50, Timespan: time.Hour}
	for i := range maxSamples + 100 {
		h.judge(a, t0.Add(time.Duration(i)*time.Millisecond), ms(1))
	}
	if len(h.s) > maxSamples {
		t.Fatalf("%d samples kept, the bound is %d", len(h.s), maxSamples)
	}
}

// slowMember answers "HTTP/1.0 200 OK" after the delay it is set to.
func slowMember(t *testing.T, delay *atomic.Int64) netip.AddrPort {
	t.Helper()
	ln, err := net.Listen("tcp", "127.2.1.4:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				buf := make([]byte, 512)
				if _, err := c.Read(buf); err != nil {
					return
				}
				time.Sleep(time.Duration(delay.Load()))
				c.Write([]byte("HTTP/1.0 200 OK\r\n\r\nhealthy"))
			}()
		}
	}()
	return netip.MustParseAddrPort(ln.Addr().String())
}

// TestInstanceAdaptive: a member answering at once is up; delayed by a
// second, far past adaptive-limit 200 ms, or far from the mean of its
// quick answers, though well within the timeout, it goes down with the
// adaptive error; answering at once again, it comes back.
func TestInstanceAdaptive(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		a    Adaptive
		err  string
	}{
		{"limit", Adaptive{Relative: true, Divergence: 25, Limit: 200 * time.Millisecond, Timespan: time.Minute}, "exceeds the adaptive limit of 200 ms"},
		{"absolute divergence", Adaptive{Divergence: 300, Limit: 4 * time.Second, Timespan: time.Minute}, "by more than 300 ms"},
		{"relative divergence", Adaptive{Relative: true, Divergence: 50, Limit: 4 * time.Second, Timespan: time.Minute}, "by more than 50 %"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var delay atomic.Int64
			target := slowMember(t, &delay)
			states := make(chan State, 64)
			spec := &Spec{Type: HTTP, Send: "GET / HTTP/1.0\r\n\r\n", Recv: regexp.MustCompile("healthy"),
				Interval: 200 * time.Millisecond, Timeout: 2500 * time.Millisecond, Adaptive: &tc.a}
			in := Start(spec, target, func(s State) { states <- s })
			defer in.Stop()
			wait := func(want Status, errSub string) {
				t.Helper()
				deadline := time.After(15 * time.Second)
				for {
					select {
					case s := <-states:
						if s.Status == want && (errSub == "" || strings.Contains(s.LastError, errSub)) {
							return
						}
					case <-deadline:
						t.Fatalf("not %v (%q) in time; now %+v", want, errSub, in.State())
					}
				}
			}
			wait(Up, "")
			delay.Store(int64(time.Second))
			wait(Down, tc.err)
			delay.Store(0)
			wait(Up, "")
		})
	}
}
