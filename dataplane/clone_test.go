package dataplane

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/streamfilter"
)

// cloneCollector is a clone pool's member: it keeps what each connection
// brought, in the order the connections ended.
type cloneCollector struct {
	mu   sync.Mutex
	got  []string
	ends chan struct{}
}

func startCloneCollector(t *testing.T, addr string) *cloneCollector {
	t.Helper()
	cc := &cloneCollector{ends: make(chan struct{}, 64)}
	serveConns(t, addr, func(c net.Conn) {
		c.SetReadDeadline(time.Now().Add(20 * time.Second))
		b, _ := io.ReadAll(c)
		cc.mu.Lock()
		cc.got = append(cc.got, string(b))
		cc.mu.Unlock()
		cc.ends <- struct{}{}
	})
	return cc
}

// wait returns what the first n connections brought, once they ended.
func (cc *cloneCollector) wait(t *testing.T, n int) []string {
	t.Helper()
	for i := 0; i < n; i++ {
		select {
		case <-cc.ends:
		case <-time.After(10 * time.Second):
			t.Fatalf("clone member: %d of %d connections ended", i, n)
		}
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return append([]string(nil), cc.got...)
}

// withClone adds a clone pool of the given members to the test virtual.
func withClone(cfg *Config, name string, server bool, members ...string) {
	p := &Pool{Name: name, LBMode: RoundRobin}
	for _, m := range members {
		a := ap(m)
		p.Members = append(p.Members, Member{Node: "/Common/" + a.Addr().String(), Addr: a})
	}
	cfg.Pools[name] = p
	v := cfg.Virtuals["/Common/vs"]
	v.Clone = append(v.Clone, ClonePool{Pool: name, Server: server})
}

// echoMember copies back what it gets.
func echoMember(t *testing.T, addr string) {
	serveConns(t, addr, func(c net.Conn) { io.Copy(c, c) })
}

// roundTrip writes payload through the virtual and reads it back from an
// echoing member.
func roundTrip(t *testing.T, vs string, payload []byte) {
	t.Helper()
	c, err := net.DialTimeout("tcp", vs, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	werr := make(chan error, 1)
	go func() {
		_, err := c.Write(payload)
		c.(*net.TCPConn).CloseWrite()
		werr <- err
	}()
	back, err := io.ReadAll(c)
	if err != nil || <-werr != nil {
		t.Fatalf("round trip: %v", err)
	}
	if !bytes.Equal(back, payload) {
		t.Fatalf("the client got %d bytes back, sent %d", len(back), len(payload))
	}
}

// TestClonePoolL4: the clone member gets exactly the client's bytes, on
// the event loops (a plain virtual) and on goroutines (a virtual with a
// rule); the virtual and the clone pool count them.
func TestClonePoolL4(t *testing.T) {
	for i, tc := range []struct {
		name string
		rule string
	}{
		{"event loop", ""},
		{"goroutines", "when CLIENT_ACCEPTED { set x 1 }"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := "127.73.2." + string(rune('1'+i*4))
			vs, member, cl := base+"0:8000", base+"1:9000", base+"2:9001"
			echoMember(t, member)
			cc := startCloneCollector(t, cl)
			p, _ := newPlane(t)
			cfg := basic(vs, member)
			withClone(cfg, "/Common/clone", false, cl)
			if tc.rule != "" {
				cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, tc.rule)
			}
			mustApply(t, p, cfg)

			// Small, then bulk: a full read would be spliced without a clone.
			payload := append([]byte("hello\n"), bytes.Repeat([]byte("0123456789abcdef"), 16<<10)...)
			roundTrip(t, vs, payload)
			got := cc.wait(t, 1)
			if len(got) != 1 || got[0] != string(payload) {
				st, _ := p.Virtual("/Common/vs")
				t.Fatalf("clone member got %d connections, first %d bytes; want 1 with the %d bytes sent (clone counters %+v)", len(got), len(first(got)), len(payload), st.Clone)
			}
			eventually(t, "clone counters", func() bool {
				st, _ := p.Virtual("/Common/vs")
				return st.Clone != nil && st.Clone.Conns == 1 && st.Clone.Bytes == uint64(len(payload))
			})
			st, _ := p.Virtual("/Common/vs")
			if st.Clone.Dropped != 0 {
				t.Errorf("%d clones dropped", st.Clone.Dropped)
			}
			ps, _ := p.Pool("/Common/clone")
			if ps.ServerSide.TotConns != 1 || ps.ServerSide.BitsOut != uint64(len(payload))*8 {
				t.Errorf("clone pool: %d connections, %d bits out; want 1 and %d", ps.ServerSide.TotConns, ps.ServerSide.BitsOut, len(payload)*8)
			}
		})
	}
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// TestClonePoolDeadAndSlow: a clone member that refuses connections, and
// one that never reads, change nothing for the client; each clone is
// dropped and counted.
func TestClonePoolDeadAndSlow(t *testing.T) {
	vs, member := "127.73.3.1:8000", "127.73.3.2:9000"
	echoMember(t, member)
	dead := "127.73.3.3:9001" // nothing listens there
	slow := "127.73.3.4:9001"
	held := make(chan net.Conn, 4)
	serveConns(t, slow, func(c net.Conn) {
		held <- c // never read
		time.Sleep(30 * time.Second)
	})
	t.Cleanup(func() {
		for {
			select {
			case c := <-held:
				c.Close()
			default:
				return
			}
		}
	})
	for _, tc := range []struct {
		name, clone string
		size        int
	}{
		{"dead", dead, 64 << 10},
		// Far beyond the socket buffers and the clone's bound.
		{"slow", slow, 48 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := newPlane(t)
			cfg := basic(vs, member)
			withClone(cfg, "/Common/clone", true, tc.clone)
			mustApply(t, p, cfg)
			roundTrip(t, vs, bytes.Repeat([]byte{'z'}, tc.size))
			eventually(t, "the dropped clone counted", func() bool {
				st, _ := p.Virtual("/Common/vs")
				return st.Clone != nil && st.Clone.Dropped == 1
			})
			eventually(t, "the clone pool's connection released", func() bool {
				ps, _ := p.Pool("/Common/clone")
				return ps.ServerSide.CurConns == 0
			})
		})
	}
}

