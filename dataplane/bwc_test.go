package dataplane

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// The bandwidth controllers: a member sends a download of the size the
// client asks for; the clients are real TCP connections through the
// virtual. The tests check lower bounds on the time a transfer takes
// under a policy (what the bucket enforces), never an upper bound.

// bwcMember serves, on each connection, as many bytes as the decimal
// number on the client's first line.
func bwcMember(t *testing.T, addr string) {
	t.Helper()
	serveConns(t, addr, func(c net.Conn) {
		var n int
		buf := make([]byte, 32)
		k, err := c.Read(buf)
		if err != nil {
			return
		}
		for _, b := range buf[:k] {
			if b < '0' || b > '9' {
				break
			}
			n = n*10 + int(b-'0')
		}
		chunk := make([]byte, 32<<10)
		for n > 0 {
			w, err := c.Write(chunk[:min(n, len(chunk))])
			if err != nil {
				return
			}
			n -= w
		}
	})
}

// download asks the virtual for n bytes and reads them all, within a
// generous deadline.
func download(t *testing.T, vs string, n int) {
	t.Helper()
	c, err := net.DialTimeout("tcp", vs, 10*time.Second)
	if err != nil {
		t.Error(err)
		return
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(60 * time.Second))
	if _, err := io.WriteString(c, itoa(n)+"\n"); err != nil {
		t.Error(err)
		return
	}
	got, err := io.CopyN(io.Discard, c, int64(n))
	if err != nil {
		t.Errorf("download of %d bytes: %d read: %v", n, got, err)
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

func bwcConfig(vs, member string, pol *BWCPolicy) *Config {
	cfg := basic(vs, member)
	cfg.BWC = map[string]*BWCPolicy{pol.Name: pol}
	return cfg
}

// atLeast is the loose lower bound a transfer of bytes at bps takes:
// the bucket lets its burst pass at once, the rest waits; 80% of that
// leaves room for timer slack.
func atLeast(bytes int, bps uint64) time.Duration {
	rest := float64(bytes) - float64(bps)/8*0.2 - 16<<10 // burstTime and one buffer
	return time.Duration(rest / (float64(bps) / 8) * 0.8 * float64(time.Second))
}

func TestBWCVirtualPolicy(t *testing.T) {
	t.Parallel() // a lower bound on time only; its own addresses and plane
	vs, member := "127.125.1.1:8000", "127.125.1.2:9000"
	bwcMember(t, member)
	p, _ := newPlane(t)
	cfg := bwcConfig(vs, member, &BWCPolicy{Name: "/Common/two", MaxRate: 2e6})
	mustApply(t, p, cfg)

	// Without the policy the download is not shaped (and still works).
	download(t, vs, 1<<20)

	cfg.Virtuals["/Common/vs"].BWC = "/Common/two"
	mustApply(t, p, cfg)
	start := time.Now()
	download(t, vs, 1<<20)
	if d, want := time.Since(start), atLeast(1<<20, 2e6); d < want {
		t.Fatalf("1 MB through a 2 mbps policy took %v, less than %v", d, want)
	}
	pol := p.bwc.Policy("/Common/two")
	if pol == nil || pol.Passed.Load() < 1<<20 || pol.Delayed.Load() == 0 {
		t.Fatalf("policy counters: %+v", pol)
	}
}

// TestBWCStaticShared: two flows at once on a static policy share its
// max-rate: together they take as long as one flow of both sizes.
func TestBWCStaticShared(t *testing.T) {
	t.Parallel() // a lower bound on time only; its own addresses and plane
	vs, member := "127.125.2.1:8000", "127.125.2.2:9000"
	bwcMember(t, member)
	p, _ := newPlane(t)
	cfg := bwcConfig(vs, member, &BWCPolicy{Name: "/Common/two", MaxRate: 2e6})
	cfg.Virtuals["/Common/vs"].BWC = "/Common/two"
	mustApply(t, p, cfg)
	start := time.Now()
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() { download(t, vs, 512<<10) })
	}
	wg.Wait()
	if d, want := time.Since(start), atLeast(1<<20, 2e6); d < want {
		t.Fatalf("two 512 KB downloads on one 2 mbps policy took %v, less than %v", d, want)
	}
}

// TestBWCDynamicPerUser: a dynamic policy gives each client address its
// own max-user-rate; two users together get more than one.
func TestBWCDynamicPerUser(t *testing.T) {
	t.Parallel() // a lower bound on time only; its own addresses and plane
	vs, member := "127.125.3.1:8000", "127.125.3.2:9000"
	bwcMember(t, member)
	p, _ := newPlane(t)
	cfg := bwcConfig(vs, member, &BWCPolicy{Name: "/Common/users", MaxRate: 100e6, MaxUserRate: 2e6, Dynamic: true})
	cfg.Virtuals["/Common/vs"].BWC = "/Common/users"
	mustApply(t, p, cfg)
	start := time.Now()
	download(t, vs, 512<<10)
	if d, want := time.Since(start), atLeast(512<<10, 2e6); d < want {
		t.Fatalf("512 KB at a 2 mbps max-user-rate took %v, less than %v", d, want)
	}
	pol := p.bwc.Policy("/Common/users")
	eventually(t, "the user's instance dropped after its flow", func() bool { return pol.Instances() == 0 })
}

// TestBWCRuleAttach: a rule attaches a policy to each connection of a
// virtual that names none; BWC::rate changes a dynamic instance's rate.
func TestBWCRuleAttach(t *testing.T) {
	t.Parallel() // a lower bound on time only; its own addresses and plane
	vs, member := "127.125.4.1:8000", "127.125.4.2:9000"
	bwcMember(t, member)
	p, _ := newPlane(t)
	cfg := bwcConfig(vs, member, &BWCPolicy{Name: "/Common/two", MaxRate: 2e6})
	cfg.BWC["/Common/users"] = &BWCPolicy{Name: "/Common/users", MaxRate: 100e6, MaxUserRate: 50e6, Dynamic: true}
	rs, lg := compileRules(t, `when CLIENT_ACCEPTED {
	if { [TCP::local_port] == 8000 } {
		BWC::policy attach two
	} else {
		BWC::policy attach users [IP::client_addr]:[TCP::client_port]
		BWC::rate 2mbps
	}
}`)
	cfg.Virtuals["/Common/vs"].Rules = rs
	mustApply(t, p, cfg)
	start := time.Now()
	download(t, vs, 1<<20)
	if d, want := time.Since(start), atLeast(1<<20, 2e6); d < want {
		t.Fatalf("1 MB on a policy a rule attached took %v, less than %v", d, want)
	}
	lg.showOnFailure(t)

	// A second virtual on another port: the dynamic policy, whose
	// instance BWC::rate slows to 2 mbps.
	v2 := *cfg.Virtuals["/Common/vs"]
	v2.Name, v2.Destination = "/Common/vs2", ap("127.125.4.1:8001")
	cfg.Virtuals["/Common/vs2"] = &v2
	mustApply(t, p, cfg)
	start = time.Now()
	download(t, "127.125.4.1:8001", 512<<10)
	if d, want := time.Since(start), atLeast(512<<10, 2e6); d < want {
		t.Fatalf("512 KB after BWC::rate 2mbps took %v, less than %v", d, want)
	}
}
