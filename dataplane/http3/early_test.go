package http3

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/http3/earlyclient"
	"github.com/quic-go/quic-go/http3"
)

// startEarly serves HTTP/3 on 127.206.0.1 with data-0rtt early in front
// of an HTTP/1.1 member that answers each request with its method and
// the Early-Data field it got.
func startEarly(t *testing.T, early Early) (*Listener, *Config, *tls.Config) {
	t.Helper()
	backend, err := net.Listen("tcp", "127.206.0.1:0")
	if err != nil {
		t.Skipf("loopback 127.206.0.1: %v", err)
	}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path == "/too-early" && r.Header.Get("Early-Data") == "1" {
			w.WriteHeader(http.StatusTooEarly) // RFC 8470: this member takes no early request here
		}
		io.WriteString(w, r.Method+" "+string(body)+" early="+r.Header.Get("Early-Data"))
	})}
	go hs.Serve(backend)
	t.Cleanup(func() { hs.Close() })
	cert, pool := selfSigned(t)
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.ParseIP("127.206.0.1")})
	if err != nil {
		t.Fatal(err)
	}
	d := &dialer{addr: backend.Addr().String()}
	cfg := &Config{Early: early, Stats: new(Stats), QUICStats: new(QUICStats)}
	tc := &tls.Config{Certificates: []tls.Certificate{cert}}
	l, err := Listen(pc, func() *tls.Config { return tc }, cfg, func(c *Conn) (Client, bool) { return d, true })
	if err != nil {
		t.Fatal(err)
	}
	go l.Serve()
	t.Cleanup(l.Close)
	return l, cfg, &tls.Config{RootCAs: pool, ServerName: "h3.test", NextProtos: []string{http3.NextProtoH3}}
}

func earlyRequests(t *testing.T, url string) []*http.Request {
	get, _ := http.NewRequest("GET", url, nil)
	post, _ := http.NewRequest("POST", url, nil)
	return []*http.Request{post, get}
}

func TestZeroRTT(t *testing.T) {
	tests := []struct {
		name      string
		early     Early
		used      bool
		get, post string // the member's view; "" when no answer is expected
		forwarded int64  // EarlyForwarded
	}{
		// GET goes on at once with Early-Data: 1; POST waits for the
		// handshake and goes without it.
		{"with anti-replay", EarlyAntiReplay, true, "GET  early=1", "POST  early=", 1},
		{"no anti-replay", EarlyNoAntiReplay, true, "GET  early=1", "POST  early=", 1},
		// disabled: the ticket offers no early data; the requests go
		// after the handshake.
		{"disabled", EarlyOff, false, "GET  early=", "POST  early=", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, cfg, ctls := startEarly(t, tc.early)
			url := "https://" + l.Addr().String() + "/"
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			res, err := earlyclient.Do(ctx, l.Addr().String(), ctls, earlyRequests(t, url), 2*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if res.Used0RTT != tc.used {
				t.Errorf("0-RTT used %v, want %v", res.Used0RTT, tc.used)
			}
			for i, want := range []string{tc.post, tc.get} {
				a := res.Answers[i]
				if a.Err != nil || a.Resp.StatusCode != 200 || string(a.Body) != want {
					t.Errorf("answer %d: %v %q, want 200 %q", i, a.Err, a.Body, want)
				}
			}
			if n := cfg.Stats.EarlyForwarded.Load(); n != tc.forwarded {
				t.Errorf("EarlyForwarded %d, want %d", n, tc.forwarded)
			}
			if n := cfg.Stats.EarlyHeld.Load(); n != tc.forwarded {
				t.Errorf("EarlyHeld %d, want %d", n, tc.forwarded)
			}
			want0 := int64(0)
			if tc.used {
				want0 = 1
			}
			if n := cfg.QUICStats.ZeroRTT.Load(); n != want0 {
				t.Errorf("ZeroRTT connections %d, want %d", n, want0)
			}
		})
	}
}

