package rules

import (
	"strings"
	"testing"
	"time"
)

func TestSessionCommand(t *testing.T) {
	env := &Env{Table: NewTable()}
	now := time.Unix(1000, 0)
	env.Table.Now = func() time.Time { return now }
	run := func(virtual, body string) (string, error) {
		t.Helper()
		r := mustCompile(t, "s", "when CLIENT_ACCEPTED {\nset ::out ["+body+"]\n}")
		f := newLBFake()
		f.virtual = virtual
		s := NewProgram(env, r).NewConnState(f)
		defer s.Release()
		if err := s.Run(ClientAccepted); err != nil {
			return "", err
		}
		out, _ := s.Var("out")
		return out, nil
	}
	steps := []struct {
		virtual, body, want, err string
		advance                  time.Duration
	}{
		{"/Common/a", "session add uie k1 data1", "", "", 0},
		{"/Common/a", "session lookup uie k1", "data1", "", 0},
		{"/Common/a", "session lookup hash k1", "", "", 0},                           // another mode's records
		{"/Common/b", "session lookup uie k1", "", "", 0},                            // another virtual's records
		{"/Common/a", "session lookup universal k1", "data1", "", 0},                 // uie's other name
		{"/Common/a", "session add simple 10.0.0.1 s1 20", "", "", 15 * time.Second}, // simple is source_addr
		{"/Common/a", "session lookup source_addr 10.0.0.1", "s1", "", 15 * time.Second},
		{"/Common/a", "session lookup sticky 10.0.0.1", "s1", "", 20 * time.Second}, // the lookup restarted the timeout
		{"/Common/a", "session lookup sticky 10.0.0.1", "", "", 0},                  // 20 s idle: gone
		{"/Common/a", "session add ssl {id1 any virtual} shared", "", "", 0},
		{"/Common/b", "session lookup ssl {id1 any virtual}", "shared", "", 0},
		{"/Common/b", "session lookup ssl id1", "", "", 0},
		{"/Common/a", "session delete uie k1", "", "", 0},
		{"/Common/a", "session lookup uie k1", "", "", 0},
		{"/Common/a", "session add uie k2 d2", "", "", 179 * time.Second},
		{"/Common/a", "session lookup uie k2", "d2", "", 180 * time.Second}, // 180 s default
		{"/Common/a", "session lookup uie k2", "", "", 0},
		{"/Common/a", "session lookup uie {}", "", "the key is empty", 0},
		{"/Common/a", "session add cookie k v", "", `bad session mode "cookie"`, 0},
		{"/Common/a", "session add uie k", "", "wrong # args", 0},
		{"/Common/a", "session add uie k v -1", "", "bad timeout", 0},
		{"/Common/a", "session find uie k", "", `bad session subcommand "find"`, 0},
		{"/Common/a", "table keys -subtable {} -count", "0", "", 0}, // nothing leaks into the main table
	}
	for i, st := range steps {
		got, err := run(st.virtual, st.body)
		switch {
		case st.err != "":
			if err == nil || !strings.Contains(err.Error(), st.err) {
				t.Errorf("%d %s: err %v, want %q", i, st.body, err, st.err)
			}
		case err != nil:
			t.Errorf("%d %s: %v", i, st.body, err)
		case got != st.want:
			t.Errorf("%d %s: got %q, want %q", i, st.body, got, st.want)
		}
		now = now.Add(st.advance)
	}
}

func TestSessionKeepsApartFromTable(t *testing.T) {
	env := &Env{Table: NewTable()}
	r := mustCompile(t, "s", `when CLIENT_ACCEPTED {
		session add uie k from-session
		table set k from-table
		set ::a [session lookup uie k]
		set ::b [table lookup k]
	}`)
	s := NewProgram(env, r).NewConnState(newLBFake())
	defer s.Release()
	if err := s.Run(ClientAccepted); err != nil {
		t.Fatal(err)
	}
	if got := vars(s, "a", "b"); got != "a=from-session b=from-table" {
		t.Errorf("got %s", got)
	}
}
