package objects

import "testing"

func TestHandlesPanicOnMisspelling(t *testing.T) {
	virtual := Default.MustKind("ltm virtual")
	for _, tc := range []struct {
		name  string
		look  func()
		panic bool
	}{
		{"kind", func() { Default.MustKind("ltm pool") }, false},
		{"misspelt kind", func() { Default.MustKind("ltm pools") }, true},
		{"prop", func() { virtual.MustProp("destination") }, false},
		{"misspelt prop", func() { virtual.MustProp("destinaton") }, true},
		{"a flag's other word is not its name", func() { virtual.MustProp("disabled") }, true},
		{"item prop", func() { virtual.MustProp("persist").Sub.MustProp("default") }, false},
		{"spec prefix", func() { Default.MustSpec("ltm monitor ", "ltm pool") }, false},
		{"spec without a kind", func() { Default.MustSpec("ltm monitors ") }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if r := recover(); (r != nil) != tc.panic {
					t.Errorf("panic %v, want a panic: %v", r, tc.panic)
				}
			}()
			tc.look()
		})
	}
}

func TestHandleReads(t *testing.T) {
	pool := Default.MustKind("ltm pool")
	members := pool.MustProp("members")
	ratio, session := members.Sub.MustProp("ratio"), members.Sub.MustProp("session")
	objs, err := Default.ReadConfig("t", []byte("ltm pool /Common/p {\n    members {\n        /Common/10.0.0.1:80 {\n            ratio 3\n        }\n    }\n}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	p := objs[0]
	it := members.Get(p).Item("/Common/10.0.0.1:80")
	if it == nil {
		t.Fatalf("no member in %+v", members.Get(p))
	}
	cfg := NewConfig()
	cfg.Put(p)
	for _, tc := range []struct{ name, got, want string }{
		{"item's own value", ratio.StrIn(it), "3"},
		{"item default from the schema", session.StrIn(it), "user-enabled"},
		{"no item: the default", ratio.StrIn(nil), "1"},
		{"own scalar unset", pool.MustProp("load-balancing-mode").Str(p), ""},
		{"effective: the default", pool.MustProp("load-balancing-mode").Effective(cfg, p), "round-robin"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, tc.got, tc.want)
		}
	}
}
