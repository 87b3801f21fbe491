package daemon

import (
	"slices"
	"testing"
)

func TestVLANInterfaces(t *testing.T) {
	tests := []struct {
		raw  string
		want []string
	}{
		{"{ eth1 { } }", []string{"eth1"}},
		{"{ eth1 { untagged } eth2 { tagged } }", []string{"eth1", "eth2"}},
		{"{eth1{}eth2{ tag-mode service }}", []string{"eth1", "eth2"}},
		{"{ eth1 eth2 }", []string{"eth1", "eth2"}},
		{"{ }", nil},
		{"none", nil},
		{"", nil},
	}
	for _, tc := range tests {
		if got := vlanInterfaces(tc.raw); !slices.Equal(got, tc.want) {
			t.Errorf("vlanInterfaces(%q) = %q, want %q", tc.raw, got, tc.want)
		}
	}
}
