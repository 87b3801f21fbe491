package rules

import (
	"os"
	"strings"
	"testing"
)

// TestTclPlatform: static::tcl_platform is there before RULE_INIT, as on
// BIG-IP, so rules that log the device name or branch on it run.
func TestTclPlatform(t *testing.T) {
	host, _ := os.Hostname()
	cases := []struct {
		name     string
		platform *Platform
		ev       Event
		body     string
		want     string
	}{
		{"machine in an event", nil, ClientAccepted, `log local0. "host=$static::tcl_platform(machine)"`, "host=" + host},
		{"machine in RULE_INIT", nil, RuleInit, `log local0. "host=$static::tcl_platform(machine)"`, "host=" + host},
		{"configured machine", &Platform{Machine: "bigip1.example.com"}, ClientAccepted, `log local0. $static::tcl_platform(machine)`, "bigip1.example.com"},
		{"configured version", &Platform{TMMVersion: "15.1.0"}, ClientAccepted, `log local0. "BigIP/$static::tcl_platform(tmmVersion)"`, "BigIP/15.1.0"},
		{"tmmVersion exists unset", nil, ClientAccepted, `log local0. <$static::tcl_platform(tmmVersion)>`, "<>"},
		{"info exists", nil, ClientAccepted, `log local0. "[info exists static::tcl_platform(machine)][info exists static::tcl_platform(nosuch)]"`, "10"},
		{"platform and os", nil, ClientAccepted, `log local0. "$static::tcl_platform(platform) [expr {[string length $static::tcl_platform(os)] > 0}]"`, "unix 1"},
		{"byte order", nil, ClientAccepted, `log local0. [expr {$static::tcl_platform(byteOrder) in {littleEndian bigEndian}}]`, "1"},
		{"peer check idiom", &Platform{Machine: "b.local"}, RuleInit, `foreach h {a.local b.local} { if { $h ne $static::tcl_platform(machine) } { append static::peers "$h " } }
log local0. [string trim $static::peers]`, "a.local"},
		{"a rule may overwrite it", nil, RuleInit, `set static::tcl_platform(machine) x; log local0. $static::tcl_platform(machine)`, "x"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			logs := &logSink{}
			st := NewStatics()
			if c.platform != nil {
				st.SetPlatform(*c.platform)
			}
			p := NewProgram(&Env{Log: logs.log, Statics: st}, mustCompile(t, "plat", "when "+c.ev.String()+" {\n"+c.body+"\n}"))
			if err := p.Init(); err != nil {
				t.Fatal(err)
			}
			if c.ev != RuleInit {
				s := p.NewConnState(newFakeConn())
				defer s.Release()
				if err := s.Run(c.ev); err != nil {
					t.Fatal(err)
				}
			}
			if len(logs.lines) != 1 || !strings.HasSuffix(logs.lines[0], ">: "+c.want) {
				t.Errorf("logs %q, want one ending %q", logs.lines, c.want)
			}
		})
	}
}
