package monitor

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"
)

func probe(t *testing.T, spec *Spec, target netip.AddrPort, d time.Duration) (Outcome, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return Probe(ctx, spec, target)
}

// wantSeen checks that a fake server saw each of wants, in order (""
// skipped), as its seen channel reports them.
func wantSeen(t *testing.T, seen <-chan string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if want == "" {
			continue
		}
		select {
		case got := <-seen:
			if got != want {
				t.Errorf("the server saw %q, want %q", got, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("the server did not see %q", want)
		}
	}
}

// wantVerdict checks one probe's outcome: up with no error, or down with
// an error that is errIs (when set) and says errSub (when set).
func wantVerdict(t *testing.T, out Outcome, err error, up bool, errSub string, errIs error) {
	t.Helper()
	switch {
	case up && (err != nil || !out.Up):
		t.Fatalf("Probe = %+v, %v; want up", out, err)
	case !up && (err == nil || out.Up):
		t.Fatalf("Probe = %+v, %v; want down", out, err)
	case errIs != nil && !errors.Is(err, errIs):
		t.Fatalf("error %v, want %v", err, errIs)
	case errSub != "" && !strings.Contains(err.Error(), errSub):
		t.Fatalf("error %v, want one saying %q", err, errSub)
	}
}

// selfSigned makes a certificate for name, made in the test.
func selfSigned(t *testing.T, name string, client bool) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	usage := x509.ExtKeyUsageServerAuth
	if client {
		usage = x509.ExtKeyUsageClientAuth
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{usage},
		KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
}

// tlsServer answers HTTP over TLS and records the server names it saw.
type tlsServer struct {
	addr netip.AddrPort
	mu   sync.Mutex
	snis []string
}

func (s *tlsServer) lastSNI() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.snis) == 0 {
		return "<none>"
	}
	return s.snis[len(s.snis)-1]
}

func startTLS(t *testing.T, cfg *tls.Config, reply string) *tlsServer {
	t.Helper()
	return startTLSAt(t, "127.10.3.1:0", cfg, reply)
}

// startTLSAt is startTLS listening on addr.
func startTLSAt(t *testing.T, addr string, cfg *tls.Config, reply string) *tlsServer {
	t.Helper()
	s := &tlsServer{}
	cfg = cfg.Clone()
	cfg.GetConfigForClient = func(h *tls.ClientHelloInfo) (*tls.Config, error) {
		s.mu.Lock()
		s.snis = append(s.snis, h.ServerName)
		s.mu.Unlock()
		return nil, nil
	}
	ln, err := tls.Listen("tcp", addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	s.addr = netip.MustParseAddrPort(ln.Addr().String())
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(2 * time.Second))
				buf := make([]byte, 512)
				if _, err := c.Read(buf); err != nil {
					return
				}
				c.Write([]byte(reply))
			}()
		}
	}()
	return s
}

