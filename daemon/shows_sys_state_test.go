package daemon

import (
	"fmt"
	"strings"
	"testing"
)

func TestShowSysState(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for i := 1; i <= 5; i++ {
		e.logs.Log("local0.info", fmt.Sprintf("Rule /Common/r <HTTP_REQUEST>: line %d", i))
	}
	for _, c := range []struct {
		cmd      string
		out, err []string
		not      string
	}{
		{cmd: "show sys mcp-state", out: []string{"Sys::mcp-state", "Running Phase                    running"}},
		{cmd: "show sys mcp-state field-fmt", out: []string{"sys mcp-state {\n", "    phase running\n"}},
		{cmd: "show sys mcp-state detail", err: []string{`"detail" unknown property`}},
		{cmd: "show sys ready", out: []string{"Configuration Ready  yes"}},
		{cmd: "show sys ready field-fmt", out: []string{"    config-ready yes\n"}},
		{cmd: "show sys log ltm", out: []string{"line 1\n", "line 5\n"}},
		{cmd: "show sys log ltm lines 2", out: []string{"line 4\n", "line 5\n"}, not: "line 3"},
		{cmd: "show sys log ltm lines 0", err: []string{"1 or more"}},
		{cmd: "show sys log ltm range now-1h", err: []string{`"range" unknown property`}},
		{cmd: "show sys log gtm", err: []string{"ltm log only"}},
	} {
		out, err := run(t, s, c.cmd)
		for _, w := range c.out {
			if !strings.Contains(out, w) {
				t.Errorf("%s: want %q in\n%s (err %s)", c.cmd, w, out, err)
			}
		}
		for _, w := range c.err {
			if !strings.Contains(err, w) {
				t.Errorf("%s: want error %q, got %q", c.cmd, w, err)
			}
		}
		if len(c.err) == 0 && err != "" {
			t.Errorf("%s: %s", c.cmd, err)
		}
		if c.not != "" && strings.Contains(out, c.not) {
			t.Errorf("%s: %q in\n%s", c.cmd, c.not, out)
		}
	}
}
