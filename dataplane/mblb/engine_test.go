package mblb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
)

// Seed 000 §2.2: one synchronous client, two members, messages alternate.
func TestRoundRobinTwoMembers(t *testing.T) {
	s1 := startServer(t, "127.0.50.1:0", "S1 Response", wirePerRead)
	s2 := startServer(t, "127.0.50.2:0", "S2 Response", wirePerRead)
	pool := newTestPool(s1, s2)
	legs := newLegLog()
	vs := startVS(t, "127.0.50.10:0", baseConfig(pool, legs))
	c := dialVS(t, vs, "c1", wirePerRead)

	// Seed 000 §2.1: connected, nothing sent: no server side yet.
	time.Sleep(20 * time.Millisecond)
	if open, _, _, _ := legs.snapshot(); open != 0 {
		t.Fatalf("server legs before the first message: %d, want 0", open)
	}
	labels := map[string]int{}
	for i := 0; i < 10; i++ {
		req := reqName("c1", i)
		ans, err := c.call(req)
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		label, got := splitAnswer(ans)
		if got != req {
			t.Fatalf("message %d answered %q, want the answer to %q", i, ans, req)
		}
		labels[label]++
	}
	if labels["S1 Response"] != 5 || labels["S2 Response"] != 5 {
		t.Fatalf("distribution %v, want 5 and 5", labels)
	}
	if open, _, _, _ := legs.snapshot(); open != 2 {
		t.Fatalf("server legs %d, want one per member", open)
	}
	for _, m := range pool.members {
		// A request is counted once its write returned, which may be
		// after its answer came back: wait for the count to settle.
		waitFor(t, "member "+m.Name+" to count 5 requests", func() bool { return vs.e.MemberStats(m.ID).Requests == 5 })
		if st := vs.e.MemberStats(m.ID); st.Requests != 5 || st.Responses != 5 {
			t.Fatalf("member %s stats %+v, want 5 requests and responses", m.Name, st)
		}
	}
	var legList []*Leg
	vs.e.Legs(func(l *Leg) bool { legList = append(legList, l); return true })
	for _, l := range legList {
		if l.Owner != c.c.LocalAddr().String() || !l.Local.IsValid() || l.Remote != l.Member.Addr {
			t.Fatalf("leg %+v: want owner %s, a source and the member address", l, c.c.LocalAddr())
		}
	}
}

// Seed 000 §2.4 and the OneConnect chapter: three clients over two members
// make six server flows without OneConnect and no more than the pool's size
// with it.
func TestServerFlowsPerClientAndOneConnect(t *testing.T) {
	cases := []struct {
		name     string
		oc       *OneConnect
		wantMax  int
		wantLegs int
	}{
		{"per-client", nil, 6, 6},
		{"oneconnect", &OneConnect{MaxSize: 1}, 2, 0},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			base := fmt.Sprintf("127.0.51.%d", 10*i+1)
			s1 := startServer(t, base+":0", "S1 Response", wirePerRead)
			s2 := startServer(t, fmt.Sprintf("127.0.51.%d:0", 10*i+2), "S2 Response", wirePerRead)
			pool := newTestPool(s1, s2)
			legs := newLegLog()
			cfg := baseConfig(pool, legs)
			cfg.OneConnect = tc.oc
			vs := startVS(t, fmt.Sprintf("127.0.51.%d:0", 10*i+3), cfg)
			// The clients take turns, as the seed's testers clicked Send in
			// turn: with round robin each then reaches both members.
			var clients []*client
			for k := 1; k <= 3; k++ {
				clients = append(clients, dialVS(t, vs, fmt.Sprintf("C%d", k), wirePerRead))
			}
			for j := 0; j < 20; j++ {
				for _, c := range clients {
					req := reqName(c.name, j)
					ans, err := c.call(req)
					if err != nil {
						t.Fatal(err)
					}
					if _, got := splitAnswer(ans); got != req {
						t.Fatalf("%s got %q for %q", c.name, ans, req)
					}
				}
			}
			_, opened, maxOpen, _ := legs.snapshot()
			t.Logf("3 clients × 20 messages: %d server flows opened, %d at most at once; S1 %d, S2 %d messages",
				opened, maxOpen, s1.msgs.Load(), s2.msgs.Load())
			if maxOpen > tc.wantMax {
				t.Fatalf("%d server flows at once, want at most %d", maxOpen, tc.wantMax)
			}
			if tc.wantLegs > 0 && opened != tc.wantLegs {
				t.Fatalf("%d server flows opened, want %d", opened, tc.wantLegs)
			}
			if tc.oc == nil {
				legs.mu.Lock()
				for owner, n := range legs.owners {
					if n != 2 {
						t.Errorf("client %v has %d server flows, want 2", owner, n)
					}
				}
				legs.mu.Unlock()
				return
			}
			st, ok := vs.e.OneConnectStats()
			if !ok || st.New > 2 || st.TotalReuses < 50 || st.CurrentIdle > 2 || st.Maximum < 1 {
				t.Fatalf("one-connect stats %+v: want New <= 2, many reuses, idle <= 2", st)
			}
			if n := s1.acceptedConns() + s2.acceptedConns(); n > 2 {
				t.Fatalf("members accepted %d connections, want at most 2", n)
			}
		})
	}
}

