package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/openltm/openltm/cluster"
	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
)

// A pool's min-up-members (with min-up-members-checking enabled): when
// fewer of its members than that are up, min-up-members-action fires
// once, and again only after the pool has had enough members up since.
// failover makes this device give up the traffic groups it is active
// for, as `run sys failover standby` does, so that a device that lost
// its servers hands the addresses to one that may still reach them;
// reboot and restart-all are logged, not taken [M: a software ADC does
// not reboot its host or restart every daemon on a pool's state; the
// commit warns so].

var (
	poolMinUp         = ltmPool.MustProp("min-up-members")
	poolMinUpAction   = ltmPool.MustProp("min-up-members-action")
	poolMinUpChecking = ltmPool.MustProp("min-up-members-checking")
)

// minUpEvery is how often the watched pools' members are counted: a
// member's monitor decides within its own interval, which is longer.
const minUpEvery = 200 * time.Millisecond

// minUpHoldOff: a device active for less than this does not fail over
// on a pool's minimum [M]. It most likely took the traffic groups over
// because the other device's pool fell below the same minimum, a moment
// before its own monitors saw the same members go down; giving them back
// would only bounce the addresses between devices that are both short.
const minUpHoldOff = 5 * time.Second

// minUpRule is one watched pool's setting.
type minUpRule struct {
	min    int
	action string
}

// minUpRules reads the pools whose min-up-members is checked.
func minUpRules(cfg *objects.Config) map[string]minUpRule {
	var out map[string]minUpRule
	for _, o := range cfg.Of(ltmPool) {
		if poolMinUpChecking.Str(o) != "enabled" {
			continue
		}
		n, _ := strconv.Atoi(poolMinUp.Str(o))
		if n <= 0 {
			continue
		}
		act := poolMinUpAction.Str(o)
		if act == "" {
			act = "failover"
		}
		if out == nil {
			out = map[string]minUpRule{}
		}
		out[o.Name] = minUpRule{min: n, action: act}
	}
	return out
}

// minUpWatch counts the watched pools' members that are up and fires
// their action when the count falls below the minimum.
type minUpWatch struct {
	e *Engine
	p *dataplane.Plane
	// running is the configuration p runs. The settings are read from it
	// rather than from the engine's, which a commit publishes only once
	// the plane runs it and it is stored: a count made in between would
	// meet the commit's members with the previous generation's action.
	running func() *objects.Config
	log     *slog.Logger
	cancel  context.CancelFunc
	done    chan struct{}

	mu    sync.Mutex
	below map[string]bool // pools whose action fired and has not re-armed
	// fire takes the action; the engine's unless a test replaces it.
	fire func(ctx context.Context, pool string, r minUpRule)
}

// watchMinUp starts counting for the plane's pools until the engine closes.
func (e *Engine) watchMinUp(h *planeHook) {
	ctx, cancel := context.WithCancel(context.Background())
	running := func() *objects.Config { c, _ := h.running(); return c }
	w := &minUpWatch{e: e, p: h.p, running: running, log: e.log, cancel: cancel, done: make(chan struct{}), below: map[string]bool{}}
	w.fire = w.act
	e.minUp = w
	go w.run(ctx)
}

// stop ends the watch and waits for it.
func (w *minUpWatch) stop() {
	w.cancel()
	<-w.done
}

func (w *minUpWatch) run(ctx context.Context) {
	defer close(w.done)
	t := time.NewTicker(minUpEvery)
	defer t.Stop()
	var cfg *objects.Config
	var rules map[string]minUpRule
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if c := w.running(); c != cfg && c != nil { // read once per generation
			cfg, rules = c, minUpRules(c)
		}
		w.check(ctx, cfg, rules)
	}
}