func TestProbeHTTPS(t *testing.T) {
	t.Parallel()
	srvCert := selfSigned(t, "app.example", false)
	plain := startTLS(t, &tls.Config{Certificates: []tls.Certificate{srvCert}}, "HTTP/1.1 200 OK\r\n\r\nhealthy")
	onlyGCM := startTLS(t, &tls.Config{Certificates: []tls.Certificate{srvCert}, MaxVersion: tls.VersionTLS12,
		CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384}}, "HTTP/1.1 200 OK\r\n\r\nhealthy")
	clientCert := selfSigned(t, "monitor.example", true)
	pool := x509.NewCertPool()
	pool.AddCert(clientCert.Leaf)
	mtls := startTLS(t, &tls.Config{Certificates: []tls.Certificate{srvCert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}, "HTTP/1.1 200 OK\r\n\r\nhealthy")
	re := regexp.MustCompile
	send := "GET /health HTTP/1.1\r\nHost: app.example:8443\r\nConnection: close\r\n\r\n"
	for _, tc := range []struct {
		name string
		spec Spec
		srv  *tlsServer
		up   bool
		sni  string
	}{
		{"https default", Spec{Type: HTTPS, Send: send, Recv: re("healthy")}, plain, true, "app.example"},
		{"https recv mismatch", Spec{Type: HTTPS, Send: send, Recv: re("sick")}, plain, false, ""},
		{"http with ssl, server-name", Spec{Type: HTTP, Send: send, Recv: re("200 OK"), TLS: &TLS{ServerName: "other.example"}}, plain, true, "other.example"},
		{"no host header, no sni", Spec{Type: HTTPS, Send: "GET /\r\n"}, plain, true, ""},
		{"cipherlist the server has", Spec{Type: HTTPS, Send: send, TLS: &TLS{Ciphers: "ECDHE_ECDSA+AES256"}}, onlyGCM, true, ""},
		{"cipherlist the server lacks", Spec{Type: HTTPS, Send: send, TLS: &TLS{Ciphers: "ECDHE_ECDSA+AES128"}}, onlyGCM, false, ""},
		{"client certificate offered", Spec{Type: HTTPS, Send: send, Recv: re("healthy"), TLS: &TLS{Certificate: &clientCert}}, mtls, true, ""},
		{"client certificate missing", Spec{Type: HTTPS, Send: send, Recv: re("healthy")}, mtls, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := probe(t, &tc.spec, tc.srv.addr, 2*time.Second)
			if out.Up != tc.up {
				t.Fatalf("Probe = %+v (err %v), want up=%v", out, err, tc.up)
			}
			if !tc.up && err == nil {
				t.Fatal("a failed probe must say why")
			}
			if tc.up && tc.name == "no host header, no sni" {
				if got := tc.srv.lastSNI(); got != "" {
					t.Fatalf("SNI %q sent without a host header", got)
				}
			}
			if tc.sni != "" {
				if got := tc.srv.lastSNI(); got != tc.sni {
					t.Fatalf("SNI %q, want %q", got, tc.sni)
				}
			}
		})
	}
}

func TestProbeTCPRecvDisable(t *testing.T) {
	t.Parallel()
	maint := answer(t, "127.10.3.2:0", "STATUS maintenance\n")
	ok := answer(t, "127.10.3.2:0", "STATUS ok\n")
	re := regexp.MustCompile
	spec := &Spec{Type: TCP, Send: "status\n", Recv: re("STATUS ok"), RecvDisable: re("maintenance")}
	if out, err := probe(t, spec, maint, time.Second); !out.Up || !out.Disabled {
		t.Fatalf("recv-disable: %+v %v", out, err)
	}
	if out, err := probe(t, spec, ok, time.Second); !out.Up || out.Disabled {
		t.Fatalf("recv: %+v %v", out, err)
	}
	// An instance reports the disabled state.
	rec := newRecorder()
	in := Start(&Spec{Type: TCP, Send: "status\n", Recv: re("STATUS ok"), RecvDisable: re("maintenance"),
		Interval: 20 * time.Millisecond, Timeout: 200 * time.Millisecond}, maint, rec.on)
	defer in.Stop()
	if s := rec.wait(t, Up); !s.Disabled {
		t.Fatalf("instance state %+v, want up and disabled", s)
	}
}

// udpServer answers each datagram with reply(datagram); nil drops it.
func udpServer(t *testing.T, reply func([]byte) []byte) netip.AddrPort {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.10.3.3:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if r := reply(buf[:n]); r != nil {
				pc.WriteTo(r, from)
			}
		}
	}()
	return netip.MustParseAddrPort(pc.LocalAddr().String())
}

func closedUDP(t *testing.T) netip.AddrPort {
	pc, err := net.ListenPacket("udp", "127.10.3.3:0")
	if err != nil {
		t.Fatal(err)
	}
	a := netip.MustParseAddrPort(pc.LocalAddr().String())
	pc.Close()
	return a
}