// TestZeroRTTTooEarly: a member's 425 to an early request reaches the
// client (RFC 8470 section 5.2: the client, which sent it early, retries
// after the handshake); a HEAD goes early as a GET does.
func TestZeroRTTTooEarly(t *testing.T) {
	l, cfg, ctls := startEarly(t, EarlyAntiReplay)
	base := "https://" + l.Addr().String()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	get, _ := http.NewRequest("GET", base+"/too-early", nil)
	head, _ := http.NewRequest("HEAD", base+"/", nil)
	res, err := earlyclient.Do(ctx, l.Addr().String(), ctls, []*http.Request{get, head}, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if a := res.Answers[0]; a.Err != nil || a.Resp.StatusCode != http.StatusTooEarly {
		t.Errorf("GET /too-early: %v %v, want 425", a.Err, a.Resp)
	}
	if a := res.Answers[1]; a.Err != nil || a.Resp.StatusCode != 200 {
		t.Errorf("HEAD: %v %v, want 200", a.Err, a.Resp)
	}
	if n := cfg.Stats.EarlyForwarded.Load(); n != 2 {
		t.Errorf("EarlyForwarded %d, want 2", n)
	}
}

// stickyCache keeps the first ticket it is given: the client offers it
// again and again, as a replay would. Each Get is a fresh copy (the
// client marks the state it resumes with).
type stickyCache struct {
	mu            sync.Mutex
	ticket, state []byte
}

func (c *stickyCache) Get(string) (*tls.ClientSessionState, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ticket == nil {
		return nil, false
	}
	ss, err := tls.ParseSessionState(c.state)
	if err != nil {
		return nil, false
	}
	cs, err := tls.NewResumptionState(c.ticket, ss)
	return cs, err == nil
}

func (c *stickyCache) Put(_ string, cs *tls.ClientSessionState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ticket != nil || cs == nil {
		return
	}
	ticket, ss, err := cs.ResumptionState()
	if err != nil || ss == nil {
		return
	}
	if b, err := ss.Bytes(); err == nil {
		c.ticket, c.state = ticket, b
	}
}

func TestZeroRTTReplay(t *testing.T) {
	tests := []struct {
		name     string
		early    Early
		second   bool // the second 0-RTT on the same ticket taken
		replayed int64
	}{
		{"with anti-replay", EarlyAntiReplay, false, 1},
		{"no anti-replay", EarlyNoAntiReplay, true, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, cfg, ctls := startEarly(t, tc.early)
			ctls.ClientSessionCache = &stickyCache{}
			url := "https://" + l.Addr().String() + "/"
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			get, _ := http.NewRequest("GET", url, nil)
			res, err := earlyclient.Do(ctx, l.Addr().String(), ctls, []*http.Request{get}, 2*time.Second)
			if err != nil || !res.Used0RTT {
				t.Fatalf("first 0-RTT: %v, used %v", err, res != nil && res.Used0RTT)
			}
			// The same ticket again: Do's priming connection resumes
			// with it, and its 0-RTT offers it once more.
			get, _ = http.NewRequest("GET", url, nil)
			res, err = earlyclient.Do(ctx, l.Addr().String(), ctls, []*http.Request{get}, 2*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if res.Used0RTT != tc.second {
				t.Errorf("0-RTT on the ticket again: %v, want %v", res.Used0RTT, tc.second)
			}
			// Taken: answered. Refused: the request sent in 0-RTT is
			// lost, and the client is told so (a browser asks again).
			if a := res.Answers[0]; tc.second && (a.Err != nil || a.Resp.StatusCode != 200) ||
				!tc.second && (a.Err == nil || !strings.Contains(a.Err.Error(), "0-RTT rejected")) {
				t.Errorf("answer: %v", a.Err)
			}
			if n := cfg.QUICStats.Replayed.Load(); n < tc.replayed || tc.replayed == 0 && n != 0 {
				t.Errorf("Replayed %d, want %d", n, tc.replayed)
			}
		})
	}
}

func TestTicketLog(t *testing.T) {
	var l ticketLog
	t0 := time.Unix(1e9, 0)
	steps := []struct {
		id    string
		at    time.Time
		first bool
	}{
		{"a", t0, true},
		{"a", t0.Add(time.Hour), false},
		{"b", t0.Add(time.Hour), true},
		{"a", t0.Add(ticketLogLife + 2*time.Hour), true}, // expired: a ticket this old no longer resumes
		{"b", t0.Add(ticketLogLife + 2*time.Hour), true},
	}
	for i, s := range steps {
		if got := l.first([]byte(s.id), s.at); got != s.first {
			t.Errorf("step %d (%s): first %v, want %v", i, s.id, got, s.first)
		}
	}
	if len(l.seen) != 2 || len(l.order) != 2 {
		t.Errorf("log holds %d/%d, want 2", len(l.seen), len(l.order))
	}
}
