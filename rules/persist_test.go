package rules

import (
	"fmt"
	"strings"
	"testing"
)

// persistFake is a fakeConn with a persistence table: it records each
// persist call and answers lookups from a map.
type persistFake struct {
	*fakeConn
	recs map[string]PersistTarget
}

func (f *persistFake) desc(p Persist) string {
	s := fmt.Sprintf("m%d %q", p.Method, p.Key)
	if p.Mask.IsValid() {
		s += " mask " + p.Mask.String()
	}
	if p.Timeout >= 0 {
		s += fmt.Sprintf(" %v", p.Timeout)
	}
	if p.AnyVirtual {
		s += " any-virtual"
	}
	if p.AnyService {
		s += " any-service"
	}
	if p.AnyPool {
		s += " any-pool"
	}
	if p.Pool != "" {
		s += " pool " + p.Pool
	}
	if c := p.Cookie; p.Method == PersistCookie {
		s += fmt.Sprintf(" cookie m%d %q", c.Method, c.Name)
		if c.Expiration >= 0 {
			s += fmt.Sprintf(" exp %v", c.Expiration)
		}
		if c.HashOffset != 0 || c.HashLength != 0 {
			s += fmt.Sprintf(" {%d %d}", c.HashOffset, c.HashLength)
		}
	}
	return s
}

func (f *persistFake) Persist(p Persist) error { f.record("persist %s", f.desc(p)); return nil }
func (f *persistFake) PersistAdd(p Persist) error {
	f.record("add %s", f.desc(p))
	f.recs[p.Key] = PersistTarget{Pool: "/Common/test_pool", Member: f.addrs[EndServer]}
	return nil
}
func (f *persistFake) PersistLookup(p Persist) (PersistTarget, bool, error) {
	t, ok := f.recs[p.Key]
	return t, ok, nil
}
func (f *persistFake) PersistDelete(p Persist) error {
	f.record("delete %s", f.desc(p))
	delete(f.recs, p.Key)
	return nil
}

func runPersist(t *testing.T, body string, events ...Event) (*persistFake, string, error) {
	t.Helper()
	logs := &logSink{}
	p := NewProgram(&Env{Log: logs.log}, mustCompile(t, "/Common/r", body))
	c := &persistFake{fakeConn: newFakeConn(), recs: map[string]PersistTarget{}}
	s := p.NewConnState(c)
	defer s.Release()
	for _, ev := range events {
		if err := s.Run(ev); err != nil {
			return c, strings.Join(logs.lines, "\n"), err
		}
	}
	return c, strings.Join(logs.lines, "\n"), nil
}