func TestProbeUDP(t *testing.T) {
	t.Parallel()
	echo := udpServer(t, func(b []byte) []byte { return append([]byte("echo "), b...) })
	silent := udpServer(t, func([]byte) []byte { return nil })
	closed := closedUDP(t)
	re := regexp.MustCompile
	for _, tc := range []struct {
		name   string
		spec   Spec
		target netip.AddrPort
		up     bool
		err    error
	}{
		{"echo recv match", Spec{Type: UDP, Send: "ping", Recv: re("echo ping")}, echo, true, nil},
		{"echo recv mismatch", Spec{Type: UDP, Send: "ping", Recv: re("pong")}, echo, false, nil},
		{"echo reverse", Spec{Type: UDP, Send: "ping", Recv: re("echo"), Reverse: true}, echo, false, ErrReverseMatch},
		{"echo recv-disable", Spec{Type: UDP, Send: "ping", Recv: re("pong"), RecvDisable: re("ping")}, echo, true, nil},
		{"port unreachable", Spec{Type: UDP, Send: "ping"}, closed, false, ErrPortUnreachable},
		{"port unreachable with recv", Spec{Type: UDP, Send: "ping", Recv: re("x")}, closed, false, ErrPortUnreachable},
		{"silent, no recv", Spec{Type: UDP, Send: "ping"}, silent, true, nil},
		{"silent, recv", Spec{Type: UDP, Send: "ping", Recv: re("x")}, silent, false, ErrNoResponse},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := probe(t, &tc.spec, tc.target, 1500*time.Millisecond)
			if out.Up != tc.up {
				t.Fatalf("Probe = %+v (err %v), want up=%v", out, err, tc.up)
			}
			if tc.err != nil && !errors.Is(err, tc.err) {
				t.Fatalf("err %v, want %v", err, tc.err)
			}
			if tc.name == "echo recv-disable" && !out.Disabled {
				t.Fatal("recv-disable match not reported")
			}
		})
	}
}

func TestProbeDNS(t *testing.T) {
	t.Parallel()
	pc, err := net.ListenPacket("udp", "127.10.3.4:0")
	if err != nil {
		t.Fatal(err)
	}
	mux := dns.NewServeMux()
	mux.HandleFunc(".", func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		q := r.Question[0]
		switch q.Name {
		case "www.example.":
			if q.Qtype == dns.TypeA {
				rr, _ := dns.NewRR("www.example. 30 IN A 10.1.1.1")
				rr2, _ := dns.NewRR("www.example. 30 IN A 10.1.1.2")
				m.Answer = append(m.Answer, rr, rr2)
			}
		case "alias.example.":
			rr, _ := dns.NewRR("alias.example. 30 IN CNAME elsewhere.example.")
			m.Answer = append(m.Answer, rr)
		case "fail.example.":
			m.Rcode = dns.RcodeServerFailure
		default:
			m.Rcode = dns.RcodeNameError
		}
		w.WriteMsg(m)
	})
	srv := &dns.Server{PacketConn: pc, Handler: mux}
	go srv.ActivateAndServe()
	t.Cleanup(func() { srv.Shutdown() })
	target := netip.MustParseAddrPort(pc.LocalAddr().String())
	closed := closedUDP(t)
	for _, tc := range []struct {
		name   string
		q      DNSQuery
		rev    bool
		target netip.AddrPort
		up     bool
		errSub string
	}{
		{"a answer", DNSQuery{Name: "www.example"}, false, target, true, ""},
		{"recv address present", DNSQuery{Name: "www.example", Recv: netip.MustParseAddr("10.1.1.2")}, false, target, true, ""},
		{"recv address absent", DNSQuery{Name: "www.example", Recv: netip.MustParseAddr("10.9.9.9")}, false, target, false, "did not match"},
		{"reverse, address present", DNSQuery{Name: "www.example", Recv: netip.MustParseAddr("10.1.1.1")}, true, target, false, "reverse"},
		{"reverse, address absent", DNSQuery{Name: "www.example", Recv: netip.MustParseAddr("10.9.9.9")}, true, target, true, ""},
		{"aaaa wanted, none", DNSQuery{Name: "www.example", Type: dns.TypeAAAA}, false, target, false, "no AAAA record"},
		{"aaaa, answer anything", DNSQuery{Name: "www.example", Type: dns.TypeAAAA, AnswerContains: "anything"}, false, target, true, ""},
		{"cname only, query-type", DNSQuery{Name: "alias.example"}, false, target, false, "no A record"},
		{"cname only, any-type", DNSQuery{Name: "alias.example", AnswerContains: "any-type"}, false, target, true, ""},
		{"nxdomain, no-error", DNSQuery{Name: "nope.example", AnswerContains: "anything"}, false, target, false, "NXDOMAIN"},
		{"nxdomain, anything", DNSQuery{Name: "nope.example", AcceptRcode: "anything", AnswerContains: "anything"}, false, target, true, ""},
		{"servfail", DNSQuery{Name: "fail.example", AnswerContains: "anything"}, false, target, false, "SERVFAIL"},
		{"no server", DNSQuery{Name: "www.example"}, false, closed, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := &Spec{Type: DNS, DNS: &tc.q, Reverse: tc.rev}
			if err := spec.Check(); err != nil {
				t.Fatal(err)
			}
			out, err := probe(t, spec, tc.target, time.Second)
			if out.Up != tc.up {
				t.Fatalf("Probe = %+v (err %v), want up=%v", out, err, tc.up)
			}
			if tc.errSub != "" && (err == nil || !strings.Contains(err.Error(), tc.errSub)) {
				t.Fatalf("err %v, want it to say %q", err, tc.errSub)
			}
			if !tc.up && err == nil {
				t.Fatal("a failed probe must say why")
			}
		})
	}
}

