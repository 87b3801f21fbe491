package monitor

import (
	"bufio"
	"crypto/tls"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// sipAnswers are the status lines a fake SIP server sends to each request,
// in order ("" for silence); seen gets each request's first two lines.
type sipServer struct {
	answers []string
	seen    chan string
}

// serveSIPUDP answers each datagram on a loopback UDP socket.
func serveSIPUDP(t *testing.T, s *sipServer) netip.AddrPort {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 64<<10)
		for i := 0; i < 16; i++ {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			req := string(buf[:n])
			s.seen <- firstLines(req)
			for _, a := range s.answers {
				if a != "" {
					pc.WriteTo([]byte(a+"\r\nVia: x\r\nContent-Length: 0\r\n\r\n"), from)
				}
			}
		}
	}()
	return netip.MustParseAddrPort(pc.LocalAddr().String())
}

// serveSIPStream answers one request per connection on a loopback TCP
// listener, over TLS when cert is set.
func serveSIPStream(t *testing.T, s *sipServer, cert *tls.Certificate) netip.AddrPort {
	t.Helper()
	var ln net.Listener
	var err error
	if cert != nil {
		ln, err = tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{*cert}})
	} else {
		ln, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for i := 0; i < 16; i++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.SetDeadline(time.Now().Add(5 * time.Second))
			br := bufio.NewReader(c)
			var req strings.Builder
			for {
				l, err := br.ReadString('\n')
				if err != nil {
					break
				}
				req.WriteString(l)
				if l == "\r\n" {
					break
				}
			}
			s.seen <- firstLines(req.String())
			for _, a := range s.answers {
				if a != "" {
					// A body rides with the answer: the reader skips it.
					c.Write([]byte(a + "\r\nContent-Length: 4\r\n\r\nbody"))
				}
			}
			if len(s.answers) == 0 || s.answers[len(s.answers)-1] != "" {
				c.Close()
			}
		}
	}()
	return netip.MustParseAddrPort(ln.Addr().String())
}

func firstLines(req string) string {
	lines := strings.SplitN(req, "\r\n", 3)
	if len(lines) < 2 {
		return req
	}
	return lines[0] + " | " + lines[1]
}

func TestProbeSIP(t *testing.T) {
	cert := selfSigned(t, "sip.example", false)
	cases := []struct {
		name    string
		check   *SIPCheck
		answers []string
		tls     bool
		up      bool
		errSub  string
		errIs   error
		request string // the request line the server must see; "" any OPTIONS
		via     string // the Via transport
	}{
		{name: "udp OPTIONS answered 200", answers: []string{"SIP/2.0 200 OK"}, up: true, via: "SIP/2.0/UDP"},
		{name: "a provisional answer first", answers: []string{"SIP/2.0 100 Trying", "SIP/2.0 200 OK"}, up: true},
		{name: "any final answer without a filter", answers: []string{"SIP/2.0 405 Method Not Allowed"}, up: true},
		{name: "filter lists the code", check: &SIPCheck{Filter: []int{200, 404}}, answers: []string{"SIP/2.0 404 Not Found"}, up: true},
		{name: "filter does not list the code", check: &SIPCheck{Filter: []int{200}}, answers: []string{"SIP/2.0 503 Service Unavailable"},
			errSub: "Response status 503 is not one the monitor's filter lists"},
		{name: "filter-neg lists the code", check: &SIPCheck{FilterNeg: []int{503}}, answers: []string{"SIP/2.0 503 Service Unavailable"},
			errSub: "Response status 503 is one the monitor's filter-neg lists"},
		{name: "a request of the user's", check: &SIPCheck{Request: "INFO sip:health@example SIP/2.0", Headers: `X-Probe: 1\r\nUser-Agent: lb`},
			answers: []string{"SIP/2.0 200 OK"}, up: true, request: "INFO sip:health@example SIP/2.0"},
		{name: "not SIP", answers: []string{"HTTP/1.1 200 OK"}, errSub: `Unexpected response: "HTTP/1.1 200 OK"`},
		{name: "udp silence", answers: []string{""}, errIs: ErrNoResponse},
		{name: "tcp", check: &SIPCheck{Mode: "tcp"}, answers: []string{"SIP/2.0 100 Trying", "SIP/2.0 200 OK"}, up: true, via: "SIP/2.0/TCP"},
		{name: "tcp silence", check: &SIPCheck{Mode: "tcp"}, answers: []string{""}, errIs: ErrNoResponse},
		{name: "tls", check: &SIPCheck{Mode: "tls"}, tls: true, answers: []string{"SIP/2.0 200 OK"}, up: true, via: "SIP/2.0/TLS"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := &sipServer{answers: c.answers, seen: make(chan string, 16)}
			var target netip.AddrPort
			switch {
			case c.tls:
				target = serveSIPStream(t, s, &cert)
			case c.check != nil && c.check.Mode == "tcp":
				target = serveSIPStream(t, s, nil)
			default:
				target = serveSIPUDP(t, s)
			}
			o, err := probe(t, &Spec{Type: SIP, SIP: c.check}, target, 500*time.Millisecond)
			wantVerdict(t, o, err, c.up, c.errSub, c.errIs)
			select {
			case seen := <-s.seen:
				want := c.request
				if want == "" {
					want = "OPTIONS sip:" + target.String() + " SIP/2.0"
				}
				if !strings.HasPrefix(seen, want+" | Via: ") || c.via != "" && !strings.Contains(seen, "Via: "+c.via+" ") {
					t.Errorf("the server saw %q, want %q and a Via of %q", seen, want, c.via)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the server saw no request")
			}
		})
	}
}

func TestSIPCheck(t *testing.T) {
	for _, c := range []struct {
		check *SIPCheck
		err   string
	}{
		{nil, ""},
		{&SIPCheck{Mode: "sips"}, ""},
		{&SIPCheck{Mode: "sctp"}, `mode "sctp" is not udp, tcp, tls or sips`},
		{&SIPCheck{Request: "OPTIONS"}, `request "OPTIONS" is not METHOD URI SIP/2.0`},
		{&SIPCheck{Request: "OPTIONS sip:x SIP/2.0\r\nX: y"}, "request must be one line"},
	} {
		err := (&Spec{Type: SIP, SIP: c.check}).Check()
		if c.err == "" && err != nil || c.err != "" && (err == nil || err.Error() != c.err) {
			t.Errorf("%+v: %v, want %q", c.check, err, c.err)
		}
	}
	a, b := &Spec{Type: SIP, SIP: &SIPCheck{Filter: []int{200}}}, &Spec{Type: SIP, SIP: &SIPCheck{Filter: []int{200, 404}}}
	if a.Equal(b) || !a.Equal(a) {
		t.Error("Equal does not compare the filters")
	}
}