// OneConnect: a thousand clients, each with a message, never take the
// members past the pool's size.
func TestOneConnectThousandClients(t *testing.T) {
	if testing.Short() {
		t.Skip("thousand sockets")
	}
	s1 := startServer(t, "127.0.52.1:0", "S1 Response", wireLength)
	s2 := startServer(t, "127.0.52.2:0", "S2 Response", wireLength)
	pool := newTestPool(s1, s2)
	legs := newLegLog()
	cfg := baseConfig(pool, legs)
	cfg.Request = lengthFraming
	cfg.OneConnect = &OneConnect{MaxSize: 4}
	vs := startVS(t, "127.0.52.10:0", cfg)
	const n = 1000
	clients := make([]*client, n)
	for i := range clients {
		clients[i] = dialVS(t, vs, fmt.Sprintf("c%d", i), wireLength)
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := reqName(c.name, 0)
			ans, err := c.call(req)
			if err == nil && !strings.HasSuffix(ans, "|"+req) {
				err = fmt.Errorf("%s got %q", c.name, ans)
			}
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := s1.acceptedConns() + s2.acceptedConns(); got > 8 {
		t.Fatalf("members accepted %d connections for %d clients, want at most 2×4", got, n)
	}
	st, _ := vs.e.OneConnectStats()
	if st.New > 8 || st.TotalReuses < n-8 {
		t.Fatalf("one-connect stats %+v", st)
	}
	es := vs.e.Stats()
	if es.Sessions != n || es.ServerConns > 8 {
		t.Fatalf("engine stats %+v: want %d sessions and at most 8 server connections", es, n)
	}
	t.Logf("%d clients: %d server connections (S1 %d, S2 %d requests), one-connect %+v",
		n, es.ServerConns, s1.msgs.Load(), s2.msgs.Load(), st)
}

// Seed 000 §2.5: a disabled member gets no new messages; enabled again it
// gets its share.
func TestDisableMember(t *testing.T) {
	for i, oc := range []*OneConnect{nil, {}} {
		t.Run(fmt.Sprintf("oneconnect=%v", oc != nil), func(t *testing.T) {
			s1 := startServer(t, fmt.Sprintf("127.0.53.%d:0", 10*i+1), "S1 Response", wirePerRead)
			s2 := startServer(t, fmt.Sprintf("127.0.53.%d:0", 10*i+2), "S2 Response", wirePerRead)
			pool := newTestPool(s1, s2)
			cfg := baseConfig(pool, nil)
			cfg.OneConnect = oc
			vs := startVS(t, fmt.Sprintf("127.0.53.%d:0", 10*i+3), cfg)
			c := dialVS(t, vs, "c1", wirePerRead)
			count := func(k int) map[string]int {
				got := map[string]int{}
				for j := 0; j < k; j++ {
					ans, err := c.call(reqName("c1", j))
					if err != nil {
						t.Fatal(err)
					}
					label, _ := splitAnswer(ans)
					got[label]++
				}
				return got
			}
			if got := count(4); got["S1 Response"] != 2 || got["S2 Response"] != 2 {
				t.Fatalf("before disabling: %v", got)
			}
			pool.setDisabled(2, true)
			if got := count(6); got["S1 Response"] != 6 {
				t.Fatalf("with S2 disabled: %v, want all on S1", got)
			}
			pool.setDisabled(2, false)
			if got := count(4); got["S1 Response"] != 2 || got["S2 Response"] != 2 {
				t.Fatalf("re-enabled: %v", got)
			}
		})
	}
}

// pipeline sends n requests keeping up to window unanswered and checks the
// answers come back in request order. It returns the labels seen.
func pipeline(c *client, n, window int, size int) (map[string]int, error) {
	sem := make(chan struct{}, window)
	sendErr := make(chan error, 1)
	go func() {
		for i := 0; i < n; i++ {
			sem <- struct{}{}
			req := []byte(reqName(c.name, i))
			if size > len(req) {
				req = append(req, bytes.Repeat([]byte{'.'}, size-len(req))...)
			}
			if err := c.send(req); err != nil {
				sendErr <- err
				return
			}
		}
		sendErr <- nil
	}()
	labels := map[string]int{}
	for i := 0; i < n; i++ {
		b, err := c.recv()
		if err != nil {
			return labels, fmt.Errorf("%s answer %d: %w", c.name, i, err)
		}
		label, got := splitAnswer(string(b))
		want := reqName(c.name, i)
		if !strings.HasPrefix(got, want) || (len(got) > len(want) && got[len(want)] != '.') {
			return labels, fmt.Errorf("%s answer %d is for %.40q, want %q", c.name, i, got, want)
		}
		if size > 0 && len(got) != size {
			return labels, fmt.Errorf("%s answer %d has %d bytes, want %d", c.name, i, len(got), size)
		}
		labels[label]++
		<-sem
	}
	return labels, <-sendErr
}

// Pipelined clients get answers in request order although the slow member
// answers long after the fast one.
func TestPipelinedOrderingSlowMember(t *testing.T) {
	for i, oc := range []*OneConnect{nil, {MaxSize: 2}} {
		t.Run(fmt.Sprintf("oneconnect=%v", oc != nil), func(t *testing.T) {
			s1 := startServer(t, fmt.Sprintf("127.0.54.%d:0", 10*i+1), "S1", wireLength)
			s2 := startServer(t, fmt.Sprintf("127.0.54.%d:0", 10*i+2), "S2", wireLength)
			s1.delay.Store(int64(3 * time.Millisecond))
			pool := newTestPool(s1, s2)
			cfg := baseConfig(pool, nil)
			cfg.Request = lengthFraming
			cfg.OneConnect = oc
			cfg.MaxInFlight = 8
			vs := startVS(t, fmt.Sprintf("127.0.54.%d:0", 10*i+3), cfg)
			var wg sync.WaitGroup
			errs := make(chan error, 4)
			for k := 0; k < 4; k++ {
				c := dialVS(t, vs, fmt.Sprintf("p%d", k), wireLength)
				wg.Add(1)
				go func() {
					defer wg.Done()
					labels, err := pipeline(c, 60, 16, 0)
					if err == nil && (labels["S1"] == 0 || labels["S2"] == 0) {
						err = fmt.Errorf("%s answers %v, want both members", c.name, labels)
					}
					if err != nil {
						errs <- err
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
		})
	}
}

// Seed 000 §2.6 done right: a member dies with requests in flight; they
// are sent again to the other member and no client notices.
func TestMemberKilledMidFlight(t *testing.T) {
	for i, oc := range []*OneConnect{nil, {MaxSize: 2}} {
		t.Run(fmt.Sprintf("oneconnect=%v", oc != nil), func(t *testing.T) {
			s1 := startServer(t, fmt.Sprintf("127.0.55.%d:0", 10*i+1), "S1", wireLength)
			s2 := startServer(t, fmt.Sprintf("127.0.55.%d:0", 10*i+2), "S2", wireLength)
			pool := newTestPool(s1, s2)
			legs := newLegLog()
			cfg := baseConfig(pool, legs)
			cfg.Request = lengthFraming
			cfg.OneConnect = oc
			vs := startVS(t, fmt.Sprintf("127.0.55.%d:0", 10*i+3), cfg)
			// S2 swallows what it gets, so its requests are unanswered when
			// it dies; the pool stops offering it once it is marked down.
			s2.mute.Store(true)
			var wg sync.WaitGroup
			errs := make(chan error, 3)
			for k := 0; k < 3; k++ {
				c := dialVS(t, vs, fmt.Sprintf("k%d", k), wireLength)
				wg.Add(1)
				go func() {
					defer wg.Done()
					if _, err := pipeline(c, 40, 8, 0); err != nil {
						errs <- err
					}
				}()
			}
			waitFor(t, "S2 to hold requests", func() bool { return s2.msgs.Load() >= 6 })
			pool.setDisabled(2, true) // what the monitor would do
			s2.kill()
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			_, _, _, failed := legs.snapshot()
			if failed[2] == 0 {
				t.Fatalf("S2's failure was not reported: %v", failed)
			}
			st := vs.e.Stats()
			if st.Retries == 0 || st.Resets != 0 {
				t.Fatalf("engine stats %+v: want retries and no client reset", st)
			}
			t.Logf("S2 killed holding %d requests: %d re-sent, %d server connections failed, %d clients reset",
				s2.msgs.Load(), st.Retries, st.ServerFailures, st.Resets)
		})
	}
}

// With retry off, an unanswered request costs the client its connection,
// never a silent second run.
func TestRetryDisabled(t *testing.T) {
	s1 := startServer(t, "127.0.55.101:0", "S1", wireLength)
	s2 := startServer(t, "127.0.55.102:0", "S2", wireLength)
	s1.mute.Store(true)
	pool := newTestPool(s1, s2)
	cfg := baseConfig(pool, nil)
	cfg.Request = lengthFraming
	cfg.DisableRetry = true
	vs := startVS(t, "127.0.55.103:0", cfg)
	c := dialVS(t, vs, "c", wireLength)
	if err := c.send([]byte("only-once")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "S1 to hold the request", func() bool { return s1.msgs.Load() == 1 })
	s1.kill()
	if _, err := c.recv(); !isReset(err) {
		t.Fatalf("client read %v, want a reset", err)
	}
	if n := s2.msgs.Load(); n != 0 {
		t.Fatalf("S2 received %d messages, want none", n)
	}
}

// A member that answers nothing within the response timeout is failed and
// its requests go elsewhere.
func TestResponseTimeout(t *testing.T) {
	s1 := startServer(t, "127.0.55.111:0", "S1", wireLength)
	s2 := startServer(t, "127.0.55.112:0", "S2", wireLength)
	s1.mute.Store(true)
	pool := newTestPool(s1, s2)
	legs := newLegLog()
	cfg := baseConfig(pool, legs)
	cfg.Request = lengthFraming
	cfg.ResponseTimeout = 100 * time.Millisecond
	vs := startVS(t, "127.0.55.113:0", cfg)
	c := dialVS(t, vs, "c", wireLength)
	ans, err := c.call("hello")
	if err != nil || ans != "S2|hello" {
		t.Fatalf("answer %q, %v: want S2|hello", ans, err)
	}
	if _, _, _, failed := legs.snapshot(); failed[1] != 1 {
		t.Fatalf("failures %v, want S1 reported once", failed)
	}
}

// 64 KiB and 1 MiB messages, far above one segment, with length framing.
func TestLargeMessages(t *testing.T) {
	for i, size := range []int{64 << 10, 1 << 20} {
		for j, oc := range []*OneConnect{nil, {MaxSize: 1}} {
			t.Run(fmt.Sprintf("%d/oneconnect=%v", size, oc != nil), func(t *testing.T) {
				n := 20*i + 4*j
				s1 := startServer(t, fmt.Sprintf("127.0.56.%d:0", n+1), "S1", wireLength)
				s2 := startServer(t, fmt.Sprintf("127.0.56.%d:0", n+2), "S2", wireLength)
				pool := newTestPool(s1, s2)
				cfg := baseConfig(pool, nil)
				cfg.Request = lengthFraming
				cfg.MaxMessageSize = size + 64
				cfg.OneConnect = oc
				vs := startVS(t, fmt.Sprintf("127.0.56.%d:0", n+3), cfg)
				var wg sync.WaitGroup
				errs := make(chan error, 2)
				for k := 0; k < 2; k++ {
					c := dialVS(t, vs, fmt.Sprintf("L%d", k), wireLength)
					wg.Add(1)
					go func() {
						defer wg.Done()
						if _, err := pipeline(c, 6, 3, size); err != nil {
							errs <- err
						}
					}()
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					t.Fatal(err)
				}
			})
		}
	}
}

// A message above the limit is logged and the client reset.
func TestOversizeMessageResets(t *testing.T) {
	cases := []struct {
		name    string
		framing Framing
		send    func(c *client) error
	}{
		{"length header", lengthFraming, func(c *client) error {
			var h [4]byte
			binary.BigEndian.PutUint32(h[:], 4096)
			_, err := c.c.Write(h[:])
			return err
		}},
		{"no delimiter", Framing{Mode: Delimiter, Delimiter: []byte("\r\n")}, func(c *client) error {
			_, err := c.c.Write(bytes.Repeat([]byte("x"), 8192))
			return err
		}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s1 := startServer(t, fmt.Sprintf("127.0.57.%d:0", 10*i+1), "S1", wireLength)
			pool := newTestPool(s1)
			legs := newLegLog()
			cfg := baseConfig(pool, legs)
			cfg.Request = tc.framing
			cfg.Response = lengthFraming
			cfg.MaxMessageSize = 1024
			vs := startVS(t, fmt.Sprintf("127.0.57.%d:0", 10*i+2), cfg)
			c := dialVS(t, vs, "big", wireLength)
			if err := tc.send(c); err != nil {
				t.Fatal(err)
			}
			if _, err := c.recv(); !isReset(err) {
				t.Fatalf("read %v, want a reset", err)
			}
			if st := vs.e.Stats(); st.Oversize != 1 {
				t.Fatalf("oversize count %d, want 1", st.Oversize)
			}
			legs.mu.Lock()
			logged := strings.Join(legs.logs, "\n")
			legs.mu.Unlock()
			if !strings.Contains(logged, "over 1024 bytes") {
				t.Fatalf("log %q does not name the limit", logged)
			}
			if s1.msgs.Load() != 0 {
				t.Fatal("the oversize message reached the member")
			}
		})
	}
}

// With no member left the client is reset, not left hanging.
func TestNoMemberLeftResets(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, s1, s2 *testServer, p *testPool)
	}{
		{"all disabled", func(t *testing.T, s1, s2 *testServer, p *testPool) {
			p.setDisabled(1, true)
			p.setDisabled(2, true)
		}},
		{"all dead", func(t *testing.T, s1, s2 *testServer, p *testPool) {
			s1.kill()
			s2.kill()
		}},
		{"dead after a request", func(t *testing.T, s1, s2 *testServer, p *testPool) {
			s1.mute.Store(true)
			s2.mute.Store(true)
		}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s1 := startServer(t, fmt.Sprintf("127.0.58.%d:0", 10*i+1), "S1", wireLength)
			s2 := startServer(t, fmt.Sprintf("127.0.58.%d:0", 10*i+2), "S2", wireLength)
			pool := newTestPool(s1, s2)
			cfg := baseConfig(pool, nil)
			cfg.Request = lengthFraming
			cfg.ResponseTimeout = 100 * time.Millisecond
			tc.setup(t, s1, s2, pool)
			vs := startVS(t, fmt.Sprintf("127.0.58.%d:0", 10*i+3), cfg)
			c := dialVS(t, vs, "c", wireLength)
			_, err := c.call("anyone?")
			if !isReset(err) {
				t.Fatalf("read %v, want a reset", err)
			}
		})
	}
}

