//go:build linux

package dataplane

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
)

// A policy's priority group, its measurement and an http virtual's
// ingress limit, with real clients through real virtuals. Shares are
// compared to one another (the higher level's bytes against the
// lower's), never to an absolute rate; durations are lower bounds.

// pgPolicy is a 1 MB/s policy whose priority group gives level 7
// ("hi") four times the share of level 0 ("lo").
func pgPolicy(name string) *BWCPolicy {
	return &BWCPolicy{Name: name, MaxRate: 8e6, Mark: BWCMark{TOS: -1, QoS: -1},
		Priority: &BWCPriorityGroup{Name: "/Common/pg", Weights: [8]int{0: 20, 7: 80}, Levels: map[string]int{"hi": 7, "lo": 0}}}
}

// pgRule puts each flow of the policy (attaching it first when attach)
// at a level: the client at hiAddr at hi, the others at lo, by the
// group's level names.
func pgRule(policy, hiAddr string, attach bool) string {
	a := ""
	if attach {
		a = "BWC::policy attach " + policy
	}
	return `when CLIENT_ACCEPTED {
		` + a + `
		if { [IP::client_addr] eq "` + hiAddr + `" } { BWC::priority hi } else { BWC::priority ` + policy + ` lo }
	}`
}

// streamFrom downloads from the virtual as a client bound to src, adding
// what it reads to got until stop closes (or a minute passes).
func streamFrom(t *testing.T, src, vs string, got *atomic.Int64, stop <-chan struct{}) {
	d := net.Dialer{Timeout: 10 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
	c, err := d.Dial("tcp", vs)
	if err != nil {
		t.Error(err)
		return
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(60 * time.Second))
	io.WriteString(c, "1000000000\n")
	buf := make([]byte, 32<<10)
	for {
		select {
		case <-stop:
			return
		default:
		}
		n, err := c.Read(buf)
		got.Add(int64(n))
		if err != nil {
			return
		}
	}
}

// shareWindow waits until both counters move, then reports what each
// gained over the next three seconds.
func shareWindow(t *testing.T, hi, lo *atomic.Int64) (int64, int64) {
	t.Helper()
	eventually(t, "both flows passing", func() bool { return hi.Load() > 0 && lo.Load() > 0 })
	time.Sleep(500 * time.Millisecond) // both levels busy
	h0, l0 := hi.Load(), lo.Load()
	time.Sleep(3 * time.Second)
	return hi.Load() - h0, lo.Load() - l0
}

// compareShares runs two flows (start gives each its counter and the
// stop channel, adding its goroutines to wg), stops them after
// shareWindow and checks that the weight-80 one (hi) got at least twice
// the weight-20 one's bytes, and the latter some (what names the bytes
// in the failure).
func compareShares(t *testing.T, what string, start func(wg *sync.WaitGroup, stop <-chan struct{}, hi, lo *atomic.Int64)) {
	t.Helper()
	var hi, lo atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	start(&wg, stop, &hi, &lo)
	h, l := shareWindow(t, &hi, &lo)
	close(stop)
	wg.Wait()
	t.Logf("hi %d lo %d", h, l)
	if h < 2*l || l == 0 {
		t.Errorf("in 3 s the weight-80 one got %d bytes%s, the weight-20 one %d: want at least twice as much, and some", h, what, l)
	}
}

// TestBWCPriorityGroupTCP: two downloads under one policy, one at the
// priority group's level of weight 80 and one at its level of weight 20:
// the first gets at least twice the second's bytes, and the second still
// gets some (a weight is a share, not a wait).
func TestBWCPriorityGroupTCP(t *testing.T) {
	const vs, member = "127.151.1.1:8000", "127.151.1.2:9000"
	bwcMember(t, member)
	p, _ := newPlane(t)
	cfg := bwcConfig(vs, member, pgPolicy("/Common/grp"))
	rs, lg := compileRules(t, pgRule("grp", "127.151.1.50", true))
	lg.showOnFailure(t)
	cfg.Virtuals["/Common/vs"].Rules = rs
	mustApply(t, p, cfg)
	compareShares(t, "", func(wg *sync.WaitGroup, stop <-chan struct{}, hi, lo *atomic.Int64) {
		wg.Go(func() { streamFrom(t, "127.151.1.50", vs, hi, stop) })
		wg.Go(func() { streamFrom(t, "127.151.1.51", vs, lo, stop) })
	})
}

// TestBWCPriorityGroupUDP: two UDP clients of a virtual whose policy has
// the group, each sending more than the policy allows, put by a rule at
// the group's two levels: the echoes of the one of weight 80 outnumber
// the other's at least twice.
func TestBWCPriorityGroupUDP(t *testing.T) {
	const vs, member = "127.151.2.1:5300", "127.151.2.2:5300"
	startUDPMember(t, member, "S1")
	p, _ := newPlane(t)
	cfg := udpBasic(vs, member)
	pol := pgPolicy("/Common/grp")
	pol.MaxRate = 800e3 // 100 KB/s each way
	cfg.BWC = map[string]*BWCPolicy{pol.Name: pol}
	cfg.Virtuals["/Common/vs"].BWC = pol.Name
	rs, lg := compileRules(t, pgRule("grp", "127.151.2.50", false))
	lg.showOnFailure(t)
	cfg.Virtuals["/Common/vs"].Rules = rs
	mustApply(t, p, cfg)
	compareShares(t, " of echoes", func(wg *sync.WaitGroup, stop <-chan struct{}, hi, lo *atomic.Int64) {
		for _, c := range []struct {
			src string
			got *atomic.Int64
		}{{"127.151.2.50:0", hi}, {"127.151.2.51:0", lo}} {
			u := dialUDP(t, c.src, vs)
			wg.Go(func() { // 1000-byte datagrams, 150 a second: 150 KB/s
				d := make([]byte, 1000)
				tk := time.NewTicker(20 * time.Millisecond)
				defer tk.Stop()
				for range 3000 {
					select {
					case <-stop:
						return
					case <-tk.C:
					}
					for range 3 {
						u.c.Write(d)
					}
				}
			})
			wg.Go(func() {
				buf := make([]byte, 2048)
				for {
					u.c.SetReadDeadline(time.Now().Add(time.Second))
					n, err := u.c.Read(buf)
					if n > 0 {
						c.got.Add(int64(n))
					}
					select {
					case <-stop:
						return
					default:
					}
					if err != nil && !strings.Contains(err.Error(), "timeout") {
						return
					}
				}
			})
		}
	})
}

// TestBWCMeasureLog: a policy with measure enabled and a log-publisher
// logs itself each period; BWC::measure names a flow's measurement and
// reads it back in the rule.
func TestBWCMeasureLog(t *testing.T) {
	const vs, member = "127.151.3.1:8000", "127.151.3.2:9000"
	bwcMember(t, member)
	p, _ := newPlane(t)
	var mu sync.Mutex
	var lines []string
	p.SetBWCLogSender(func(pub string, line []byte) bool {
		mu.Lock()
		lines = append(lines, pub+" "+string(line))
		mu.Unlock()
		return true
	})
	pol := &BWCPolicy{Name: "/Common/meas", MaxRate: 8e6, MaxUserRate: 8e6, Dynamic: true, Mark: BWCMark{TOS: -1, QoS: -1},
		Measure: true, LogPublisher: "/Common/pub", LogPeriod: 200 * time.Millisecond}
	cfg := bwcConfig(vs, member, pol)
	rs, lg := compileRules(t, `when CLIENT_ACCEPTED {
		BWC::policy attach meas [IP::client_addr]:[TCP::client_port]
		BWC::measure identifier DL flow
		BWC::measure start flow
	}
	when CLIENT_CLOSED {
		log local0. "flow bytes [BWC::measure get bytes flow] session bytes [BWC::measure get bytes session]"
	}`)
	lg.showOnFailure(t)
	cfg.Virtuals["/Common/vs"].Rules = rs
	mustApply(t, p, cfg)
	downloadFrom(t, "127.151.3.50", vs, 512<<10)
	has := func(re string) bool {
		mu.Lock()
		defer mu.Unlock()
		for _, l := range lines {
			if strings.Contains(l, re) {
				return true
			}
		}
		return false
	}
	eventually(t, "the policy's line", func() bool { return has("/Common/pub bwc-measure policy /Common/meas rate ") })
	eventually(t, "the flow's line", func() bool { return has(" flow 127.151.3.50:") && has(" id DL rate ") })
	eventually(t, "the session's line", func() bool { return has("bwc-measure policy /Common/meas session 127.151.3.50:") })
	eventually(t, "the rule's reading", func() bool { return strings.Contains(lg.String(), "flow bytes ") })
	var fb, sb int
	if _, err := fmt.Sscanf(lg.String()[strings.Index(lg.String(), "flow bytes "):], "flow bytes %d session bytes %d", &fb, &sb); err != nil || fb < 512<<10 || sb < fb {
		t.Errorf("rule read flow %d, session %d bytes (%v): want at least the 512 KB downloaded", fb, sb, err)
	}
}

// TestIngressRateLimitHTTP: IP::ingress_rate_limit on an http virtual
// holds a real client's upload back (its body read no faster than the
// limit), loses nothing, and reads back; the same upload without the
// rule is not held (no time asserted on it).
func TestIngressRateLimitHTTP(t *testing.T) {
	const vs, member = "127.151.4.1:8080", "127.151.4.2:9000"
	ln, err := net.Listen("tcp", member)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		fmt.Fprintf(w, "%d", n)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	p, _ := newPlane(t)
	cfg := basic(vs, member)
	cfg.Virtuals["/Common/vs"].MBLB = &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}
	rs, lg := compileRules(t, `when CLIENT_ACCEPTED {
		IP::ingress_rate_limit 30
		log local0. "limit [IP::ingress_rate_limit] drop [IP::ingress_drop_rate]"
	}`)
	lg.showOnFailure(t)
	cfg.Virtuals["/Common/vs"].Rules = rs
	mustApply(t, p, cfg)
	const size = 150 << 10
	cl := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	start := time.Now()
	resp, err := cl.Post("http://"+vs+"/up", "application/octet-stream", strings.NewReader(strings.Repeat("u", size)))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || string(got) != strconv.Itoa(size) {
		t.Fatalf("member got %q, %v", got, err)
	}
	// 150 KB is over 100 full segments: 30 at once, the rest at 30 a
	// second, less what the socket buffers hold.
	if d := time.Since(start); d < time.Second {
		t.Errorf("150 KB at 30 segments a second took %v", d)
	}
	if !strings.Contains(lg.String(), "limit 30 drop 0") {
		t.Errorf("log %q", lg.String())
	}
}