// TestClonePoolHTTP: on an HTTP virtual every request goes to the clone
// pools on a connection of its own: clientside as the client sent it,
// serverside as the member got it (with the X-Forwarded-For the profile
// inserts).
func TestClonePoolHTTP(t *testing.T) {
	vs, member := "127.73.4.1:8080", "127.73.4.2:9000"
	startL7Member(t, member, "M1")
	cs := startCloneCollector(t, "127.73.4.3:9001")
	ss := startCloneCollector(t, "127.73.4.4:9001")
	p, _ := newPlane(t)
	cfg := l7Config(t, vs, false, mblb.HTTPOptions{InsertXFF: true}, "", member)
	withClone(cfg, "/Common/clone_cs", false, "127.73.4.3:9001")
	withClone(cfg, "/Common/clone_ss", true, "127.73.4.4:9001")
	mustApply(t, p, cfg)

	c := dialHTTPVS(t, vs)
	reqs := []string{
		"GET /one HTTP/1.1\r\nHost: a\r\n\r\n",
		"POST /two HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello",
	}
	for _, r := range reqs {
		resp, body, err := c.do(r)
		if err != nil || resp.StatusCode != 200 || !strings.HasPrefix(body, "M1 ") {
			t.Fatalf("request through the virtual: %v %q", err, body)
		}
	}
	// Each copy comes on a connection of its own, so the collectors may
	// read them in either order: compare them sorted (reqs is).
	gotC := cs.wait(t, len(reqs))
	slices.Sort(gotC)
	for i, r := range reqs {
		if gotC[i] != r {
			t.Errorf("clientside copy %d = %q, want %q", i, gotC[i], r)
		}
	}
	gotS := ss.wait(t, len(reqs))
	slices.Sort(gotS)
	for i, g := range gotS {
		if !strings.Contains(g, "\r\nX-Forwarded-For: 127.0.0.1\r\n") {
			t.Errorf("serverside copy %d lacks the inserted X-Forwarded-For: %q", i, g)
		}
		if !strings.HasPrefix(g, strings.SplitN(reqs[i], "\r\n", 2)[0]) {
			t.Errorf("serverside copy %d = %q", i, g)
		}
	}
	eventually(t, "clone counters", func() bool {
		st, _ := p.Virtual("/Common/vs")
		return st.Clone != nil && st.Clone.Conns == 4 && st.Clone.Dropped == 0
	})
}

// TestClonePoolNoAllocs: a virtual without clone pools starts no clone
// flow and allocates nothing for it.
func TestClonePoolNoAllocs(t *testing.T) {
	p, _ := newPlane(t)
	mustApply(t, p, basic("127.73.5.1:8000", "127.73.5.2:9000"))
	v := p.virtuals["/Common/vs"]
	snap := v.Snap.Load()
	if snap.Clone != nil {
		t.Fatal("a virtual without clone pools has a clone set")
	}
	if n := testing.AllocsPerRun(100, func() { _ = snap.Clone.Start() }); n != 0 {
		t.Fatalf("%v allocations per flow without clone pools", n)
	}
}

