package rules

import (
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/diammsg"
)

// TestDiameterPersistSubcommands: DIAMETER::persist's sub-commands set
// the outcome the host applies (use, replace, bypass, ignore, timeout,
// the delete actions, bidirectional, direction) and read back what was
// set, or the session profile's (its key, its persist-timeout); bad
// values are refused with an error and set nothing.
func TestDiameterPersistSubcommands(t *testing.T) {
	raw := diammsg.Build(diammsg.FlagRequest, 272, 4, 1, 1,
		diammsg.AppendAVP(nil, diammsg.AVPSessionID, diammsg.AVPFlagMandatory, 0, []byte("gx;9")))
	for _, c := range []struct {
		name, body, log, err string
		classic              bool // the diameter profile's flows, not message routing
		want                 DiameterOutcome
	}{
		{name: "profile key and timeout", body: `log local0. "[DIAMETER::persist] [DIAMETER::persist timeout] [DIAMETER::persist bidirectional] [DIAMETER::persist direction]"`,
			log: "gx;9 180 0 detect"},
		{name: "modes", body: `DIAMETER::persist replace; log local0. ok`, log: "ok", want: DiameterOutcome{PersistMode: "replace"}},
		{name: "ignore", body: `DIAMETER::persist ignore; log local0. ok`, log: "ok", want: DiameterOutcome{PersistMode: "ignore"}},
		{name: "timeout", body: `DIAMETER::persist timeout 30; log local0. [DIAMETER::persist timeout]`, log: "30", want: DiameterOutcome{PersistTimeout: 30 * time.Second}},
		{name: "delete", body: `DIAMETER::persist delete-on-success; log local0. ok`, log: "ok", want: DiameterOutcome{PersistDelete: "delete-on-success"}},
		{name: "key and bidirection", body: `DIAMETER::persist user-7 enabled; log local0. "[DIAMETER::persist] [DIAMETER::persist bidirectional]"`, log: "user-7 1",
			want: DiameterOutcome{Persist: "user-7", PersistBidir: "true"}},
		{name: "direction", body: `DIAMETER::persist direction reverse; log local0. [DIAMETER::persist direction]`, log: "reverse", want: DiameterOutcome{PersistDirection: "reverse"}},
		{name: "bad timeout", body: `DIAMETER::persist timeout soon`, err: `bad value "soon"`},
		{name: "bad direction", body: `DIAMETER::persist direction sideways`, err: `bad direction "sideways"`},
		{name: "bad bidirection", body: `DIAMETER::persist k maybe`, err: `bad bidirection "maybe"`},
		{name: "too many", body: `DIAMETER::persist a b c`, err: "wrong # args"},
		{name: "modes off message routing", classic: true, body: `DIAMETER::persist use`, err: "only on message routing"},
		{name: "delete off message routing", classic: true, body: `DIAMETER::persist delete-on-any`, err: "only on message routing"},
		{name: "timeout set off message routing", classic: true, body: `DIAMETER::persist timeout 30`, err: "only on message routing"},
		{name: "key off message routing", classic: true, body: `DIAMETER::persist k2; log local0. [DIAMETER::persist]`, log: "k2", want: DiameterOutcome{Persist: "k2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var logged []string
			p := NewProgram(&Env{Log: func(_, l string) { logged = append(logged, l) }}, mustCompile(t, "dp", "when DIAMETER_INGRESS { "+c.body+" }"))
			s := p.NewConnState(newFakeConn())
			defer s.Release()
			s.BeginDiameterWith(append([]byte(nil), raw...), DiameterContext{ClientSide: true, PersistKey: "gx;9", PersistTTL: 180 * time.Second, Routed: !c.classic})
			err := s.Run(DiameterIngress)
			o := s.EndDiameter()
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
			if o.Persist != c.want.Persist || o.PersistMode != c.want.PersistMode || o.PersistTimeout != c.want.PersistTimeout ||
				o.PersistDelete != c.want.PersistDelete || o.PersistBidir != c.want.PersistBidir || o.PersistDirection != c.want.PersistDirection {
				t.Fatalf("outcome %+v", o)
			}
		})
	}
}
