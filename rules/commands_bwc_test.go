package rules

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

func TestParseBitRate(t *testing.T) {
	for _, c := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"10mbps", 10e6, true}, {"512kbps", 512e3, true}, {"1gbps", 1e9, true}, {"800bps", 800, true},
		{"2000", 2000, true}, {"0", 0, true}, {"2MBPS", 2e6, true},
		{"2furlongs", 0, false}, {"mbps", 0, false}, {"-1mbps", 0, false}, {"99999999999999999999gbps", 0, false},
	} {
		got, ok := ParseBitRate(c.in)
		if ok != c.ok || got != c.want {
			t.Errorf("ParseBitRate(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// TestBWCDebug: BWC::debug start|stop logs a line with the flow's policy
// instance as the connection describes it; bad words, a flow under no
// policy and a connection no controller shapes are Tcl errors that log
// no debug line.
func TestBWCDebug(t *testing.T) {
	for _, c := range []struct{ expr, log, err string }{
		{"BWC::debug start", "local0.info Rule /Common/cmds <CLIENT_ACCEPTED>: BWC::debug start: policy /Common/gold session s1 level 0", ""},
		{"BWC::debug stop", "local0.info Rule /Common/cmds <CLIENT_ACCEPTED>: BWC::debug stop: policy /Common/gold session s1 level 0", ""},
		{"BWC::debug start session", "local0.info Rule /Common/cmds <CLIENT_ACCEPTED>: BWC::debug start: policy /Common/gold session s1 level 0", ""},
		{"BWC::debug on", "", "wrong # args"},
		{"BWC::debug", "", "wrong # args"},
		{"BWC::debug start session extra", "", "wrong # args"},
	} {
		var logged []string
		env := &Env{Log: func(facility, line string) { logged = append(logged, facility+" "+line) }}
		f := &bwcFake{fakeConn: newFakeConn(), debug: "policy /Common/gold session s1 level 0"}
		_, err := evalIn(t, f, env, ClientAccepted, c.expr)
		var info []string
		for _, l := range logged {
			if strings.HasPrefix(l, "local0.info ") {
				info = append(info, l)
			}
		}
		if got := strings.Join(info, "\n"); got != c.log || (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: logged %q, error %v; want %q, %q", c.expr, got, err, c.log, c.err)
		}
	}
	if _, err := evalIn(t, &bwcFake{fakeConn: newFakeConn()}, nil, ClientAccepted, "BWC::debug start"); err == nil || !strings.Contains(err.Error(), "not attached") {
		t.Errorf("a flow under no policy: %v", err)
	}
	if _, err := evalIn(t, newFakeConn(), nil, ClientAccepted, "BWC::debug start"); err == nil || !strings.Contains(err.Error(), "cannot be shaped") {
		t.Errorf("a connection without a controller: %v", err)
	}
}

// bwcFake is a connection a rule can classify: it records what the
// BWC:: commands asked.
type bwcFake struct {
	*fakeConn
	got []string
	// debug is what BWCDebug describes ("": no policy).
	debug string
}

func (f *bwcFake) BWCDebug() (string, error) {
	if f.debug == "" {
		return "", errors.New("the flow is not attached to a bwc policy")
	}
	return f.debug, nil
}

func (f *bwcFake) BWCColor(policy, cat string) error {
	if cat == "none" {
		return errors.New("bwc policy " + policy + " has no category none")
	}
	f.got = append(f.got, "color "+policy+" "+cat)
	return nil
}

func (f *bwcFake) BWCPriority(level int) error {
	f.got = append(f.got, "priority "+strconv.Itoa(level))
	return nil
}

func (f *bwcFake) BWCMark(policy string, tos, qos int) error {
	f.got = append(f.got, "mark "+policy+" "+strconv.Itoa(tos)+" "+strconv.Itoa(qos))
	return nil
}

func (f *bwcFake) BWCPriorityName(name string) error {
	if name != "video" {
		return errors.New("priority group pg of bwc policy gold has no level " + name)
	}
	f.got = append(f.got, "priority "+name)
	return nil
}

func (f *bwcFake) BWCMeasure(session bool, name string) (BWCMeasurement, error) {
	if name == "nobody" {
		return nil, errors.New("no such session in the flow's bwc policy")
	}
	f.got = append(f.got, "measure "+strconv.FormatBool(session)+" "+name)
	return &fakeMeasure{f: f}, nil
}

// fakeMeasure records what BWC::measure did to a measurement.
type fakeMeasure struct{ f *bwcFake }

func (m *fakeMeasure) Start()          { m.f.got = append(m.f.got, "start") }
func (m *fakeMeasure) Stop()           { m.f.got = append(m.f.got, "stop") }
func (m *fakeMeasure) SetID(id string) { m.f.got = append(m.f.got, "id "+id) }
func (m *fakeMeasure) Bytes() uint64   { return 4096 }
func (m *fakeMeasure) Rate() uint64    { return 8000 }

// TestBWCClassify: BWC::color, BWC::priority and BWC::mark read their
// words and ask the connection; bad words are Tcl errors that ask
// nothing, as is a connection no controller shapes.
func TestBWCClassify(t *testing.T) {
	for _, c := range []struct{ expr, want, err string }{
		{"BWC::color set gold p2p", "color gold p2p", ""},
		{"BWC::color set gold none", "", "no category none"},
		{"BWC::color gold p2p", "", "wrong # args"},
		{"BWC::priority 7", "priority 7", ""},
		{"BWC::priority gold 3", "mark gold -2 -2,priority 3", ""},
		{"BWC::priority 8", "", "not a level from 0 to 7"},
		{"BWC::mark gold tos 8 qos 4", "mark gold 8 4", ""},
		{"BWC::mark gold p2p tos 32", "mark gold 32 -2", ""},
		{"BWC::mark gold qos passthrough", "mark gold -2 -1", ""},
		{"BWC::mark gold tos 256", "", "not 0 to 255"},
		{"BWC::mark gold qos 8", "", "not 0 to 7"},
		{"BWC::mark gold dscp 8", "", "wrong # args"},
		{"BWC::mark", "", "wrong # args"},
		{"BWC::mark gold", "", "wrong # args"},
		{"BWC::priority", "", "wrong # args"},
		{"BWC::color", "", "wrong # args"},
		{"BWC::priority video", "priority video", ""},
		{"BWC::priority gold video", "mark gold -2 -2,priority video", ""},
		{"BWC::priority audio", "", "has no level audio"},
		{"BWC::priority -3", "", "not a level from 0 to 7"},
		{"BWC::measure start flow", "measure false ,start", ""},
		{"BWC::measure stop session", "measure true ,stop", ""},
		{"BWC::measure start session 10.0.0.1:80", "measure true 10.0.0.1:80,start", ""},
		{"BWC::measure identifier MYSESSION session", "measure true ,id MYSESSION", ""},
		{"set r [BWC::measure get rate flow]; BWC::measure identifier $r flow", "measure false ,measure false ,id 8000", ""},
		{"set b [BWC::measure get bytes session x]; BWC::measure identifier $b flow", "measure true x,measure false ,id 4096", ""},
		{"BWC::measure start session nobody", "", "no such session"},
		{"BWC::measure start", "", "wrong # args"},
		{"BWC::measure start flow extra", "", "wrong # args"},
		{"BWC::measure get speed flow", "", "wrong # args"},
		{"BWC::measure begin flow", "", "wrong # args"},
		{"BWC::measure start user", "", "wrong # args"},
	} {
		f := &bwcFake{fakeConn: newFakeConn()}
		_, err := evalIn(t, f, nil, ClientAccepted, c.expr)
		if got := strings.Join(f.got, ","); got != c.want || (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: asked %q, error %v; want %q, %q", c.expr, got, err, c.want, c.err)
		}
	}
	if _, err := evalIn(t, newFakeConn(), nil, ClientAccepted, "BWC::priority 1"); err == nil || !strings.Contains(err.Error(), "cannot be shaped") {
		t.Errorf("a connection without a controller: %v", err)
	}
}