func TestProbeICMPType(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("icmp needs root or CAP_NET_RAW")
	}
	for _, a := range []string{"127.10.3.9:0", "[::1]:0"} {
		out, err := probe(t, &Spec{Type: ICMP}, netip.MustParseAddrPort(a), time.Second)
		if err != nil || !out.Up {
			t.Fatalf("echo to %s: %+v %v", a, out, err)
		}
	}
}

// TestInstanceDNSDownAndBack runs a dns monitor as an instance against a
// server that stops answering and comes back.
func TestInstanceDNSDownAndBack(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	answering := true
	pc, err := net.ListenPacket("udp", "127.10.3.6:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		mu.Lock()
		on := answering
		mu.Unlock()
		m := new(dns.Msg)
		m.SetReply(r)
		if on {
			rr, _ := dns.NewRR("up.example. 5 IN A 10.6.0.1")
			m.Answer = append(m.Answer, rr)
		} else {
			m.Rcode = dns.RcodeRefused
		}
		w.WriteMsg(m)
	})}
	go srv.ActivateAndServe()
	defer srv.Shutdown()
	rec := newRecorder()
	in := Start(&Spec{Type: DNS, Interval: 20 * time.Millisecond, Timeout: 100 * time.Millisecond,
		DNS: &DNSQuery{Name: "up.example", Recv: netip.MustParseAddr("10.6.0.1")}},
		netip.MustParseAddrPort(pc.LocalAddr().String()), rec.on)
	defer in.Stop()
	rec.wait(t, Up)
	mu.Lock()
	answering = false
	mu.Unlock()
	if s := rec.wait(t, Down); !strings.Contains(s.LastError, "REFUSED") {
		t.Fatalf("down without the rcode: %+v", s)
	}
	mu.Lock()
	answering = true
	mu.Unlock()
	rec.wait(t, Up)
}

