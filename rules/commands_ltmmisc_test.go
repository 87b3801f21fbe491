package rules

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// cloneConn records clone requests, and knows one pool.
type cloneConn struct {
	*fakeConn
	clones []string
}

func (c *cloneConn) Clone(pool string, member netip.AddrPort, side Side, ev Event) error {
	if pool != "ids_pool" {
		return fmt.Errorf("no such pool: %s", pool)
	}
	if ev == ServerConnected {
		return ErrCloneEvent // a Conn that does not clone from there
	}
	c.clones = append(c.clones, fmt.Sprintf("%s %v %s %s", pool, member, side, ev))
	return nil
}

// TestCloneCommand: clone pool asks the connection for a copy of the
// side the context names, in the event it runs in; its words are checked
// when the rule is saved; RULE_INIT refuses it; clone nexthop runs as a
// no-op the daemon warns of; CloneEvents lists the events it is in; a
// virtual whose connections cannot be cloned, or a Conn that does not
// clone from the event, skips it without a Tcl error.
func TestCloneCommand(t *testing.T) {
	for _, tc := range []struct {
		name, expr, want, err string
	}{
		{name: "pool", expr: "clone pool ids_pool", want: "ids_pool invalid AddrPort clientside CLIENT_ACCEPTED"},
		{name: "member", expr: "clone pool ids_pool member 127.185.9.1 8080", want: "ids_pool 127.185.9.1:8080 clientside CLIENT_ACCEPTED"},
		{name: "member colon", expr: "clone pool ids_pool member 127.185.9.1:8080", want: "ids_pool 127.185.9.1:8080 clientside CLIENT_ACCEPTED"},
		{name: "serverside", expr: "serverside { clone pool ids_pool }", want: "ids_pool invalid AddrPort serverside CLIENT_ACCEPTED"},
		{name: "unknown pool", expr: "clone pool [string trim { nopool }]", err: "no such pool: nopool"},
		{name: "dynamic bad member", expr: "clone pool ids_pool member [string trim { x.y }]", err: "x.y"},
	} {
		c := &cloneConn{fakeConn: newFakeConn()}
		_, err := evalIn(t, c, nil, ClientAccepted, tc.expr)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v; want an error with %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || strings.Join(c.clones, "; ") != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.name, c.clones, err, tc.want)
		}
	}
	if _, err := evalIn(t, newFakeConn(), nil, ClientAccepted, "clone pool ids_pool"); err != nil {
		t.Errorf("clone on a Conn without Cloner: %v, want it skipped", err)
	}
	r := mustCompile(t, "r", "when CLIENT_ACCEPTED { clone pool ids_pool member 127.185.9.1 80 }")
	if refs := r.Refs(); len(refs) != 1 || refs[0].Kind != "pool" || refs[0].Name != "ids_pool" {
		t.Errorf("refs: %+v", refs)
	}
	if !r.Clones() || mustCompile(t, "r", "when CLIENT_ACCEPTED { pool ids_pool }").Clones() {
		t.Error("Clones does not follow clone pool")
	}
	// A kind computed at run time may be pool; a program knows its rules
	// clone (the paths that prepare for it per message ask).
	computed := mustCompile(t, "r", "when DNS_REQUEST { set k pool\n clone $k ids_pool }")
	if !computed.Clones() || !NewProgram(nil, computed).Clones() || NewProgram(nil, mustCompile(t, "r", "when CLIENT_ACCEPTED { pool ids_pool }")).Clones() {
		t.Error("Clones does not follow a computed clone kind, or Program.Clones its rules")
	}

	for _, tc := range []struct{ body, err string }{
		{"when CLIENT_ACCEPTED { clone }", `r:1:24: wrong # args: should be "clone pool pool_name ?member addr ?port??"`},
		{"when CLIENT_ACCEPTED { clone pool }", "wrong # args"},
		{"when CLIENT_ACCEPTED { clone pool p member }", "wrong # args"},
		{"when CLIENT_ACCEPTED { clone pool p node 127.185.9.1 }", `r:1:37: clone: bad option "node": must be member`},
		{"when CLIENT_ACCEPTED { clone pool p member nohost }", `clone: invalid address "nohost"`},
		{"when CLIENT_ACCEPTED { clone vlan v }", `r:1:30: clone: bad option "vlan": must be pool or nexthop`},
		{"when RULE_INIT { clone pool p }", "r:1:18: clone: command is not valid in the current event (RULE_INIT)"},
	} {
		_, err := Compile("r", tc.body)
		var ce *CompileError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v; want a refusal with %q", tc.body, err, tc.err)
		}
	}
	// clone nexthop: the rule runs (the daemon warns), the command skips.
	r = mustCompile(t, "r", "when CLIENT_ACCEPTED { clone nexthop tap_vlan }")
	if !r.CloneNexthop() || r.Clones() || len(r.Unsupported()) != 0 {
		t.Errorf("clone nexthop: CloneNexthop %v Clones %v unsupported %v", r.CloneNexthop(), r.Clones(), r.Unsupported())
	}
	if _, err := evalIn(t, newFakeConn(), nil, ClientAccepted, "clone nexthop tap_vlan"); err != nil {
		t.Errorf("clone nexthop at run time: %v, want skipped", err)
	}
	// Any event with a connection takes it, as F5 lists no restriction.
	r = mustCompile(t, "r", "when HTTP_REQUEST { clone pool p }\nwhen SERVER_CONNECTED { clone pool p }\nwhen HTTP_REQUEST { clone pool q }")
	if got := fmt.Sprint(r.CloneEvents()); got != "[HTTP_REQUEST SERVER_CONNECTED]" || !r.Clones() || len(r.Unsupported()) != 0 {
		t.Errorf("CloneEvents = %s, unsupported %v", got, r.Unsupported())
	}
	c := &cloneConn{fakeConn: newFakeConn()}
	if _, err := evalIn(t, c, nil, HTTPRequest, "clone pool ids_pool"); err != nil || fmt.Sprint(c.clones) != "[ids_pool invalid AddrPort clientside HTTP_REQUEST]" {
		t.Errorf("clone in HTTP_REQUEST: %q %v", c.clones, err)
	}
	// An event the Conn does not clone from: skipped, no Tcl error.
	c = &cloneConn{fakeConn: newFakeConn()}
	if _, err := evalIn(t, c, nil, ServerConnected, "eval [list clone pool ids_pool]"); err != nil || len(c.clones) != 0 {
		t.Errorf("clone in SERVER_CONNECTED at run time: %q %v; want skipped", c.clones, err)
	}
}

