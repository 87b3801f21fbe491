package daemon

import (
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/daemon/tmshscript"
	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/rules"
)

// sys icall istats-trigger: an iCall event raised when an iStats value,
// which iRules set with ISTATS::incr and ISTATS::set, enters a range.
// F5's iCall overview names the use ("an event that triggers when a
// certain iStats value ... exceeds a given threshold",
// https://clouddocs.f5.com/api/icontrol-soap/iCall.html); its tmsh
// reference lists the properties without their semantics, which are
// openltm's reading of their names [M]:
//
//   - range-min and range-max bound the range, both included; one unset
//     leaves that side open, and a trigger needs at least one.
//   - duration is how many seconds the value must stay in the range
//     before the event is raised (0: at the first look).
//   - repeat is how many seconds apart the event is raised again while
//     the value stays in the range (0: once each time it enters).
//   - The value is looked at every second, by one goroutine that runs
//     only while the configuration has a trigger, so the rules' ISTATS::
//     commands pay nothing for it.
//   - The event's context is istats-key, value (the value seen) and
//     istats-trigger (the trigger's full name).
var (
	icallIStatsTrigger = schema.MustKind("sys icall istats-trigger")
	istatsKeyProp      = icallIStatsTrigger.MustProp("istats-key")
	istatsEventProp    = icallIStatsTrigger.MustProp("event-name")
	istatsMinProp      = icallIStatsTrigger.MustProp("range-min")
	istatsMaxProp      = icallIStatsTrigger.MustProp("range-max")
	istatsDurProp      = icallIStatsTrigger.MustProp("duration")
	istatsRepeatProp   = icallIStatsTrigger.MustProp("repeat")
)

// istatsPoll is how often the triggers look at their values [M].
const istatsPoll = time.Second

// istatsTrigger is one trigger as configured, with the state of its
// watch (touched by the watching goroutine only) and its counts.
type istatsTrigger struct {
	name, key, event string
	min, max         int64
	duration, repeat time.Duration
	sig              string // its configuration: a trigger unchanged keeps its state

	inSince time.Time // when the value entered the range; zero: out of it
	last    time.Time // when the event was last raised in this stay; zero: not yet

	raised atomic.Uint64
	value  atomic.Int64
	seen   atomic.Bool // the key held a number at the last look
	inside atomic.Bool
}

// prepareTriggers reads the configuration's iStats triggers into c,
// refusing one that cannot work; one that was stored as it is now is
// kept with a warning instead, as handlers are.
func (c *scriptsChange) prepareTriggers(old, cfg *objects.Config, opts CommitOptions) error {
	c.triggers = map[string]*istatsTrigger{}
	for _, o := range cfg.Of(icallIStatsTrigger) {
		t, err := planTrigger(o)
		if err != nil {
			if was := objAt(old, icallIStatsTrigger, o.Name); old == nil || was != nil && objects.Format(was, objects.PrintOpts{}) == objects.Format(o, objects.PrintOpts{}) {
				if opts.Warn != nil {
					opts.Warn(err.Error() + "; the trigger does not run")
				}
				continue
			}
			return err
		}
		c.triggers[o.Name] = t
	}
	return nil
}

// planTrigger reads one trigger.
func planTrigger(o *objects.Object) (*istatsTrigger, error) {
	bad := func(format string, args ...any) error {
		return &objects.ConfigError{Code: "01070734", Msg: "Configuration error: sys icall istats-trigger " + o.Name + ": " + fmt.Sprintf(format, args...)}
	}
	t := &istatsTrigger{name: o.Name, min: math.MinInt64, max: math.MaxInt64, sig: objects.Format(o, objects.PrintOpts{})}
	t.key = strings.Join(strings.Fields(istatsKeyProp.Str(o)), " ")
	if t.key == "" {
		return nil, bad(`istats-key is required: the iStats key to watch, "NAMESPACE OBJECT TYPE NAME" (TYPE counter or gauge)`)
	}
	if err := rules.CheckNumberKey(t.key); err != nil {
		return nil, bad("istats-key: %v", err)
	}
	t.event = istatsEventProp.Str(o)
	if t.event == "" || t.event == "none" {
		return nil, bad("event-name is required: the name of the iCall event to raise")
	}
	var err error
	read := func(p *objects.Prop, into *int64) bool {
		v := p.Str(o)
		if v == "" || v == "none" {
			return false
		}
		n, perr := strconv.ParseInt(v, 10, 64)
		if perr != nil {
			err = bad("%s must be an integer (%q)", p.Name, v)
			return false
		}
		*into = n
		return true
	}
	hasMin, hasMax := read(istatsMinProp, &t.min), read(istatsMaxProp, &t.max)
	if err != nil {
		return nil, err
	}
	if !hasMin && !hasMax {
		return nil, bad("a trigger needs range-min, range-max or both: the range the value must enter")
	}
	if t.min > t.max {
		return nil, bad("range-min %d is greater than range-max %d", t.min, t.max)
	}
	for _, d := range []struct {
		p  *objects.Prop
		to *time.Duration
	}{{istatsDurProp, &t.duration}, {istatsRepeatProp, &t.repeat}} {
		v := d.p.Str(o)
		if v == "" {
			continue
		}
		n, perr := strconv.ParseInt(v, 10, 64)
		if perr != nil || n < 0 {
			return nil, bad("%s must be a number of seconds, 0 or more (%q)", d.p.Name, v)
		}
		*d.to = time.Duration(n) * time.Second
	}
	return t, nil
}