func TestPersistCommand(t *testing.T) {
	for _, tc := range []struct {
		name, body, want string
	}{
		{"uie", `when CLIENT_ACCEPTED { persist uie abc }`, `persist m2 "abc"`},
		{"universal with timeout", `when CLIENT_ACCEPTED { persist universal abc 3900 }`, `persist m2 "abc" 1h5m0s`},
		{"uie key list", `when CLIENT_ACCEPTED { persist uie {abc any virtual} }`, `persist m2 "abc" any-virtual`},
		{"source_addr", `when CLIENT_ACCEPTED { persist source_addr }`, `persist m1 ""`},
		{"source_addr mask", `when CLIENT_ACCEPTED { persist source_addr 255.255.255.0 }`, `persist m1 "" mask 255.255.255.0`},
		{"source_addr timeout", `when CLIENT_ACCEPTED { persist source_addr 60 }`, `persist m1 "" 1m0s`},
		{"source_addr mask timeout", `when CLIENT_ACCEPTED { persist source_addr 255.255.0.0 60 }`, `persist m1 "" mask 255.255.0.0 1m0s`},
		{"none", `when CLIENT_ACCEPTED { persist none }`, `persist m0 ""`},
		// persist cookie in the forms of F5's reference.
		{"cookie", `when CLIENT_ACCEPTED { persist cookie }`, `persist m5 "" cookie m0 ""`},
		{"cookie insert", `when CLIENT_ACCEPTED { persist cookie insert }`, `persist m5 "" cookie m1 ""`},
		{"cookie insert name", `when CLIENT_ACCEPTED { persist cookie insert MINE }`, `persist m5 "" cookie m1 "MINE"`},
		{"cookie insert name seconds", `when CLIENT_ACCEPTED { persist cookie insert MINE 3600 }`, `persist m5 "" cookie m1 "MINE" exp 1h0m0s`},
		{"cookie insert session", `when CLIENT_ACCEPTED { persist cookie insert MINE 0 }`, `persist m5 "" cookie m1 "MINE" exp 0s`},
		{"cookie insert d:h:m:s", `when CLIENT_ACCEPTED { persist cookie insert MINE 1:02:03:04 }`, `persist m5 "" cookie m1 "MINE" exp 26h3m4s`},
		{"cookie rewrite", `when CLIENT_ACCEPTED { persist cookie rewrite RW 60 }`, `persist m5 "" cookie m2 "RW" exp 1m0s`},
		{"cookie passive", `when CLIENT_ACCEPTED { persist cookie passive APP }`, `persist m5 "" cookie m3 "APP"`},
		{"cookie hash", `when CLIENT_ACCEPTED { persist cookie hash JSESSIONID }`, `persist m5 "" cookie m4 "JSESSIONID"`},
		{"cookie hash offset length timeout", `when CLIENT_ACCEPTED { persist cookie hash JSESSIONID {2 8} 600 }`, `persist m5 "" 10m0s cookie m4 "JSESSIONID" {2 8}`},
		{"cookie hash offset", `when CLIENT_ACCEPTED { persist cookie hash JSESSIONID 4 }`, `persist m5 "" cookie m4 "JSESSIONID" {4 0}`},
		{"add", `when SERVER_CONNECTED { persist add uie k1 30 }`, `add m2 "k1" 30s`},
		{"add pool scope", `when SERVER_CONNECTED { persist add uie {k1 any pool pool other} }`, `add m2 "k1" any-pool pool other`},
		{"delete", `when CLIENT_ACCEPTED { persist delete uie k1 }`, `delete m2 "k1"`},
		{"delete source", `when CLIENT_ACCEPTED { persist delete source_addr 10.1.1.1 }`, `delete m1 "10.1.1.1"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, logs, err := runPersist(t, tc.body, ClientAccepted, ServerConnected)
			if err != nil {
				t.Fatalf("%v\n%s", err, logs)
			}
			if got := c.String(); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestPersistLookup(t *testing.T) {
	body := `when SERVER_CONNECTED {
    persist add uie sess9
    set all [persist lookup uie sess9]
    set all2 [persist lookup uie sess9 all]
    set node [persist lookup uie sess9 node]
    set port [persist lookup uie sess9 port]
    set pool [persist lookup uie sess9 pool]
    set missing [persist lookup uie nothing]
    persist delete uie sess9
    set gone [persist lookup uie sess9 node]
}`
	logs := &logSink{}
	p := NewProgram(&Env{Log: logs.log}, mustCompile(t, "/Common/r", body))
	c := &persistFake{fakeConn: newFakeConn(), recs: map[string]PersistTarget{}}
	s := p.NewConnState(c)
	defer s.Release()
	if err := s.Run(ServerConnected); err != nil {
		t.Fatal(err, logs.lines)
	}
	for name, want := range map[string]string{
		"all": "/Common/test_pool 127.0.0.34 9000", "all2": "/Common/test_pool 127.0.0.34 9000",
		"node": "127.0.0.34", "port": "9000", "pool": "/Common/test_pool", "missing": "", "gone": "",
	} {
		if got, _ := s.Var(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
}

func TestPersistErrors(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"unsupported mode", `when CLIENT_ACCEPTED { persist ssl }`, "persist ssl is not supported"},
		{"cookie bad method", `when CLIENT_ACCEPTED { persist cookie frob }`, `bad persist cookie method "frob"`},
		{"cookie bad expiration", `when CLIENT_ACCEPTED { persist cookie insert C soon }`, `bad persist cookie expiration "soon"`},
		{"cookie insert too many", `when CLIENT_ACCEPTED { persist cookie insert C 1 2 }`, "wrong # args"},
		{"cookie passive expiration", `when CLIENT_ACCEPTED { persist cookie passive C 60 }`, "wrong # args"},
		{"cookie hash no name", `when CLIENT_ACCEPTED { persist cookie hash }`, "wrong # args"},
		{"cookie hash bad offset", `when CLIENT_ACCEPTED { persist cookie hash C {a b} }`, `bad persist cookie hash offset "a b"`},
		{"cookie hash bad timeout", `when CLIENT_ACCEPTED { persist cookie hash C {0 4} later }`, `bad persist timeout "later"`},
		{"cookie in lookup", `when CLIENT_ACCEPTED { persist lookup cookie k }`, `bad persist lookup mode "cookie"`},
		{"bad mode", `when CLIENT_ACCEPTED { persist frob }`, `bad persist mode "frob"`},
		{"bad timeout", `when CLIENT_ACCEPTED { persist uie k soon }`, `bad persist timeout "soon"`},
		{"bad lookup option", `when CLIENT_ACCEPTED { persist lookup uie k everything }`, `bad persist lookup option "everything"`},
		{"bad source key", `when CLIENT_ACCEPTED { persist lookup source_addr nothere }`, `bad persist source_addr key "nothere"`},
		{"missing key", `when CLIENT_ACCEPTED { persist uie }`, "wrong # args"},
		{"bad key scope", `when CLIENT_ACCEPTED { persist uie {k any where} }`, "bad persist key scope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, logs, err := runPersist(t, tc.body, ClientAccepted)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q (log %s)", err, tc.want, logs)
			}
		})
	}
	// A connection without a persistence table: a Tcl error, not a crash.
	_, _, err := run(t, nil, []string{`when CLIENT_ACCEPTED { persist uie k }`}, ClientAccepted)
	if err == nil || !strings.Contains(err.Error(), "no persistence table") {
		t.Fatalf("err %v", err)
	}
	// persist compiles now (it used to be refused at load).
	if _, err := Compile("/Common/u", "when CLIENT_ACCEPTED { persist uie [IP::client_addr] }"); err != nil {
		t.Fatal(err)
	}
}
