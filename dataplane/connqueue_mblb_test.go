package dataplane

import (
	"bufio"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
)

// The connection queue of HTTP virtuals: a member with connection-limit
// 1 that answers only when the test lets it, and clients whose requests
// wait in the pool's queue for its one connection.

// gatedMember is an HTTP member that reports each request's path as it
// arrives and answers it when released; it counts its open connections.
type gatedMember struct {
	arrived chan string
	release chan struct{}

	mu             sync.Mutex
	busy, maxBusy  int
	open, maxOpen  int
	opened, closed int
}

func startGatedMember(t *testing.T, addr string) *gatedMember {
	t.Helper()
	g := &gatedMember{arrived: make(chan string, 16), release: make(chan struct{}, 16)}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			g.mu.Lock()
			g.busy++
			g.maxBusy = max(g.maxBusy, g.busy)
			g.mu.Unlock()
			defer func() {
				g.mu.Lock()
				g.busy--
				g.mu.Unlock()
			}()
			g.arrived <- r.URL.Path
			select {
			case <-g.release:
			case <-time.After(10 * time.Second):
			}
			w.Write([]byte("S1 " + r.URL.Path))
		}),
		ConnState: func(_ net.Conn, st http.ConnState) {
			g.mu.Lock()
			defer g.mu.Unlock()
			switch st {
			case http.StateNew:
				g.open++
				g.opened++
				g.maxOpen = max(g.maxOpen, g.open)
			case http.StateClosed, http.StateHijacked:
				g.open--
				g.closed++
			}
		},
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return g
}

