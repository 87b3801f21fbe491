package objects

import (
	"strings"
	"testing"
)

func TestCheckVirtualType(t *testing.T) {
	flag := func(w string) *Value { return &Value{Str: w} }
	for _, tc := range []struct {
		name  string
		props map[string]*Value
		bad   string
	}{
		{"standard", map[string]*Value{"pool": flag("/Common/p")}, ""},
		{"reject", map[string]*Value{"reject": flag("reject")}, ""},
		{"reject, pool none", map[string]*Value{"reject": flag("reject"), "pool": flag("none")}, ""},
		{"reject with a pool", map[string]*Value{"reject": flag("reject"), "pool": flag("/Common/p")}, "cannot have a pool"},
		{"two types", map[string]*Value{"reject": flag("reject"), "ip-forward": flag("ip-forward")}, "more than one type"},
		{"ip-forward with a pool", map[string]*Value{"ip-forward": flag("ip-forward"), "pool": flag("/Common/p")}, ""},
	} {
		err := checkVirtualType(&Object{Name: "/Common/v", Props: tc.props})
		if tc.bad == "" && err != nil || tc.bad != "" && (err == nil || !strings.Contains(err.Error(), tc.bad)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.bad)
		}
	}
}

func TestVirtualTypeSet(t *testing.T) {
	item := &Item{Props: map[string]*Value{"reject": {Str: "reject"}, "pool": {Str: "none"}}}
	seen := ""
	if !virtualTypeSet(item, "ip-forward", &seen) || item.Props["reject"] != nil || item.Props["pool"] == nil {
		t.Fatalf("ip-forward did not replace reject: %v", item.Props)
	}
	if !virtualTypeSet(item, "pool", &seen) || !virtualTypeSet(item, "ip-forward", &seen) {
		t.Fatal("a property that is not a type, or the same type again, refused")
	}
	if virtualTypeSet(item, "reject", &seen) {
		t.Fatal("a second type in one statement accepted")
	}
}
