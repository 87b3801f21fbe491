package dataplane

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/diameter"
	"github.com/openltm/openltm/dataplane/diameter/diamtest"
	"github.com/openltm/openltm/dataplane/diammsg"
)

// diamPair starts two members on base.10 and base.11 and a virtual on
// base.1:3868 with opt over them, each on its own plane.
func diamPair(t *testing.T, base string, opt diameter.Options) (vs string, a, b *diamtest.Server, stats func() DiameterProfileStats) {
	t.Helper()
	a = diamServer(t, base+".10:3868", "member-a.example", false)
	b = diamServer(t, base+".11:3868", "member-b.example", false)
	p, _ := newPlane(t)
	vs = base + ".1:3868"
	cfg := basic(vs, a.Addr(), b.Addr())
	delete(cfg.Virtuals, "/Common/vs")
	diamVirtual(t, cfg, "/Common/diam", vs, "/Common/pool", opt, "")
	mustApply(t, p, cfg)
	return vs, a, b, func() DiameterProfileStats {
		return p.ProfileStats(ProfileDiameter, "/Common/diameter", []string{"/Common/diam"}).Diameter
	}
}

// exchange sends one CCR per session at once, in the background.
func exchange(c *diamtest.Client, n int, tag string) <-chan []diamtest.Answer {
	codes, avps := make([]uint32, n), make([][]byte, n)
	for i := range n {
		codes[i], avps[i] = 272, diamtest.Request("client.example", fmt.Sprintf("client.example;%s;%d", tag, i), "")
	}
	out := make(chan []diamtest.Answer, 1)
	go func() {
		ans, _ := c.Exchange(codes, 4, avps...)
		out <- ans
	}()
	return out
}

func ccrsGot(s *diamtest.Server) (n, retransmitted int) {
	for _, g := range s.Got() {
		if g.Code == 272 {
			n++
			if g.Retransmit {
				retransmitted++
			}
		}
	}
	return
}

func wait(t *testing.T, ch <-chan []diamtest.Answer, n int) []diamtest.Answer {
	t.Helper()
	select {
	case ans := <-ch:
		if len(ans) != n {
			t.Fatalf("got %d answers, want %d", len(ans), n)
		}
		return ans
	case <-time.After(30 * time.Second):
		t.Fatal("no answers in 30 s")
	}
	return nil
}

