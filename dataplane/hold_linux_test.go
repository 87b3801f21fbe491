//go:build linux

package dataplane

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/evloop"
	"github.com/openltm/openltm/dataplane/mblb"
)

// TestHoldingLoopsServe: with loops that hold their threads (ltmd
// --busy-poll hold), a plain L4 flow and a message-balanced client carry
// their exchanges one at a time, each answered in order, and loops did
// hold. Not parallel: holding is the process's, and no other test has it
// on.
func TestHoldingLoopsServe(t *testing.T) {
	was := runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0)))
	// Holds are counted from here: only this test has holding on.
	held := evloop.HoldsStarted()
	evloop.SetHolding(true)
	t.Cleanup(func() {
		evloop.SetHolding(false)
		runtime.GOMAXPROCS(was)
	})
	const rounds = 300
	t.Run("l4", func(t *testing.T) {
		startServer(t, "127.0.191.11:80", "S1")
		p, _ := newPlane(t)
		mustApply(t, p, basic("127.0.191.1:80", "127.0.191.11:80"))
		c := dialVS(t, "127.0.191.1:80")
		for i := 0; i < rounds; i++ {
			if got := c.mustAsk(fmt.Sprint("hello ", i)); got != "S1 Response" {
				t.Fatalf("exchange %d: %q", i, got)
			}
		}
	})
	t.Run("mblb", func(t *testing.T) {
		startLenServer(t, "127.0.191.21:9000", "M1", 0)
		startLenServer(t, "127.0.191.21:9001", "M2", 0)
		p, _ := newPlane(t)
		m := &MBLB{Request: mblb.Framing{Mode: mblb.Length, Length: mblb.LengthField{Size: 4}}}
		mustApply(t, p, mblbConfig("127.0.191.2:9000", m, "127.0.191.21:9000", "127.0.191.21:9001"))
		c := dialVS(t, "127.0.191.2:9000")
		c.c.SetDeadline(time.Now().Add(20 * time.Second))
		by := map[string]int{}
		for i := 0; i < rounds; i++ {
			msg := fmt.Sprintf("%06d", i)
			if _, err := c.c.Write(frameMsg([]byte(msg))); err != nil {
				t.Fatal(err)
			}
			b, err := readMsg(c.r)
			if err != nil {
				t.Fatalf("answer %d: %v", i, err)
			}
			label, body, _ := bytes.Cut(b, []byte(":"))
			if string(body) != msg {
				t.Fatalf("answer %d is for %q", i, body)
			}
			by[string(label)]++
		}
		if by["M1"] == 0 || by["M2"] == 0 {
			t.Errorf("not balanced per message: %v", by)
		}
	})
	if evloop.HoldsStarted() == held {
		t.Error("no loop held its thread")
	}
}
