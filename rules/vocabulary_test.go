package rules

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/openltm/openltm/rules/tcl"
)

func TestUnsupportedF5Names(t *testing.T) {
	cases := []struct {
		name, body string
		want       []string // Unsupported()
		pos        string   // in the warning
	}{
		{"command", "when CLIENT_ACCEPTED {\n  IP::reputation [IP::client_addr]\n}", []string{"IP::reputation (" + ipUnsupported["IP::reputation"] + ")"}, ":2:3: command \"IP::reputation ("},
		{"event", "when ASM_REQUEST_DONE { log local0. hi }", []string{"ASM_REQUEST_DONE"}, ":1:6: event \"ASM_REQUEST_DONE\""},
		{"both, once each", "when ASM_REQUEST_DONE { ASM::disable }\nwhen CLIENT_ACCEPTED { ASM::disable; ASM::disable }", []string{"ASM_REQUEST_DONE", "ASM::disable"}, ":2:38: command \"ASM::disable\""},
		{"related flows", "when SERVER_CONNECTED { relate_server }", []string{"relate_server (" + unbackedMore["relate_server"] + ")"}, ":1:25: command \"relate_server ("},
		{"form of an implemented command", "when HTTP_RESPONSE {\n  HTTP::cookie sanitize sid\n}", []string{"HTTP::cookie sanitize"}, ":2:16: command \"HTTP::cookie sanitize\""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := Compile(c.name, c.body)
			var ue *UnsupportedError
			if !errors.As(err, &ue) {
				t.Fatalf("err %v (%T), want *UnsupportedError", err, err)
			}
			if r == nil {
				t.Fatal("no rule returned with the warning")
			}
			if got := r.Unsupported(); !reflect.DeepEqual(got, c.want) {
				t.Errorf("Unsupported() = %q, want %q", got, c.want)
			}
			if !strings.Contains(err.Error(), c.pos) || !strings.Contains(err.Error(), "valid on BIG-IP but not implemented yet") {
				t.Errorf("warning %q lacks %q", err, c.pos)
			}
		})
	}
}

func TestNotF5IsAnError(t *testing.T) {
	for _, body := range []string{
		"when CLIENT_ACCEPTED { HTTP::frobnicate }",
		"when CLIENT_ACCEPTED { socket localhost 80 }",
		"when CLIENT_ACCEPTED { source /etc/passwd }",
		"when NOT_AN_EVENT { drop }",
		"when STREAM_MATCHED { exec ls }",
	} {
		_, err := Compile("r", body)
		var ce *CompileError
		if !errors.As(err, &ce) {
			t.Errorf("%q: err %v, want a *CompileError", body, err)
		}
	}
}

func TestVocabularyCoversRegistry(t *testing.T) {
	// Every iRules command openltm registers beyond the Tcl core is one of
	// F5's, and every event openltm raises is one of F5's.
	core := map[string]bool{}
	for _, n := range tclCoreNames() {
		core[n] = true
	}
	for _, n := range commandTable().Names() {
		if core[n] {
			continue
		}
		if !IsF5Command(n) && !Extensions[n] && n != "when" && n != "priority" && n != "puts" {
			t.Errorf("registered command %q is not in F5's vocabulary", n)
		}
	}
	for _, n := range eventNames {
		if !IsF5Event(n) {
			t.Errorf("event %q is not in F5's vocabulary", n)
		}
	}
}

func TestLenientForms(t *testing.T) {
	// BIG-IP accepts a close brace directly followed by an open brace;
	// tclsh says "extra characters after close-brace".
	body := "when CLIENT_ACCEPTED {\n  if { [TCP::local_port] == 10100 }{\n    pool a\n  } else {\n    pool b\n  }\n  foreach {x y} {1 2}{ set z $x$y }\n}"
	c, _, err := run(t, nil, []string{body}, ClientAccepted)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.String(); got != "pool a" {
		t.Errorf("calls %q", got)
	}
	// The top-level timing statement is accepted.
	mustCompile(t, "timing", "timing on\nwhen CLIENT_ACCEPTED timing off { drop }")
	if _, err := Compile("bad", "timing maybe"); err == nil {
		t.Error("timing maybe compiled")
	}
}

// tclCoreNames are the commands of the Tcl core table.
func tclCoreNames() []string { return tcl.NewCommands().Names() }