// TestDiameterRetransmit: the diameter profile sends a client's request
// again, T flag set, to the other member when its member's connection
// ends or it does not answer within retransmit-timeout; when no member
// answers, the client gets DIAMETER_UNABLE_TO_DELIVER (3002) and, with
// reset-on-timeout, a reset.
func TestDiameterRetransmit(t *testing.T) {
	t.Parallel()

	t.Run("a member killed mid-stream", func(t *testing.T) {
		t.Parallel()
		vs, a, b, stats := diamPair(t, "127.123.1", diameter.Options{MaxRetransmit: 1, RetransmitTimeout: time.Minute})
		a.Silent(true)
		c, _ := diamClient(t, vs, "client.example")
		ch := exchange(c, 8, "kill")
		eventually(t, "member-a holds requests", func() bool { n, _ := ccrsGot(a); return n > 0 })
		held, _ := ccrsGot(a)
		a.Close()
		for i, an := range wait(t, ch, 8) {
			if an.Result != diammsg.ResultSuccess || an.Origin != "member-b.example" {
				t.Fatalf("answer %d: %+v, want member-b's", i, an)
			}
		}
		if _, re := ccrsGot(b); re < held {
			t.Fatalf("member-b got %d requests with the T flag, want %d", re, held)
		}
		if s := stats(); s.Retransmitted < uint64(held) {
			t.Fatalf("stats %+v, want %d retransmitted", s, held)
		}
	})

	t.Run("a silent member times out", func(t *testing.T) {
		t.Parallel()
		vs, a, b, stats := diamPair(t, "127.123.2", diameter.Options{MaxRetransmit: 1, RetransmitTimeout: time.Second})
		a.Silent(true)
		c, _ := diamClient(t, vs, "client.example")
		for i, an := range wait(t, exchange(c, 6, "silent"), 6) {
			if an.Result != diammsg.ResultSuccess || an.Origin != "member-b.example" {
				t.Fatalf("answer %d: %+v, want member-b's", i, an)
			}
		}
		held, _ := ccrsGot(a)
		if _, re := ccrsGot(b); held == 0 || re != held {
			t.Fatalf("member-a held %d, member-b got %d with the T flag", held, re)
		}
		if s := stats(); s.Retransmitted != uint64(held) || s.Undelivered != 0 {
			t.Fatalf("stats %+v", s)
		}
		// The connection goes on.
		a.Silent(false)
		wait(t, exchange(c, 2, "after"), 2)
	})

	t.Run("every member fails: 3002", func(t *testing.T) {
		t.Parallel()
		vs, a, b, stats := diamPair(t, "127.123.3", diameter.Options{MaxRetransmit: 1, RetransmitTimeout: time.Second})
		a.Silent(true)
		b.Silent(true)
		c, cea := diamClient(t, vs, "client.example")
		for i, an := range wait(t, exchange(c, 3, "none"), 3) {
			if an.Result != diammsg.ResultUnableToDeliver || an.Origin != cea.Origin || an.Session != fmt.Sprintf("client.example;none;%d", i) {
				t.Fatalf("answer %d: %+v, want 3002 from %s", i, an, cea.Origin)
			}
		}
		na, ra := ccrsGot(a)
		nb, rb := ccrsGot(b)
		if na+nb != 6 || ra+rb != 3 {
			t.Fatalf("members got %d+%d requests, %d+%d with the T flag; want each sent twice", na, nb, ra, rb)
		}
		if s := stats(); s.Undelivered != 3 {
			t.Fatalf("stats %+v, want 3 undelivered", s)
		}
		// reset-on-timeout disabled: the connection goes on.
		b.Silent(false)
		a.Silent(false)
		wait(t, exchange(c, 2, "after"), 2)
	})

	t.Run("reset-on-timeout resets the client", func(t *testing.T) {
		t.Parallel()
		vs, a, b, _ := diamPair(t, "127.123.4", diameter.Options{MaxRetransmit: 0, RetransmitTimeout: time.Second, ResetOnTimeout: true})
		a.Silent(true)
		b.Silent(true)
		c, _ := diamClient(t, vs, "client.example")
		if err := c.Write(diammsg.Build(diammsg.FlagRequest, 272, 4, 1, 1, diamtest.Request("client.example", "client.example;reset", ""))); err != nil {
			t.Fatal(err)
		}
		if err := c.Wait(); !errors.Is(err, diamtest.ErrReset) {
			t.Fatalf("client's connection: %v, want a reset", err)
		}
	})
}

// TestDiameterWatchdog: a member connection idle for watchdog-timeout is
// sent DWRs; one that leaves max-watchdog-failure of them unanswered is
// taken down and the requests it held go to the other member, T flag
// set (retransmit-timeout 0: only the watchdog finds the member gone).
func TestDiameterWatchdog(t *testing.T) {
	t.Parallel()
	vs, a, b, stats := diamPair(t, "127.123.6", diameter.Options{MaxRetransmit: 1, WatchdogTimeout: time.Second, MaxWatchdogFailure: 1})
	c, _ := diamClient(t, vs, "client.example")
	wait(t, exchange(c, 4, "before"), 4)
	eventually(t, "the idle members sent DWRs", func() bool {
		for _, g := range append(a.Got(), b.Got()...) {
			if g.Code == diammsg.CmdDeviceWatchdog {
				return true
			}
		}
		return false
	})
	if s := stats(); s.WatchdogFailures != 0 {
		t.Fatalf("stats %+v: a member answering DWRs taken down", s)
	}
	a.Silent(true)
	ch := exchange(c, 6, "held")
	for i, an := range wait(t, ch, 6) {
		if an.Result != diammsg.ResultSuccess || an.Origin != "member-b.example" {
			t.Fatalf("answer %d: %+v, want member-b's", i, an)
		}
	}
	if s := stats(); s.WatchdogFailures == 0 || s.Retransmitted == 0 {
		t.Fatalf("stats %+v, want member-a taken down and its requests retransmitted", s)
	}
	if _, re := ccrsGot(b); re == 0 {
		t.Fatal("member-b got no request with the T flag")
	}
}