// next waits for the member's next request and checks its path.
func (g *gatedMember) next(t *testing.T, want string) {
	t.Helper()
	select {
	case got := <-g.arrived:
		if got != want {
			t.Fatalf("member got %s, want %s", got, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("member never got %s", want)
	}
}

// quiet checks that no request reached the member.
func (g *gatedMember) quiet(t *testing.T) {
	t.Helper()
	select {
	case got := <-g.arrived:
		t.Fatalf("member got %s while it was at its connection limit", got)
	default:
	}
}

func (g *gatedMember) counts() (maxBusy, open, opened, closed int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.maxBusy, g.open, g.opened, g.closed
}

// answer reads the response to the request the client sent.
func (h *httpRuleClient) answer(t *testing.T, want string) {
	t.Helper()
	h.c.SetDeadline(time.Now().Add(10 * time.Second))
	r, err := http.ReadResponse(h.br, nil)
	if err != nil {
		t.Fatalf("want %q: %v", want, err)
	}
	var b strings.Builder
	buf := make([]byte, 256)
	for {
		n, err := r.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	r.Body.Close()
	if r.StatusCode != 200 || b.String() != want {
		t.Fatalf("got %d %q, want %q", r.StatusCode, b.String(), want)
	}
}

// queuedHTTP starts an HTTP virtual over one gated member whose limit is
// one connection, with the pool queueing (depth and time limits as
// given).
func queuedHTTP(t *testing.T, vs, member string, oc bool, depth int, limit time.Duration) (*Plane, *gatedMember) {
	t.Helper()
	g := startGatedMember(t, member)
	p, _ := newPlane(t)
	cfg := l7Config(t, vs, oc, mblb.HTTPOptions{}, "", member)
	pool := cfg.Pools["/Common/pool"]
	pool.Members[0].ConnectionLimit = 1
	pool.QueueOnConnLimit, pool.QueueDepthLimit, pool.QueueTimeLimit = true, depth, limit
	mustApply(t, p, cfg)
	return p, g
}

// TestConnQueueHTTP: three clients' requests for a member that takes one
// connection: the first is served, the two after it wait in the pool's
// queue and reach the member in their order, one at a time, as the
// connection frees (with OneConnect, when it goes back idle; without,
// when its client closes).
func TestConnQueueHTTP(t *testing.T) {
	for _, c := range []struct {
		name       string
		oneConnect bool
		vs, member string
	}{
		{"oneconnect", true, "127.6.1.1:80", "127.6.1.2:80"},
		{"per client", false, "127.6.2.1:80", "127.6.2.2:80"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, g := queuedHTTP(t, c.vs, c.member, c.oneConnect, 0, 0)
			var clients []*httpRuleClient
			for i, path := range []string{"/a", "/b", "/c"} {
				h := dialHTTPVS(t, c.vs)
				h.c.Write([]byte(httpReq("x", path)))
				clients = append(clients, h)
				if i == 0 {
					g.next(t, "/a")
				} else {
					queueDepth(t, p, uint64(i))
				}
			}
			for i, path := range []string{"/a", "/b", "/c"} {
				if i > 0 {
					g.next(t, path)
				}
				g.quiet(t)
				g.release <- struct{}{}
				clients[i].answer(t, "S1 "+path)
				if !c.oneConnect {
					clients[i].c.Close() // its server connection closes with it
				}
			}
			s := queueStats(p)
			if s.Depth != 0 || s.Serviced != 2 || s.Dropped+s.Expired+s.Abandoned != 0 {
				t.Fatalf("stats %+v, want 2 serviced", s)
			}
			maxBusy, _, opened, _ := g.counts()
			if maxBusy != 1 {
				t.Fatalf("the member had %d requests at once, limit 1", maxBusy)
			}
			if c.oneConnect && opened != 1 {
				t.Fatalf("the member saw %d connections, want the one shared", opened)
			}
		})
	}
}

// TestConnQueueHTTPLimits: beyond queue-depth-limit a request's client
// is reset at once; past queue-time-limit a waiting one is; a client
// that closes while its request waits leaves the queue (Abandoned).
func TestConnQueueHTTPLimits(t *testing.T) {
	t.Run("depth", func(t *testing.T) {
		vs := "127.6.3.1:80"
		p, g := queuedHTTP(t, vs, "127.6.3.2:80", true, 1, 0)
		first := sendHTTPVS(t, vs, "/a")
		g.next(t, "/a")
		second := sendHTTPVS(t, vs, "/b")
		queueDepth(t, p, 1)
		third := sendHTTPVS(t, vs, "/c")
		if !third.closed() {
			t.Fatal("a request beyond the depth limit was not refused")
		}
		if s := queueStats(p); s.Dropped != 1 || s.Depth != 1 {
			t.Fatalf("stats %+v, want 1 dropped, 1 waiting", s)
		}
		g.release <- struct{}{}
		first.answer(t, "S1 /a")
		g.next(t, "/b")
		g.release <- struct{}{}
		second.answer(t, "S1 /b")
	})
	t.Run("time", func(t *testing.T) {
		vs := "127.6.4.1:80"
		p, g := queuedHTTP(t, vs, "127.6.4.2:80", true, 0, 100*time.Millisecond)
		first := sendHTTPVS(t, vs, "/a")
		g.next(t, "/a")
		second := sendHTTPVS(t, vs, "/b")
		if !second.closedWithin(5 * time.Second) {
			t.Fatal("a request past the time limit was not refused")
		}
		if s := queueStats(p); s.Expired != 1 || s.Depth != 0 {
			t.Fatalf("stats %+v, want 1 timed out", s)
		}
		g.release <- struct{}{}
		first.answer(t, "S1 /a")
		g.quiet(t)
	})
	t.Run("abandoned", func(t *testing.T) {
		vs := "127.6.5.1:80"
		p, g := queuedHTTP(t, vs, "127.6.5.2:80", true, 0, 0)
		first := sendHTTPVS(t, vs, "/a")
		g.next(t, "/a")
		second := sendHTTPVS(t, vs, "/b")
		queueDepth(t, p, 1)
		third := sendHTTPVS(t, vs, "/c")
		queueDepth(t, p, 2)
		second.c.(*net.TCPConn).SetLinger(0)
		second.c.Close()
		eventually(t, "abandoned", func() bool { return queueStats(p).Abandoned == 1 })
		g.release <- struct{}{}
		first.answer(t, "S1 /a")
		g.next(t, "/c")
		g.release <- struct{}{}
		third.answer(t, "S1 /c")
		if s := queueStats(p); s.Serviced != 1 || s.Depth != 0 {
			t.Fatalf("stats %+v, want 1 serviced", s)
		}
	})
}

// closedWithin reports whether the proxy closed the connection within d.
func (h *httpRuleClient) closedWithin(d time.Duration) bool {
	h.c.SetReadDeadline(time.Now().Add(d))
	_, err := h.br.ReadByte()
	return err != nil && !isTimeout(err)
}

// TestOneConnectLimitType: a member with connection-limit 1 holds an
// idle OneConnect connection of one source group (source-mask
// 255.255.255.255, no SNAT) when a client of another asks: none opens a
// second beside the idle one (only busy connections count), idle closes
// the idle one to make room, strict refuses the request.
func TestOneConnectLimitType(t *testing.T) {
	for i, c := range []struct {
		limitType string
		served    bool
		opened    int
		open      int
	}{
		{"none", true, 2, 2},
		{"idle", true, 2, 1},
		{"strict", false, 1, 1},
	} {
		t.Run(c.limitType, func(t *testing.T) {
			net3 := "127.6." + string(rune('7'+i)) + "."
			vs, member := net3+"1:80", net3+"2:80"
			g := startGatedMember(t, member)
			p, _ := newPlane(t)
			cfg := l7Config(t, vs, true, mblb.HTTPOptions{}, "", member)
			v := cfg.Virtuals["/Common/vs"]
			v.SNAT = SNAT{Type: SNATNone}
			v.MBLB.OneConnect.SourceMask = netip.MustParseAddr("255.255.255.255")
			v.MBLB.OneConnect.LimitType = c.limitType
			v.MBLB.OneConnect.Profile = "/Common/oneconnect"
			cfg.Pools["/Common/pool"].Members[0].ConnectionLimit = 1
			mustApply(t, p, cfg)

			from := func(src string) *httpRuleClient {
				d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 2 * time.Second}
				conn, err := d.Dial("tcp", vs)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { conn.Close() })
				return &httpRuleClient{c: conn, br: bufio.NewReader(conn)}
			}
			x := from(net3 + "11")
			x.c.Write([]byte(httpReq("x", "/x")))
			g.next(t, "/x")
			g.release <- struct{}{}
			x.answer(t, "S1 /x")
			eventually(t, "idle connection", func() bool {
				st, _ := p.OneConnectStats("/Common/oneconnect")
				return st.CurrentIdle == 1
			})

			y := from(net3 + "12")
			y.c.Write([]byte(httpReq("x", "/y")))
			if !c.served {
				if !y.closedWithin(5 * time.Second) {
					t.Fatal("strict: the request was not refused")
				}
				g.quiet(t)
			} else {
				g.next(t, "/y")
				g.release <- struct{}{}
				y.answer(t, "S1 /y")
			}
			eventually(t, "member's connections", func() bool {
				_, open, opened, _ := g.counts()
				return open == c.open && opened == c.opened
			})
		})
	}
}