// TestCPUUsage: cpu usage answers Env.CPUUsage for the interval named,
// rounded; bad words are refused when saved; no meter is a Tcl error.
func TestCPUUsage(t *testing.T) {
	var asked []time.Duration
	env := &Env{CPUUsage: func(d time.Duration) float64 {
		asked = append(asked, d)
		return 12.6
	}}
	for _, tc := range []struct {
		expr, want string
		d          time.Duration
	}{
		{"cpu usage 5secs", "13", 5 * time.Second},
		{"cpu usage 1min", "13", time.Minute},
		{"cpu usage 5mins", "13", 5 * time.Minute},
	} {
		asked = nil
		got, err := evalIn(t, newFakeConn(), env, HTTPRequest, tc.expr)
		if err != nil || got != tc.want || len(asked) != 1 || asked[0] != tc.d {
			t.Errorf("%s: %q %v %v; want %q over %v", tc.expr, got, err, asked, tc.want, tc.d)
		}
	}
	// RULE_INIT has no connection; the load is still the daemon's.
	r := mustCompile(t, "r", "when RULE_INIT { set ::c [cpu usage 1min] }")
	p := NewProgram(env, r)
	p.Init()
	if _, err := evalIn(t, newFakeConn(), &Env{}, ClientAccepted, "cpu usage 5secs"); err == nil || !strings.Contains(err.Error(), "not measured") {
		t.Errorf("cpu usage without a meter: %v", err)
	}
	for _, tc := range []struct{ body, err string }{
		{"when CLIENT_ACCEPTED { cpu usage }", "wrong # args"},
		{"when CLIENT_ACCEPTED { cpu load 5secs }", `r:1:28: cpu: bad option "load": must be usage`},
		{"when CLIENT_ACCEPTED { cpu usage 5sec }", `r:1:34: cpu usage: bad interval "5sec": must be 5secs, 1min or 5mins`},
	} {
		_, err := Compile("r", tc.body)
		var ce *CompileError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v; want a refusal with %q", tc.body, err, tc.err)
		}
	}
}

