package objects

import (
	"strings"
	"testing"
)

// TestRouteDomainReach: a route domain with strict isolation disabled
// reaches its parent, and on up while the route domains have it
// disabled; strict enabled (the default) reaches nothing, and a strict
// parent is reached but not passed.
func TestRouteDomainReach(t *testing.T) {
	for _, tc := range []struct {
		name, text, rd, want string
	}{
		{"strict by default", "net route-domain /Common/rd2 { id 2 parent /Common/0 }\n", "/Common/rd2", ""},
		{"strict enabled", "net route-domain /Common/rd2 { id 2 parent /Common/0 strict enabled }\n", "/Common/rd2", ""},
		{"no parent", "net route-domain /Common/rd2 { id 2 strict disabled }\n", "/Common/rd2", ""},
		{"parent 65535 is none", "net route-domain /Common/rd2 { id 2 parent 65535 strict disabled }\n", "/Common/rd2", ""},
		{"its parent", "net route-domain /Common/rd2 { id 2 parent /Common/0 strict disabled }\n", "/Common/rd2", "/Common/0"},
		{"its parent by id", "net route-domain /Common/rd2 { id 2 parent 0 strict disabled }\n", "/Common/rd2", "/Common/0"},
		{"a strict parent stops", "net route-domain /Common/rd2 { id 2 parent /Common/0 }\nnet route-domain /Common/rd3 { id 3 parent rd2 strict disabled }\n", "/Common/rd3", "/Common/rd2"},
		{"up the chain", "net route-domain /Common/rd2 { id 2 parent /Common/0 strict disabled }\nnet route-domain /Common/rd3 { id 3 parent rd2 strict disabled }\n", "/Common/rd3", "/Common/rd2 /Common/0"},
		{"a parent does not reach its child", "net route-domain /Common/rd2 { id 2 parent /Common/0 strict disabled }\nnet route-domain /Common/rd3 { id 3 parent rd2 strict disabled }\n", "/Common/rd2", "/Common/0"},
	} {
		cfg := Default.Builtins()
		objs, err := Default.ReadConfig("t.conf", []byte(tc.text), nil)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		for _, o := range objs {
			cfg.Put(o)
		}
		rd := cfg.Get(Default.Kind("net route-domain"), tc.rd)
		if rd == nil {
			t.Errorf("%s: no %s", tc.name, tc.rd)
			continue
		}
		var names []string
		for _, o := range RouteDomainReach(cfg, Default, rd) {
			names = append(names, o.Name)
		}
		if got := strings.Join(names, " "); got != tc.want {
			t.Errorf("%s: %s reaches %q, want %q", tc.name, tc.rd, got, tc.want)
		}
	}
}