// Seed 000 §2.3: an idle client is reset and its server flows closed; a new
// connection opens server flows again.
func TestIdleTimeout(t *testing.T) {
	s1 := startServer(t, "127.0.59.1:0", "S1 Response", wirePerRead)
	pool := newTestPool(s1)
	legs := newLegLog()
	cfg := baseConfig(pool, legs)
	cfg.IdleTimeout = 150 * time.Millisecond
	vs := startVS(t, "127.0.59.2:0", cfg)
	c := dialVS(t, vs, "c", wirePerRead)
	if _, err := c.call("x"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.recv(); !isReset(err) {
		t.Fatalf("idle client read %v, want a reset", err)
	}
	waitFor(t, "server flows to close", func() bool { open, _, _, _ := legs.snapshot(); return open == 0 })
	c2 := dialVS(t, vs, "c2", wirePerRead)
	if ans, err := c2.call("again"); err != nil || ans != "S1 Response|again" {
		t.Fatalf("after the timeout: %q, %v", ans, err)
	}
}

// A half-closing client gets every answer before the close.
func TestHalfCloseDrains(t *testing.T) {
	s1 := startServer(t, "127.0.59.11:0", "S1", wireLength)
	s1.delay.Store(int64(time.Millisecond))
	pool := newTestPool(s1)
	cfg := baseConfig(pool, nil)
	cfg.Request = lengthFraming
	vs := startVS(t, "127.0.59.12:0", cfg)
	c := dialVS(t, vs, "h", wireLength)
	for i := 0; i < 10; i++ {
		if err := c.send([]byte(reqName("h", i))); err != nil {
			t.Fatal(err)
		}
	}
	c.c.(interface{ CloseWrite() error }).CloseWrite()
	for i := 0; i < 10; i++ {
		b, err := c.recv()
		if err != nil || string(b) != "S1|"+reqName("h", i) {
			t.Fatalf("answer %d: %q, %v", i, b, err)
		}
	}
	if _, err := c.recv(); err == nil {
		t.Fatal("connection still open after the last answer")
	}
}

// seedRule is the seed's mblb-basic rule: every read is one message.
type seedRule struct{}

func (seedRule) ClientData(d *Data) error { d.Release(-1); d.Notify(); d.Collect(0); return nil }
func (seedRule) ServerData(d *Data) error { d.Release(-1); d.Notify(); d.Collect(0); return nil }

// lengthRule is the appendix's rule: read the length from the header and
// release each complete message, several per event when they are there;
// messages starting with "to-s1" go to S1 by `pool test_pool member`, and
// "reject" resets the client.
type lengthRule struct {
	s1 netip.AddrPort
}

func (r lengthRule) frame(d *Data, direct bool) error {
	for {
		p := d.Payload()
		if len(p) < 4 {
			d.Collect(4)
			return nil
		}
		n := 4 + int(binary.BigEndian.Uint32(p))
		if len(p) < n {
			d.Collect(n)
			return nil
		}
		if direct {
			body := p[4:n]
			switch {
			case bytes.HasPrefix(body, []byte("reject")):
				d.Reject()
				return nil
			case bytes.HasPrefix(body, []byte("to-s1")):
				d.Select(Target{Pool: "test_pool", Member: r.s1})
			default:
				d.Select(Target{})
			}
		}
		d.Release(n)
		d.Notify()
	}
}

func (r lengthRule) ClientData(d *Data) error {
	if d.Side() != ClientSide {
		return errors.New("TCP::notify request in server context")
	}
	return r.frame(d, true)
}

func (r lengthRule) ServerData(d *Data) error { return r.frame(d, false) }

// Rule-driven framing: the seed's rule for synchronous clients, and a
// length-reading rule that releases several messages in one event and
// directs some to one member.
func TestRuleFraming(t *testing.T) {
	t.Run("seed rule", func(t *testing.T) {
		s1 := startServer(t, "127.0.59.21:0", "S1 Response", wirePerRead)
		s2 := startServer(t, "127.0.59.22:0", "S2 Response", wirePerRead)
		pool := newTestPool(s1, s2)
		cfg := baseConfig(pool, nil)
		cfg.Request = Framing{Mode: Rule}
		vs := startVS(t, "127.0.59.23:0", cfg, func(net.Conn) ClientOptions { return ClientOptions{Rule: seedRule{}} })
		c := dialVS(t, vs, "r", wirePerRead)
		got := map[string]int{}
		for i := 0; i < 6; i++ {
			ans, err := c.call(reqName("r", i))
			if err != nil {
				t.Fatal(err)
			}
			label, _ := splitAnswer(ans)
			got[label]++
		}
		if got["S1 Response"] != 3 || got["S2 Response"] != 3 {
			t.Fatalf("distribution %v", got)
		}
	})
	t.Run("length rule", func(t *testing.T) {
		s1 := startServer(t, "127.0.59.31:0", "S1", wireLength)
		s2 := startServer(t, "127.0.59.32:0", "S2", wireLength)
		pool := newTestPool(s1, s2)
		cfg := baseConfig(pool, nil)
		cfg.Request = Framing{Mode: Rule}
		rule := lengthRule{s1: s1.addr()}
		vs := startVS(t, "127.0.59.33:0", cfg, func(net.Conn) ClientOptions { return ClientOptions{Rule: rule} })
		c := dialVS(t, vs, "L", wireLength)
		// Several messages in one write: one CLIENT_DATA releases them all.
		var batch []byte
		var h [4]byte
		for i := 0; i < 8; i++ {
			body := reqName("L", i)
			if i%2 == 0 {
				body = "to-s1-" + body
			}
			binary.BigEndian.PutUint32(h[:], uint32(len(body)))
			batch = append(batch, h[:]...)
			batch = append(batch, body...)
		}
		if _, err := c.c.Write(batch); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 8; i++ {
			b, err := c.recv()
			if err != nil {
				t.Fatalf("answer %d: %v", i, err)
			}
			label, req := splitAnswer(string(b))
			if !strings.HasSuffix(req, reqName("L", i)) {
				t.Fatalf("answer %d is %q", i, b)
			}
			if i%2 == 0 && label != "S1" {
				t.Fatalf("directed message %d went to %s", i, label)
			}
		}
		if err := c.send([]byte("reject me")); err != nil {
			t.Fatal(err)
		}
		if _, err := c.recv(); !isReset(err) {
			t.Fatalf("after reject: %v, want a reset", err)
		}
	})
}

func TestConfigErrors(t *testing.T) {
	p := newTestPool()
	cases := []struct {
		name string
		cfg  Config
	}{
		{"no pick", Config{Dial: dialMember}},
		{"bad length size", Config{Pick: p.Pick, Dial: dialMember, Request: Framing{Mode: Length, Length: LengthField{Size: 3}}}},
		{"empty delimiter", Config{Pick: p.Pick, Dial: dialMember, Request: Framing{Mode: Delimiter}}},
		{"rule one way", Config{Pick: p.Pick, Dial: dialMember, Request: Framing{Mode: Rule}, Response: lengthFraming}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if e, err := New(tc.cfg); err == nil {
				e.Close()
				t.Fatal("accepted")
			}
		})
	}
}