// TestLBQueueCommand: LB::queue reads the pool's queue: in LB_QUEUED on
// an L4 virtual, and in HTTP_REQUEST on an HTTP one, where a rule
// answers 503 itself once a request waits.
func TestLBQueueCommand(t *testing.T) {
	t.Run("l4", func(t *testing.T) {
		vs, member := "127.6.12.1:8000", "127.6.12.2:9000"
		startServer(t, member, "S1")
		p, _ := newPlane(t)
		cfg := basic(vs, member)
		pool := cfg.Pools["/Common/pool"]
		pool.Members[0].ConnectionLimit = 1
		pool.QueueOnConnLimit, pool.QueueDepthLimit, pool.QueueTimeLimit = true, 3, 5*time.Second
		var lg *ruleLog
		cfg.Virtuals["/Common/vs"].Rules, lg = compileRules(t,
			`when LB_QUEUED { log local0. "on [LB::queue on] depth [LB::queue depth] of [LB::queue limit depth] time [LB::queue limit time]" }`)
		mustApply(t, p, cfg)
		first := dialVS(t, vs)
		first.mustAsk("one")
		second := dialVS(t, vs)
		second.send("two")
		queueDepth(t, p, 1)
		eventually(t, "LB_QUEUED log", func() bool {
			return strings.Contains(lg.String(), "on 1 depth 1 of 3 time 5000")
		})
		first.c.Close()
		if got, err := second.answer(); got != "S1 Response" {
			t.Fatalf("second client: %q, %v", got, err)
		}
	})
	t.Run("http", func(t *testing.T) {
		vs, member := "127.6.13.1:80", "127.6.13.2:80"
		g := startGatedMember(t, member)
		p, _ := newPlane(t)
		cfg := l7Config(t, vs, true, mblb.HTTPOptions{}, "", member)
		var lg *ruleLog
		cfg.Virtuals["/Common/vs"].Rules, lg = compileRules(t,
			`when HTTP_REQUEST { if {[LB::queue depth] > 0} { HTTP::respond 503 content "busy [LB::queue depth]" } }
when LB_QUEUED { log local0. "queued [IP::client_addr] depth [LB::queue depth]" }`)
		pool := cfg.Pools["/Common/pool"]
		pool.Members[0].ConnectionLimit = 1
		pool.QueueOnConnLimit = true
		mustApply(t, p, cfg)
		first := sendHTTPVS(t, vs, "/a")
		g.next(t, "/a")
		second := sendHTTPVS(t, vs, "/b")
		queueDepth(t, p, 1)
		third := dialHTTPVS(t, vs)
		r, body, err := third.do(httpReq("x", "/c"))
		if err != nil || r.StatusCode != 503 || body != "busy 1" {
			t.Fatalf("third client: %v %q %v, want 503 busy 1", r, body, err)
		}
		g.release <- struct{}{}
		first.answer(t, "S1 /a")
		g.next(t, "/b")
		g.release <- struct{}{}
		second.answer(t, "S1 /b")
		if n := strings.Count(lg.String(), "queued 127.0.0.1 depth 1"); n != 1 {
			t.Fatalf("LB_QUEUED logged %d times, want once:\n%s", n, lg)
		}
	})
	t.Run("http LB_QUEUED reject", func(t *testing.T) {
		vs, member := "127.6.16.1:80", "127.6.16.2:80"
		g := startGatedMember(t, member)
		p, _ := newPlane(t)
		cfg := l7Config(t, vs, true, mblb.HTTPOptions{}, `when LB_QUEUED { reject }`, member)
		pool := cfg.Pools["/Common/pool"]
		pool.Members[0].ConnectionLimit = 1
		pool.QueueOnConnLimit = true
		mustApply(t, p, cfg)
		first := sendHTTPVS(t, vs, "/a")
		g.next(t, "/a")
		second := sendHTTPVS(t, vs, "/b")
		if !second.closedWithin(5 * time.Second) {
			t.Fatal("LB_QUEUED's reject did not end the client")
		}
		if s := queueStats(p); s.Depth != 0 || s.Abandoned != 1 {
			t.Fatalf("stats %+v, want the request gone (abandoned)", s)
		}
		g.release <- struct{}{}
		first.answer(t, "S1 /a")
		g.quiet(t)
	})
}