func writeScript(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mon.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestProbeExternal(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	dir := t.TempDir()
	record := filepath.Join(dir, "seen")
	up := writeScript(t, `printf '%s|' "$@" > `+record+`
printf '%s|%s|%s|%s|%s|%s\n' "$MON_TMPL_NAME" "$RUN_I" "$NODE_IP" "$NODE_PORT" "$URI" "$RECV" >> `+record+`
echo up
`)
	quiet := writeScript(t, "echo only-on-stderr >&2\nexit 0\n")
	lingerPid := filepath.Join(dir, "linger.pid")
	lingering := writeScript(t, "echo up\nsleep 30 &\necho $! > "+lingerPid+"\nexit 0\n")
	t.Cleanup(func() {
		var pid int
		if data, err := os.ReadFile(lingerPid); err == nil {
			if fmt.Sscan(string(data), &pid); pid > 0 {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	pidFile := filepath.Join(dir, "child.pid")
	slow := writeScript(t, "sleep 30 &\necho $! > "+pidFile+"\nwait\necho late\n")
	target := netip.MustParseAddrPort("127.10.3.5:8080")

	spec := &Spec{Type: External, Name: "/Common/my_ext", External: &ExternalRun{Path: up, RunName: "/Common/check_app",
		Args: `-v "two words" x\ y`, Env: map[string]string{"URI": "/health", "RECV": "Server is UP"}}}
	if err := spec.Check(); err != nil {
		t.Fatal(err)
	}
	out, err := probe(t, spec, target, 5*time.Second)
	if err != nil || !out.Up {
		t.Fatalf("printing script: %+v %v", out, err)
	}
	seen, _ := os.ReadFile(record)
	want := "::ffff:127.10.3.5|8080|-v|two words|x y|/Common/my_ext|/Common/check_app|::ffff:127.10.3.5|8080|/health|Server is UP\n"
	if string(seen) != want {
		t.Fatalf("script saw\n%q\nwant\n%q", seen, want)
	}
	if v6 := F5Address(netip.MustParseAddr("2001:db8::1")); v6 != "2001:db8::1" {
		t.Fatalf("IPv6 address passed as %s", v6)
	}

	out, err = probe(t, &Spec{Type: External, External: &ExternalRun{Path: quiet}}, target, 5*time.Second)
	if out.Up || err == nil {
		t.Fatalf("silent script: %+v %v", out, err)
	}
	out, err = probe(t, &Spec{Type: External, External: &ExternalRun{Path: lingering}}, target, 10*time.Second)
	if !out.Up || err != nil {
		t.Fatalf("script leaving a child on its stdout: %+v %v", out, err)
	}
	out, err = probe(t, &Spec{Type: External, External: &ExternalRun{Path: filepath.Join(dir, "missing")}}, target, 5*time.Second)
	if out.Up || err == nil || !strings.Contains(err.Error(), "Unable to run") {
		t.Fatalf("missing script: %+v %v", out, err)
	}

	start := time.Now()
	out, err = probe(t, &Spec{Type: External, External: &ExternalRun{Path: slow}}, target, 2*time.Second)
	if out.Up || !errors.Is(err, ErrNoResponse) {
		t.Fatalf("slow script: %+v %v", out, err)
	}
	if time.Since(start) > 20*time.Second {
		t.Fatal("the probe waited for the script's 30 s child")
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	fmt.Sscan(string(data), &pid)
	// The background child was in the script's process group: it is gone
	// (bounded wait: the kill is delivered asynchronously).
	for i := 0; i < 200; i++ {
		if syscall.Kill(pid, 0) != nil {
			return
		}
		if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && strings.Contains(string(st), ") Z ") {
			return // killed, waiting to be reaped by its parent's reaper
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("child %d of the timed-out script still runs", pid)
}

func TestPassive(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []Status
	on := func(s State) { mu.Lock(); seen = append(seen, s.Status); mu.Unlock() }
	clock := time.Unix(1000, 0)
	p := NewPassive(&Spec{Type: Inband, Inband: &InbandLimits{Failures: 3, FailureInterval: 10 * time.Second, RetryTime: 0}}, on)
	p.now = func() time.Time { return clock }
	defer p.Stop()
	// Failures spread wider than the interval do not mark down.
	for i := 0; i < 6; i++ {
		p.Failed()
		clock = clock.Add(6 * time.Second)
	}
	if s := p.State(); s.Status != Up {
		t.Fatalf("spread failures marked %v", s.Status)
	}
	p.Failed()
	clock = clock.Add(time.Second)
	p.Failed()
	if s := p.State(); s.Status != Down || s.LastError == "" {
		t.Fatalf("three failures within the interval: %+v", s)
	}
	p.Succeeded()
	if s := p.State(); s.Status != Up {
		t.Fatalf("success with retry-time 0: %+v", s)
	}
	mu.Lock()
	if fmt.Sprint(seen) != "[down up]" {
		t.Fatalf("reports %v", seen)
	}
	mu.Unlock()

	// retry-time brings it back by itself.
	ch := make(chan State, 4)
	q := NewPassive(&Spec{Type: Inband, Inband: &InbandLimits{Failures: 1, FailureInterval: time.Second, RetryTime: 30 * time.Millisecond}}, func(s State) { ch <- s })
	defer q.Stop()
	q.Failed()
	for _, want := range []Status{Down, Up} {
		select {
		case s := <-ch:
			if s.Status != want {
				t.Fatalf("got %v, want %v", s.Status, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no %v report", want)
		}
	}
	// failures 0 never marks down.
	z := NewPassive(&Spec{Type: Inband, Inband: &InbandLimits{Failures: 0}}, nil)
	for i := 0; i < 10; i++ {
		z.Failed()
	}
	if z.State().Status != Up {
		t.Fatal("failures 0 marked down")
	}
	if d := NewPassive(&Spec{Type: Inband}, nil).ResponseTime(); d != 10*time.Second {
		t.Fatalf("default response-time %v", d)
	}
}

func TestSpecCheckAndEqual(t *testing.T) {
	for _, tc := range []struct {
		spec Spec
		err  string
	}{
		{Spec{Type: DNS}, "qname"},
		{Spec{Type: DNS, DNS: &DNSQuery{Name: "x", Type: dns.TypeMX}}, "qtype MX"},
		{Spec{Type: DNS, DNS: &DNSQuery{Name: "x", AcceptRcode: "nxdomain"}}, "accept-rcode"},
		{Spec{Type: External}, "needs run"},
		{Spec{Type: External, External: &ExternalRun{Path: "/x", Args: `"open`}}, "unterminated"},
		{Spec{Type: HTTPS, TLS: &TLS{Ciphers: "BOGUS"}}, "cipherlist"},
		{Spec{Type: HTTPS, TLS: &TLS{Ciphers: "DHE"}}, "no suite"},
		{Spec{Type: Inband, Inband: &InbandLimits{Failures: 2}}, "failure-interval"},
		{Spec{Type: "oracle"}, "unsupported"},
		{Spec{Type: Scripted}, "needs filename"},
		{Spec{Type: Scripted, Script: &ScriptCheck{File: "/x.script", Text: "sned \"x\""}}, `script /x.script:1:1: unknown command "sned"`},
		{Spec{Type: MySQL, DB: &DBCheck{RecvRow: -1}}, "recv-row"},
		{Spec{Type: TCPEcho}, ""},
		{Spec{Type: SOAP}, "needs method"},
		{Spec{Type: SOAP, SOAP: &SOAPCheck{Method: "Get", ReturnType: "int", ReturnValue: "yes"}}, `return-value: "yes" is not an int`},
		{Spec{Type: RPC}, "needs program-number"},
		{Spec{Type: RPC, RPC: &RPCCheck{Program: 100003}}, ""},
		{Spec{Type: Diameter}, ""},
		{Spec{Type: Diameter, Diameter: &DiameterCheck{VSVendorID: 10415}}, "vendor-specific-vendor-id needs"},
		{Spec{Type: MQTT}, ""},
		{Spec{Type: MQTT, MQTT: &MQTTCheck{Version: "4.0"}}, "mqtt-version"},
		{Spec{Type: HTTPS}, ""},
		{Spec{Type: UDP}, ""},
	} {
		err := tc.spec.Check()
		if (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: Check() = %v, want %q", tc.spec.Type, err, tc.err)
		}
	}
	if q, err := ParseQType("aaaa"); err != nil || q != dns.TypeAAAA {
		t.Fatalf("aaaa: %v %v", q, err)
	}
	if _, err := ParseQType("mx"); err == nil {
		t.Fatal("qtype mx accepted")
	}
	a := &Spec{Type: External, External: &ExternalRun{Path: "/x", Env: map[string]string{"A": "1"}}}
	b := &Spec{Type: External, External: &ExternalRun{Path: "/x", Env: map[string]string{"A": "2"}}}
	if a.Equal(b) || !a.Equal(a) {
		t.Fatal("external env not compared")
	}
	c := &Spec{Type: DNS, DNS: &DNSQuery{Name: "a"}}
	d := &Spec{Type: DNS, DNS: &DNSQuery{Name: "a", Recv: netip.MustParseAddr("10.0.0.1")}}
	if c.Equal(d) {
		t.Fatal("dns recv not compared")
	}
	for _, pair := range [][2]*Spec{
		{{Type: SOAP, SOAP: &SOAPCheck{Method: "A"}}, {Type: SOAP, SOAP: &SOAPCheck{Method: "B"}}},
		{{Type: RPC, RPC: &RPCCheck{Program: 1}}, {Type: RPC, RPC: &RPCCheck{Program: 1, UDP: true}}},
		{{Type: Diameter, Diameter: &DiameterCheck{AuthAppIDs: []uint32{4}}}, {Type: Diameter, Diameter: &DiameterCheck{AuthAppIDs: []uint32{5}}}},
		{{Type: MQTT, MQTT: &MQTTCheck{ClientID: "a"}}, {Type: MQTT}},
	} {
		if pair[0].Equal(pair[1]) || !pair[0].Equal(pair[0]) {
			t.Errorf("%s settings not compared", pair[0].Type)
		}
	}
}

// TestResponseClock counts a member's silence longer than response-time
// once per unanswered stretch: by the timer while it lasts, or when the
// late answer comes; answers in time and waits cut short by the
// connection's end count nothing.
func TestResponseClock(t *testing.T) {
	t.Parallel()
	const rt = 40 * time.Millisecond
	newP := func() (*Passive, chan State) {
		ch := make(chan State, 8)
		return NewPassive(&Spec{Type: Inband, Inband: &InbandLimits{Failures: 1, FailureInterval: time.Minute, ResponseTime: rt}}, func(s State) { ch <- s }), ch
	}
	downWithin := func(ch chan State, d time.Duration) bool {
		select {
		case s := <-ch:
			return s.Status == Down
		case <-time.After(d):
			return false
		}
	}
	now := func() int64 { return time.Now().UnixNano() }

	// Answered in time, twice: nothing counted, the timer stopped.
	p, ch := newP()
	c := p.Clock()
	for i := 0; i < 2; i++ {
		c.Sent(now())
		c.Sent(now()) // more bytes of the same request: the clock runs on
		c.Answered(now())
	}
	if downWithin(ch, 4*rt) {
		t.Fatal("answers in time counted a failure")
	}
	c.Stop()
	p.Stop()

	// Silence: the timer counts it while the connection waits.
	p, ch = newP()
	c = p.Clock()
	c.Sent(now())
	if !downWithin(ch, 5*time.Second) {
		t.Fatal("a silent member was not counted by the timer")
	}
	c.Answered(now()) // the late answer: already counted
	c.Stop()
	p.Stop()

	// A late answer the timer has not seen yet counts when it comes.
	p, ch = newP()
	c = p.Clock()
	c.Sent(now() - int64(2*rt))
	c.Answered(now())
	if !downWithin(ch, time.Second) {
		t.Fatal("a late answer was not counted")
	}
	c.Stop()
	p.Stop()

	// The connection ends before response-time: nothing counted.
	p, ch = newP()
	c = p.Clock()
	c.Sent(now())
	c.Stop()
	if downWithin(ch, 4*rt) {
		t.Fatal("a wait cut short by the connection's end counted")
	}
	p.Stop()

	// No response-time, or failures 0: no clock.
	if NewPassive(&Spec{Type: Inband, Inband: &InbandLimits{Failures: 3, FailureInterval: time.Second}}, nil).Clock() != nil {
		t.Fatal("a clock without response-time")
	}
	if NewPassive(&Spec{Type: Inband, Inband: &InbandLimits{ResponseTime: time.Second}}, nil).Clock() != nil {
		t.Fatal("a clock with failures 0")
	}
	var nilClock *ResponseClock
	nilClock.Sent(1)
	nilClock.Answered(2)
	nilClock.Stop()
}
