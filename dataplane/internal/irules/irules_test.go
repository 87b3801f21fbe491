package irules

import (
	"net/netip"
	"testing"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/rules"
)

// view is a flow view that records decisions; the methods a test does not
// need come from the embedded (nil) rules.Conn.
type view struct {
	rules.Conn
	client   netip.AddrPort
	sess     *rules.ConnState
	sessions int
	pool     string
}

func (v *view) RuleSession(prog *rules.Program) *rules.ConnState {
	if v.sess == nil {
		v.sessions++
		v.sess = prog.NewConnState(v)
	}
	return v.sess
}

func (v *view) Addr(e rules.Endpoint) netip.AddrPort { return v.client }

func (v *view) Decide(d rules.Decision) error {
	v.pool = d.Pool
	return nil
}

func program(t *testing.T, body string) *rules.Program {
	t.Helper()
	r, err := rules.Compile("/Common/r", body)
	if err != nil {
		t.Fatal(err)
	}
	prog := rules.NewProgram(&rules.Env{}, r)
	if err := prog.Init(); err != nil {
		t.Fatal(err)
	}
	return prog
}

func TestHook(t *testing.T) {
	if New(nil) != nil {
		t.Fatal("no program, yet a hook")
	}
	prog := program(t, `when CLIENT_ACCEPTED {
    if { [IP::client_addr] eq "10.0.0.9" } { pool other } else { pool web }
}`)
	h := New(prog)
	if Program(h) != prog {
		t.Error("Program does not give the program back")
	}
	for _, c := range []struct {
		ev   config.Event
		want bool
	}{{config.EventClientAccepted, true}, {config.EventClientData, false}, {"HTTP_REQUEST", false}} {
		if got := h.Handles(c.ev); got != c.want {
			t.Errorf("Handles(%s) = %v", c.ev, got)
		}
	}
	v := &view{client: netip.MustParseAddrPort("10.0.0.9:4000")}
	for i := 0; i < 2; i++ {
		if err := h.Run(config.EventClientAccepted, v); err != nil {
			t.Fatal(err)
		}
	}
	if v.pool != "other" || v.sessions != 1 {
		t.Errorf("pool %q after %d sessions; want other, one session per flow", v.pool, v.sessions)
	}
}
