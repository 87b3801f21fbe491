package state

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/monitor"
)

// waitStatus waits (up to 5 s) for the watch to reach want.
func waitStatus(t *testing.T, w *Watch, want MonStatus, marked bool) {
	t.Helper()
	for range 250 {
		if w.Current() == want && w.MarkedDown() == marked {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("status %v marked %v, want %v marked %v", w.Current(), w.MarkedDown(), want, marked)
}

// acceptAndClose answers a TCP monitor's probes until ln closes.
func acceptAndClose(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		c.Close()
	}
}

// A rule's mark (LB::down) holds the object down through probes that
// find it down, and goes with the first that finds it up; LB::up lifts
// it at once; a change of monitors drops it.
func TestWatchMark(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := netip.MustParseAddrPort(ln.Addr().String())
	go acceptAndClose(ln)
	w := NewWatch("Pool /Common/p member /Common/m")
	spec := &monitor.Spec{Type: monitor.TCP, Interval: 50 * time.Millisecond, Timeout: time.Hour}
	target := func(string) netip.AddrPort { return addr }
	w.Update(config.MonitorRule{Names: []string{"tcp"}}, map[string]*monitor.Spec{"tcp": spec}, target)
	defer func() {
		for _, in := range w.StopAll() {
			in.Stop()
		}
	}()
	waitStatus(t, w, MonUp, false)

	// The member stops answering; its monitor (an hour's timeout) still
	// says up, the mark says down, and stays while probes fail.
	ln.Close()
	w.Mark(false)
	if w.Current() != MonDown || !w.MarkedDown() {
		t.Fatalf("after Mark(false): %v marked %v", w.Current(), w.MarkedDown())
	}
	w.Mark(false) // again: no change
	time.Sleep(300 * time.Millisecond)
	waitStatus(t, w, MonDown, true)

	// It answers again: the next probe lifts the mark.
	ln2, err := net.Listen("tcp", addr.String())
	if err != nil {
		t.Skipf("the port was taken meanwhile: %v", err)
	}
	defer ln2.Close()
	go acceptAndClose(ln2)
	waitStatus(t, w, MonUp, false)

	// LB::up lifts a mark at once.
	w.Mark(false)
	w.Mark(true)
	if w.MarkedDown() || w.Current() == MonDown {
		t.Fatalf("after Mark(true): %v marked %v", w.Current(), w.MarkedDown())
	}

	// New monitors: the mark goes with the old ones.
	w.Mark(false)
	spec2 := *spec
	spec2.Interval = time.Hour
	for _, in := range w.Update(config.MonitorRule{Names: []string{"tcp"}}, map[string]*monitor.Spec{"tcp": &spec2}, target) {
		in.Stop()
	}
	if w.MarkedDown() {
		t.Fatal("the mark survived a change of monitors")
	}
}