// upCount counts a pool's members that are up (monitor up, or no monitor
// and not forced offline [M]); decided is false while a monitor has not
// yet decided on a member.
func upCount(ps dataplane.PoolStats) (up, total int, decided bool) {
	for _, m := range ps.Members {
		total++
		switch m.MonitorStatus {
		case "up", "unchecked":
			up++
		case "checking":
			return 0, total, false
		}
	}
	return up, total, true
}

// check counts each watched pool once and fires on a fall below the
// minimum. rules are cfg's; counts made while the plane moved on to
// another configuration are dropped (the next tick counts again with its
// settings).
func (w *minUpWatch) check(ctx context.Context, cfg *objects.Config, rules map[string]minUpRule) {
	type count struct{ up, total int }
	counts := make(map[string]count, len(rules))
	for name := range rules {
		ps, ok := w.p.Pool(name)
		if !ok {
			continue
		}
		if up, total, decided := upCount(ps); decided {
			counts[name] = count{up, total}
		}
	}
	if w.running() != cfg {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for name := range w.below {
		if _, ok := rules[name]; !ok {
			delete(w.below, name) // no longer watched: armed again if it is
		}
	}
	for name, r := range rules {
		n, ok := counts[name]
		if !ok {
			continue
		}
		up, total := n.up, n.total
		switch {
		case up < r.min && !w.below[name]:
			w.below[name] = true
			w.log.Error(fmt.Sprintf("Pool %s has %d of %d members up, fewer than min-up-members %d: min-up-members-action %s", name, up, total, r.min, r.action),
				"pool", name, "up", up, "min-up-members", r.min, "action", r.action)
			w.fire(ctx, name, r)
		case up >= r.min && w.below[name]:
			delete(w.below, name)
			w.log.Info(fmt.Sprintf("Pool %s has %d of %d members up again, min-up-members %d", name, up, total, r.min), "pool", name)
		}
	}
}

// act takes a pool's min-up-members-action.
func (w *minUpWatch) act(ctx context.Context, pool string, r minUpRule) {
	if r.action != "failover" {
		w.log.Warn(fmt.Sprintf("Pool %s: min-up-members-action %s is not taken by openltm (logged only)", pool, r.action), "pool", pool)
		return
	}
	h := w.e.cluster.Load()
	if h == nil {
		w.log.Warn(fmt.Sprintf("Pool %s: min-up-members-action failover not taken: this device is in no device group", pool), "pool", pool)
		return
	}
	m, err := h.memberOf("")
	if err != nil || m.Group().Type != cluster.SyncFailover {
		w.log.Warn(fmt.Sprintf("Pool %s: min-up-members-action failover not taken: this device is in no sync-failover device group", pool), "pool", pool)
		return
	}
	active, since := m.DeviceState()
	if !active {
		return // standby already: nothing to give up
	}
	if d := time.Since(since); d < minUpHoldOff {
		w.log.Warn(fmt.Sprintf("Pool %s: min-up-members-action failover not taken: this device became active only %v ago", pool, d.Round(time.Millisecond)), "pool", pool)
		return
	}
	go func() {
		if err := m.GoStandby(ctx, ""); err != nil {
			w.log.Error(fmt.Sprintf("Pool %s: min-up-members-action failover: %v", pool, err), "pool", pool)
			return
		}
		w.log.Warn(fmt.Sprintf("Pool %s: min-up-members-action failover: this device went standby", pool), "pool", pool)
	}()
}

// warnMinUp warns, at the commit that sets it, that a pool's
// min-up-members-action reboot or restart-all is only logged.
func warnMinUp(old, cfg *objects.Config, warn func(string)) {
	was := map[string]minUpRule{}
	if old != nil {
		was = minUpRules(old)
	}
	for name, r := range minUpRules(cfg) {
		if r.action == "failover" || was[name] == r {
			continue
		}
		warn(fmt.Sprintf("ltm pool %s: min-up-members-action %s is logged when fewer than %d members are up, and not taken by openltm (failover is)", name, r.action, r.min))
	}
}