// A member taken out of rotation (forced offline) still answers what it
// already has; nothing new reaches it.
func TestForcedOfflineFinishesInFlight(t *testing.T) {
	s1 := startServer(t, "127.0.53.101:0", "S1", wireLength)
	s2 := startServer(t, "127.0.53.102:0", "S2", wireLength)
	s1.delay.Store(int64(20 * time.Millisecond))
	pool := newTestPool(s1, s2)
	cfg := baseConfig(pool, nil)
	cfg.Request = lengthFraming
	vs := startVS(t, "127.0.53.103:0", cfg)
	c := dialVS(t, vs, "f", wireLength)
	for i := 0; i < 4; i++ {
		if err := c.send([]byte(reqName("f", i))); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "S1 to hold a request", func() bool { return s1.msgs.Load() >= 1 })
	pool.setDisabled(1, true)
	before := s1.msgs.Load()
	for i := 4; i < 10; i++ {
		if err := c.send([]byte(reqName("f", i))); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 10; i++ {
		b, err := c.recv()
		if err != nil {
			t.Fatalf("answer %d: %v", i, err)
		}
		if _, req := splitAnswer(string(b)); req != reqName("f", i) {
			t.Fatalf("answer %d is %q", i, b)
		}
	}
	if got := s1.msgs.Load(); got > 2 || got < before {
		t.Fatalf("S1 received %d messages, want only the %d sent before it went offline", got, before)
	}
}

// The proxy ends a flow (`delete sys connection`, its own idle timer): the
// client is reset and the client's server flows close.
func TestSessionCloseFromProxy(t *testing.T) {
	s1 := startServer(t, "127.0.59.41:0", "S1", wireLength)
	pool := newTestPool(s1)
	legs := newLegLog()
	cfg := baseConfig(pool, legs)
	cfg.Request = lengthFraming
	vs := startVS(t, "127.0.59.42:0", cfg)
	c := dialVS(t, vs, "d", wireLength)
	if _, err := c.call("hi"); err != nil {
		t.Fatal(err)
	}
	// On a loop the session is filed after it started: it may have
	// answered already.
	waitFor(t, "the session to be filed", func() bool { vs.mu.Lock(); defer vs.mu.Unlock(); return len(vs.sessions) > 0 })
	vs.mu.Lock()
	s := vs.sessions[0]
	vs.mu.Unlock()
	// The response is counted once its write returns, which may be just
	// after the client has read it.
	waitFor(t, "the response to be counted", func() bool { return s.Stats().Responses == 1 })
	if st := s.Stats(); st.Requests != 1 || st.Responses != 1 || st.InFlight != 0 {
		t.Fatalf("session stats %+v", st)
	}
	s.Close(true)
	if _, err := c.recv(); !isReset(err) {
		t.Fatalf("client read %v, want a reset", err)
	}
	waitFor(t, "the server flow to close", func() bool { open, _, _, _ := legs.snapshot(); return open == 0 })
}

// OneConnect retires a connection after max-reuse and closes idle ones
// after the idle override.
func TestOneConnectReuseAndIdle(t *testing.T) {
	s1 := startServer(t, "127.0.52.101:0", "S1", wireLength)
	pool := newTestPool(s1)
	legs := newLegLog()
	cfg := baseConfig(pool, legs)
	cfg.Request = lengthFraming
	cfg.OneConnect = &OneConnect{MaxSize: 1, MaxReuse: 3, IdleTimeoutOverride: 100 * time.Millisecond}
	vs := startVS(t, "127.0.52.102:0", cfg)
	c := dialVS(t, vs, "r", wireLength)
	for i := 0; i < 7; i++ {
		if _, err := c.call(reqName("r", i)); err != nil {
			t.Fatal(err)
		}
	}
	// 7 messages: the first connection carries 1 + 3 reuses and retires,
	// the second carries 3 and waits idle.
	if st, _ := vs.e.OneConnectStats(); st.New != 2 || st.TotalReuses != 5 || st.CurrentIdle != 1 {
		t.Fatalf("stats %+v, want 2 new, 5 reuses, 1 idle", st)
	}
	waitFor(t, "the idle connection to close", func() bool {
		st, _ := vs.e.OneConnectStats()
		open, _, _, _ := legs.snapshot()
		return st.CurrentIdle == 0 && open == 0
	})
	if st, _ := vs.e.OneConnectStats(); st.Maximum != 1 {
		t.Fatalf("maximum idle %d, want 1", st.Maximum)
	}
	if ans, err := c.call("later"); err != nil || ans != "S1|later" {
		t.Fatalf("after the idle close: %q, %v", ans, err)
	}
}

// An exclusive pool with one connection serves a client that pipelines
// several messages in one write: each waits for the connection to be free.
func TestOneConnectExclusivePipelined(t *testing.T) {
	s1 := startServer(t, "127.0.52.111:0", "S1", wireLength)
	pool := newTestPool(s1)
	cfg := baseConfig(pool, nil)
	cfg.Request = lengthFraming
	cfg.OneConnect = &OneConnect{MaxSize: 1, Exclusive: true}
	vs := startVS(t, "127.0.52.112:0", cfg)
	c := dialVS(t, vs, "x", wireLength)
	if _, err := pipeline(c, 50, 10, 0); err != nil {
		t.Fatal(err)
	}
	if st, _ := vs.e.OneConnectStats(); st.New != 1 {
		t.Fatalf("stats %+v, want one connection", st)
	}
}

// A OneConnect client that stops reading must not hold up the others on
// the shared connection: responses the client's socket does not take at
// once are left to its own writer, and still arrive complete and in order.
func TestOneConnectSlowClientDoesNotStall(t *testing.T) {
	s1 := startServer(t, "127.0.54.41:0", "S1", wireLength)
	pool := newTestPool(s1)
	cfg := baseConfig(pool, nil)
	cfg.Request = lengthFraming
	cfg.OneConnect = &OneConnect{MaxSize: 1}
	vs := startVS(t, "127.0.54.43:0", cfg)
	const n, size = 64, 256 << 10
	slow := dialVS(t, vs, "slow", wireLength)
	sent := make(chan error, 1)
	go func() {
		for i := 0; i < n; i++ {
			req := []byte(reqName(slow.name, i))
			req = append(req, bytes.Repeat([]byte{'.'}, size-len(req))...)
			if err := slow.send(req); err != nil {
				sent <- err
				return
			}
		}
		sent <- nil
	}()
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	fast := dialVS(t, vs, "fast", wireLength)
	for i := 0; i < 20; i++ {
		want := reqName(fast.name, i)
		got, err := fast.call(want)
		if err != nil {
			t.Fatalf("fast client behind a slow one: %v", err)
		}
		if _, req := splitAnswer(got); req != want {
			t.Fatalf("fast client got %q, want %q", req, want)
		}
	}
	for i := 0; i < n; i++ {
		b, err := slow.recv()
		if err != nil {
			t.Fatalf("slow client answer %d: %v", i, err)
		}
		_, got := splitAnswer(string(b))
		if want := reqName(slow.name, i); !strings.HasPrefix(got, want+".") || len(got) != size {
			t.Fatalf("slow client answer %d is %.40q (%d bytes), want %q (%d bytes)", i, got, len(got), want, size)
		}
	}
}
