package bwc

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
)

// TestMeasureLines: measure enabled logs the policy, its categories and
// each instance; BWC::measure adds a flow's line with its identifier;
// a flow released is logged no more, a measurement stopped neither.
func TestMeasureLines(t *testing.T) {
	p := newPolicy(config.BWCPolicy{Name: "/Common/gold", MaxRate: 80e6, MaxUserRate: 80e6, Dynamic: true, Measure: true,
		Categories: []config.BWCCategory{{Name: "p2p", MaxRate: 80e6, Mark: config.BWCMark{TOS: -1, QoS: -1}}}})
	b := p.Attach("10.0.0.1:5000")
	b.SetCategory("p2p")
	fm := b.FlowMeasure("10.0.0.1:5000")
	fm.SetID("MYFLOW")
	fm.Start()
	b.Wait(1000)
	lines := func() string {
		var out []string
		p.logLines(time.Second, func(l []byte) { out = append(out, string(l)) })
		return strings.Join(out, "\n")
	}
	got := lines()
	for _, want := range []string{
		`(?m)^bwc-measure policy /Common/gold rate 8000 bps bytes 1000 period 1000 ms$`,
		`(?m)^bwc-measure policy /Common/gold category p2p rate 8000 bps bytes 1000 period 1000 ms$`,
		`(?m)^bwc-measure policy /Common/gold session 10\.0\.0\.1:5000 rate 8000 bps bytes 1000 period 1000 ms$`,
		`(?m)^bwc-measure policy /Common/gold flow 10\.0\.0\.1:5000 id MYFLOW rate 8000 bps bytes 1000 period 1000 ms$`,
	} {
		if !regexp.MustCompile(want).MatchString(got) {
			t.Errorf("no line %s in:\n%s", want, got)
		}
	}
	// The next period counts only what passed since.
	if got := lines(); !strings.Contains(got, "policy /Common/gold rate 0 bps bytes 0") {
		t.Errorf("second period:\n%s", got)
	}
	if fm.Bytes() != 1000 {
		t.Errorf("flow measure bytes %d, want 1000", fm.Bytes())
	}
	fm.Stop()
	b.Wait(500)
	if strings.Contains(lines(), "flow ") || fm.Bytes() != 1000 {
		t.Errorf("a stopped measurement counted or was logged (bytes %d)", fm.Bytes())
	}
	fm.Start()
	b.Release()
	if got := lines(); strings.Contains(got, "flow ") || strings.Contains(got, "session ") {
		t.Errorf("a released flow is still logged:\n%s", got)
	}
}

// TestSessionMeasure: BWC::measure ... session is the flow's instance,
// another instance of its policy by name, or the whole of a static
// policy; an instance the policy does not have is an error.
func TestSessionMeasure(t *testing.T) {
	dyn := newPolicy(config.BWCPolicy{Name: "/Common/d", MaxRate: 8e6, Dynamic: true})
	a, b := dyn.Attach("a"), dyn.Attach("b")
	if m, err := a.SessionMeasure(""); err != nil || m != &a.in.m {
		t.Errorf("own session: %v", err)
	}
	if m, err := a.SessionMeasure("b"); err != nil || m != &b.in.m {
		t.Errorf("session b: %v", err)
	}
	if _, err := a.SessionMeasure("c"); err == nil {
		t.Error("a session the policy does not have")
	}
	st := newPolicy(config.BWCPolicy{Name: "/Common/s", MaxRate: 8e6})
	if m, err := st.Attach("").SessionMeasure("x"); err != nil || m != &st.m {
		t.Errorf("static: %v", err)
	}
	var nilB *Bucket
	if _, err := nilB.RuleMeasure(false, "", ""); err == nil {
		t.Error("a flow without a policy measured")
	}
}

// TestLogLoop: a policy with a log-publisher sends its lines each period
// once a sender is given, and stops when the policy goes.
func TestLogLoop(t *testing.T) {
	var s Set
	got := make(chan string, 100)
	s.SetLogSender(func(pub string, line []byte) bool {
		select {
		case got <- pub + ": " + string(line):
		default:
		}
		return true
	})
	s.Apply(map[string]*config.BWCPolicy{"/Common/m": {Name: "/Common/m", MaxRate: 8e6, Measure: true, LogPublisher: "/Common/pub", LogPeriod: 100 * time.Millisecond}})
	select {
	case l := <-got:
		if !strings.HasPrefix(l, "/Common/pub: bwc-measure policy /Common/m rate ") {
			t.Errorf("line %q", l)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no line")
	}
	s.Close()
	time.Sleep(300 * time.Millisecond)
	for len(got) > 0 {
		<-got
	}
	time.Sleep(300 * time.Millisecond)
	if len(got) != 0 {
		t.Error("lines after the policy went")
	}
}