// startGatedLines is a line member for message virtuals: it reports each
// line as it arrives and answers "S1 <line>" when released.
func startGatedLines(t *testing.T, addr string) *gatedMember {
	t.Helper()
	g := &gatedMember{arrived: make(chan string, 16), release: make(chan struct{}, 16)}
	ln, err := net.Listen("tcp", addr)
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
			g.mu.Lock()
			g.opened++
			g.mu.Unlock()
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					line, err := br.ReadString('\n')
					if err != nil {
						return
					}
					line = strings.TrimSpace(line)
					g.arrived <- "/" + line
					select {
					case <-g.release:
					case <-time.After(10 * time.Second):
					}
					c.Write([]byte("S1 " + line + "\n"))
				}
			}()
		}
	}()
	return g
}

// TestConnQueueMessages: the queue on a message virtual whose rule
// frames the messages, with OneConnect (its sessions run on goroutines):
// three clients' messages reach the one-connection member in their
// order, over one connection.
func TestConnQueueMessages(t *testing.T) {
	vs, member := "127.6.15.1:9000", "127.6.15.2:9000"
	g := startGatedLines(t, member)
	p, _ := newPlane(t)
	cfg := mblbConfig(vs, &MBLB{Request: mblb.Framing{Mode: mblb.Rule}, OneConnect: &OneConnect{MaxSize: 4}}, member)
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, seedRule)
	pool := cfg.Pools["/Common/pool"]
	pool.Members[0].ConnectionLimit = 1
	pool.QueueOnConnLimit = true
	mustApply(t, p, cfg)
	var clients []*client
	for i, msg := range []string{"a", "b", "c"} {
		c := dialVS(t, vs)
		c.send(msg)
		clients = append(clients, c)
		if i == 0 {
			g.next(t, "/a")
		} else {
			queueDepth(t, p, uint64(i))
		}
	}
	for i, msg := range []string{"a", "b", "c"} {
		if i > 0 {
			g.next(t, "/"+msg)
		}
		g.quiet(t)
		g.release <- struct{}{}
		if got, err := clients[i].answer(); got != "S1 "+msg {
			t.Fatalf("client %s: %q, %v", msg, got, err)
		}
	}
	if s := queueStats(p); s.Depth != 0 || s.Serviced != 2 {
		t.Fatalf("stats %+v, want 2 serviced", s)
	}
	if _, _, opened, _ := g.counts(); opened != 1 {
		t.Fatalf("the member saw %d connections, want the one shared", opened)
	}
}

// sendHTTPVS opens a client of vs and sends it one request for path.
func sendHTTPVS(t *testing.T, vs, path string) *httpRuleClient {
	t.Helper()
	c := dialHTTPVS(t, vs)
	c.c.Write([]byte(httpReq("x", path)))
	return c
}