// BenchmarkClonePoolHTTP sends requests one after the other on one
// keep-alive client connection through an HTTP virtual, without clone
// pools (allocs/op must stay what the virtual costs without the feature)
// and with one clientside clone pool (a connection per request).
func BenchmarkClonePoolHTTP(b *testing.B) {
	benchHTTPMember(b, "127.73.6.11:80")
	serveConns(b, "127.73.6.21:80", func(c net.Conn) { io.Copy(io.Discard, c) })
	for i, withClone := range []bool{false, true} {
		b.Run(map[bool]string{false: "none", true: "clone"}[withClone], func(b *testing.B) {
			vs := fmt.Sprintf("127.73.6.%d:80", i+1)
			cfg := mblbConfig(vs, &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}, "127.73.6.11:80")
			if withClone {
				cfg.Pools["/Common/ids"] = &Pool{Name: "/Common/ids", LBMode: RoundRobin,
					Members: []Member{{Node: "/Common/127.73.6.21", Addr: ap("127.73.6.21:80")}}}
				cfg.Virtuals["/Common/vs"].Clone = []ClonePool{{Pool: "/Common/ids"}}
			}
			c := applyAndDial(b, cfg, vs)
			req := []byte("GET /x HTTP/1.1\r\nHost: a\r\n\r\n")
			buf := make([]byte, 4096)
			exchangeOK(b, c, req, buf)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				exchangeOK(b, c, req, buf)
			}
		})
	}
}

// TestClonePoolStreamSides: on a TCP virtual whose stream profile
// rewrites the client's bytes, a clientside clone gets them as the client
// sent them and a serverside clone as the member got them.
func TestClonePoolStreamSides(t *testing.T) {
	cloneStreamSides(t, "127.73.7", func(cfg *Config) {
		withClone(cfg, "/Common/clone_cs", false, "127.73.7.3:9001")
		withClone(cfg, "/Common/clone_ss", true, "127.73.7.4:9001")
	})
}

// cloneStreamSides runs a client through a virtual at NET.1:8000 whose
// stream profile turns cat into dog, its member at NET.2:9000, and
// checks the copies the clones setup adds (clone pools or a rule) bring
// to the collectors at NET.3:9001 (clientside: the client's bytes) and
// NET.4:9001 (serverside: the rewritten ones).
func cloneStreamSides(t *testing.T, net3 string, setup func(*Config)) {
	t.Helper()
	vs, member := net3+".1:8000", net3+".2:9000"
	echoMember(t, member)
	cs := startCloneCollector(t, net3+".3:9001")
	ss := startCloneCollector(t, net3+".4:9001")
	e, err := streamfilter.Parse("@cat@dog@")
	if err != nil {
		t.Fatal(err)
	}
	p, _ := newPlane(t)
	cfg := basic(vs, member)
	cfg.Virtuals["/Common/vs"].Stream = &mblb.StreamOptions{Profile: "/Common/s", Expr: e}
	setup(cfg)
	mustApply(t, p, cfg)

	c, err := net.DialTimeout("tcp", vs, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, "a cat here\n")
	c.(*net.TCPConn).CloseWrite()
	back, _ := io.ReadAll(c)
	if string(back) != "a dog here\n" {
		t.Fatalf("client got %q", back)
	}
	if got := cs.wait(t, 1); got[0] != "a cat here\n" {
		t.Errorf("clientside copy %q, want the client's bytes", got[0])
	}
	if got := ss.wait(t, 1); got[0] != "a dog here\n" {
		t.Errorf("serverside copy %q, want the rewritten bytes", got[0])
	}
}

// TestClonePoolTLS: on a client-ssl virtual the clone gets the client's
// bytes as decrypted (openltm's choice: the socket proxy terminates TLS
// itself), on the event loops (client-ssl only) and on goroutines
// (client-ssl and server-ssl), while the member gets them re-encrypted.
func TestClonePoolTLS(t *testing.T) {
	cert, key, roots := testCert(t, "app.example")
	startServer(t, "127.73.8.11:9000", "S1")
	startTLSServer(t, "127.73.8.12:9443", "S2", cert, key)
	for i, tc := range []struct {
		name, member, want string
		serverSSL          bool
	}{
		{"client-ssl", "127.73.8.11:9000", "S1 Response", false},
		{"client-ssl and server-ssl", "127.73.8.12:9443", "S2 Response tls", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs, cl := fmt.Sprintf("127.73.8.%d:443", i+1), fmt.Sprintf("127.73.8.%d:9001", i+21)
			cc := startCloneCollector(t, cl)
			p, _ := newPlane(t)
			cfg := basic(vs, tc.member)
			cfg.Virtuals["/Common/vs"].TLS = clientSSL(t, cert, key)
			if tc.serverSSL {
				cfg.Virtuals["/Common/vs"].TLS.Server = serverSSL(t)
			}
			withClone(cfg, "/Common/clone", false, cl)
			mustApply(t, p, cfg)
			if got := tlsAsk(t, vs, "app.example", roots, "a", "b"); strings.Join(got, ",") != tc.want+","+tc.want {
				t.Fatalf("through the virtual: %q", got)
			}
			if got := cc.wait(t, 1); got[0] != "a\nb\n" {
				t.Fatalf("clone got %q, want the client's plaintext", got[0])
			}
		})
	}
}
