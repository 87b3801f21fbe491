package rules

import (
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/fix"
)

// TestFIXTag: FIX::tag get reads the message in hand in FIX_HEADER and
// FIX_MESSAGE (empty for a tag it lacks); map set gives a sender a tag
// map data group for every connection of the program, 1 for a data group
// that is missing or maps badly; map delete forgets them all.
func TestFIXTag(t *testing.T) {
	raw := []byte(strings.ReplaceAll("8=FIX.4.4|9=53|35=0|34=3|49=BANZAI|52=20250101-10:00:30.000|56=EXEC|10=143|", "|", "\x01"))
	dgs := map[string]*DataGroup{}
	for name, recs := range map[string][]Record{
		"tagmap": {{Key: "10001", Value: "20001"}},
		"bad":    {{Key: "10", Value: "11"}},
	} {
		dg, err := NewDataGroup(name, DGInteger, recs)
		if err != nil {
			t.Fatal(err)
		}
		dgs[name] = dg
	}
	env := func(logged *[]string) *Env {
		return &Env{Log: func(_, l string) { *logged = append(*logged, l) },
			DataGroup: func(n string) (*DataGroup, bool) { dg, ok := dgs[n]; return dg, ok }}
	}
	for _, c := range []struct {
		name, ev, body, log, err string
		noMsg                    bool
	}{
		{name: "get in FIX_HEADER", ev: "FIX_HEADER", body: `log local0. "[FIX::tag get 49]-[FIX::tag get 35]-[FIX::tag get 56]-[FIX::tag get 8]"`, log: "BANZAI-0-EXEC-FIX.4.4"},
		{name: "get in FIX_MESSAGE", ev: "FIX_MESSAGE", body: `log local0. "<[FIX::tag get 58]> [FIX::tag get 34]"`, log: "<> 3"},
		{name: "map set", ev: "FIX_MESSAGE", body: `log local0. "[FIX::tag map set BANZAI tagmap] [FIX::tag map set X nosuch] [FIX::tag map set Y bad]"`, log: "0 1 1"},
		{name: "map delete", ev: "FIX_MESSAGE", body: `FIX::tag map set BANZAI tagmap; log local0. [FIX::tag map delete]`, log: "0"},
		{name: "get without a message", ev: "CLIENT_ACCEPTED", body: `FIX::tag get 49`, noMsg: true, err: "no FIX message in CLIENT_ACCEPTED"},
		{name: "bad tag", ev: "FIX_MESSAGE", body: `FIX::tag get x`, err: `tag "x" is not a positive number`},
		{name: "bad option", ev: "FIX_MESSAGE", body: `FIX::tag replace 49 X`, err: `bad option "replace"`},
		{name: "map arity", ev: "FIX_MESSAGE", body: `FIX::tag map set X`, err: "wrong # args"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := mustCompile(t, "fix", "when "+c.ev+" { "+c.body+" }")
			if u := r.Unsupported(); len(u) > 0 {
				t.Fatalf("refused as not implemented: %v", u)
			}
			var logged []string
			p := NewProgram(env(&logged), r)
			s := p.NewConnState(newFakeConn())
			defer s.Release()
			var m fix.Message
			if err := m.Parse(raw, false); err != nil {
				t.Fatal(err)
			}
			if !c.noMsg {
				s.BeginFIX(&m)
			}
			ev, _ := ParseEvent(c.ev)
			err := s.Run(ev)
			s.EndFIX()
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(logged) == 0 || !strings.HasSuffix(logged[len(logged)-1], ">: "+c.log) {
				t.Fatalf("logged %q, want %q", logged, c.log)
			}
			tags, ok := p.FIXTagMap("BANZAI")
			switch c.name {
			case "map set":
				if !ok || tags[10001] != 20001 {
					t.Fatalf("FIXTagMap(BANZAI) = %v %v", tags, ok)
				}
				if _, ok := p.FIXTagMap("X"); ok {
					t.Fatal("a sender got a map from a missing data group")
				}
			case "map delete":
				if ok {
					t.Fatal("map delete kept BANZAI's map")
				}
			}
		})
	}
	// RULE_INIT (no connection) sets the maps for all connections.
	var logged []string
	p := NewProgram(env(&logged), mustCompile(t, "init", `when RULE_INIT { FIX::tag map set client_1 tagmap }`))
	if err := p.Init(); err != nil {
		t.Fatal(err)
	}
	if tags, ok := p.FIXTagMap("client_1"); !ok || tags[10001] != 20001 {
		t.Fatalf("after RULE_INIT: %v %v", tags, ok)
	}
	if n := mustCompile(t, "n", "when FIX_HEADER { pool p }\nwhen FIX_MESSAGE { }\nwhen CLIENT_ACCEPTED { }").FIXNeeds(); len(n) != 2 {
		t.Fatalf("FIXNeeds = %+v", n)
	}
}