// TestHAStatus: HA::status answers for the connection's virtual's
// traffic group; a standalone engine (no HAStatus) is active; RULE_INIT
// and bad words are refused.
func TestHAStatus(t *testing.T) {
	var asked string
	standby := &Env{HAStatus: func(v string) bool { asked = v; return false }}
	active := &Env{HAStatus: func(v string) bool { asked = v; return true }}
	for _, tc := range []struct {
		env        *Env
		c          Conn
		expr, want string
		virtual    string
	}{
		{standby, infoConn{newFakeConn()}, "HA::status active", "0", "/Common/vs_http"},
		{standby, infoConn{newFakeConn()}, "HA::status standby", "1", "/Common/vs_http"},
		{active, infoConn{newFakeConn()}, "HA::status active", "1", "/Common/vs_http"},
		{active, newFakeConn(), "HA::status standby", "0", ""},
		{&Env{}, newFakeConn(), "HA::status active", "1", ""},
	} {
		asked = "unasked"
		got, err := evalIn(t, tc.c, tc.env, HTTPRequest, tc.expr)
		if err != nil || got != tc.want || (tc.env.HAStatus != nil && asked != tc.virtual) {
			t.Errorf("%s: %q %v (asked %q); want %q for %q", tc.expr, got, err, asked, tc.want, tc.virtual)
		}
	}
	for _, tc := range []struct{ body, err string }{
		{"when RULE_INIT { set ::a [HA::status active] }", "r:1:27: HA::status: command is not valid in the current event (RULE_INIT)"},
		{"when CLIENT_ACCEPTED { HA::status }", "wrong # args"},
		{"when CLIENT_ACCEPTED { HA::status offline }", `r:1:35: HA::status: bad option "offline": must be active or standby`},
	} {
		_, err := Compile("r", tc.body)
		var ce *CompileError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v; want a refusal with %q", tc.body, err, tc.err)
		}
	}
}

// TestLLookup: every value of the key, in order; nothing for a key not
// there or a value that is no list of pairs.
func TestLLookup(t *testing.T) {
	for _, tc := range []struct{ expr, want string }{
		{"llookup {{viol_name A} {x 1} {viol_name B}} viol_name", "A B"},
		{"llookup {{viol_name {a b}} {x 1}} viol_name", "{a b}"},
		{"llookup {{x 1}} viol_name", ""},
		{"llookup {} viol_name", ""},
		{"llookup {{x 1 2}} x", ""},
		{"llookup {a b} a", ""},
	} {
		got, err := evalIn(t, newFakeConn(), nil, ClientAccepted, tc.expr)
		if err != nil || got != tc.want {
			t.Errorf("%s: %q %v; want %q", tc.expr, got, err, tc.want)
		}
	}
	if _, err := evalIn(t, newFakeConn(), nil, ClientAccepted, "eval [list llookup x]"); err == nil {
		t.Error("llookup with one word: no error")
	}
}

// TestLTMMiscUnsupported: the commands openltm does not act on keep the
// rule with a warning that gives the reason; run, a Tcl error.
func TestLTMMiscUnsupported(t *testing.T) {
	for _, tc := range []struct{ cmd, why string }{
		{"nexthop external 01:23:45:ab:cd:ef", "routing table"},
		{"lasthop external 01:23:45:ab:cd:ef", "routing table"},
		{"tcpdump", "run tcpdump on the host"},
		{"check none", "validation level"},
		{"pem_dtos tac lookup 1234", "PEM"},
		{"radius_authenticate srv user pass", "AUTH::start"},
	} {
		name := strings.Fields(tc.cmd)[0]
		r, err := Compile("r", "when CLIENT_ACCEPTED { "+tc.cmd+" }")
		var ue *UnsupportedError
		if !errors.As(err, &ue) || r == nil || len(r.Unsupported()) != 1 || !strings.HasPrefix(r.Unsupported()[0], name+" (") || !strings.Contains(r.Unsupported()[0], tc.why) {
			t.Errorf("%s: %v; want it kept with a warning giving %q", tc.cmd, err, tc.why)
		}
		_, err = evalIn(t, newFakeConn(), &Env{}, ClientAccepted, "eval [list "+tc.cmd+"]")
		if err == nil || !strings.Contains(err.Error(), name+": not supported") {
			t.Errorf("%s at run time: %v", tc.cmd, err)
		}
	}
}