// applyTriggers makes triggers the running ones, a trigger whose
// configuration did not change keeping its state, and starts or stops
// the watch; it returns the triggers replaced.
func (s *scripts) applyTriggers(triggers map[string]*istatsTrigger) map[string]*istatsTrigger {
	s.mu.Lock()
	prev := s.triggers
	for name, t := range triggers {
		if p := prev[name]; p != nil && p.sig == t.sig {
			triggers[name] = p
		}
	}
	s.triggers = triggers
	start := len(triggers) > 0 && s.stopWatch == nil && !s.closed
	stop := len(triggers) == 0 && s.stopWatch != nil
	if start {
		ctx, cancel := context.WithCancel(context.Background())
		s.stopWatch, s.watchDone = cancel, make(chan struct{})
		go s.watchTriggers(ctx, s.watchDone)
	}
	s.mu.Unlock()
	if stop {
		s.stopTriggers()
	}
	return prev
}

// stopTriggers ends the watch and waits for it.
func (s *scripts) stopTriggers() {
	s.mu.Lock()
	cancel, done := s.stopWatch, s.watchDone
	s.stopWatch, s.watchDone = nil, nil
	s.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

// watchTriggers looks at every trigger's value each istatsPoll.
func (s *scripts) watchTriggers(ctx context.Context, done chan struct{}) {
	defer close(done)
	tk := time.NewTicker(istatsPoll)
	defer tk.Stop()
	store := s.e.rules.rt.sharedEnv(s.e.log).IStats
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tk.C:
			s.mu.Lock()
			ts := make([]*istatsTrigger, 0, len(s.triggers))
			for _, t := range s.triggers {
				ts = append(ts, t)
			}
			s.mu.Unlock()
			for _, t := range ts {
				n, ok := store.Number(t.key)
				if ev := t.look(n, ok, now); ev != nil {
					s.generate(ev)
				}
			}
		}
	}
}

// look takes one look at the trigger's value (ok false: the key holds
// none) and returns the event to raise, if any.
func (t *istatsTrigger) look(n int64, ok bool, now time.Time) *tmshscript.Event {
	t.seen.Store(ok)
	t.value.Store(n)
	if !ok || n < t.min || n > t.max {
		t.inSince, t.last = time.Time{}, time.Time{}
		t.inside.Store(false)
		return nil
	}
	t.inside.Store(true)
	if t.inSince.IsZero() {
		t.inSince = now
	}
	switch {
	case t.last.IsZero() && now.Sub(t.inSince) >= t.duration:
	case !t.last.IsZero() && t.repeat > 0 && now.Sub(t.last) >= t.repeat:
	default:
		return nil
	}
	t.last = now
	t.raised.Add(1)
	return &tmshscript.Event{Name: t.event, Context: [][2]string{
		{"istats-key", t.key}, {"value", strconv.FormatInt(n, 10)}, {"istats-trigger", t.name},
	}}
}

// istatsTriggerCommands answer show sys icall istats-trigger [NAME...]:
// each trigger's key, the value at its last look, whether it is in the
// range, and the events it raised since it was configured or ltmd
// started [M: the layout; F5 documents no show for it].
func istatsTriggerCommands(e *Engine) []RuntimeCommand {
	k := icallIStatsTrigger
	return []RuntimeCommand{{"show", k.Key(), func(_ context.Context, _ *Session, names, _ []string, w io.Writer) error {
		found := profileNames(e, k, names)
		if len(names) > 0 && len(found) == 0 {
			return objects.NotFound(k, names[0])
		}
		for _, name := range found {
			o := e.Config().Get(k, name)
			if o == nil {
				return objects.NotFound(k, name)
			}
			e.scripts.mu.Lock()
			t := e.scripts.triggers[name]
			e.scripts.mu.Unlock()
			state, value, raised := "not running: see the log", "-", uint64(0)
			if t != nil {
				state, raised = "out of range", t.raised.Load()
				if t.seen.Load() {
					value = strconv.FormatInt(t.value.Load(), 10)
				}
				if t.inside.Load() {
					state = "in range"
				}
			}
			title := "Sys::iCall iStats Trigger: " + objects.RelPath("/Common", name)
			bar := strings.Repeat("-", len(title)+2)
			fmt.Fprintf(w, "%s\n%s\n%s\n", bar, title, bar)
			fmt.Fprintf(w, "  %-12s %s\n  %-12s %s\n  %-12s %s\n  %-12s %s\n  %-12s %d\n\n",
				"iStats Key", istatsKeyProp.Str(o), "Event", istatsEventProp.Str(o), "Value", value, "State", state, "Events", raised)
		}
		return nil
	}}}
}
