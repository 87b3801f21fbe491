package objects

import "testing"

func TestPlainName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"admin", "admin"},
		{"/Common/admin", "admin"},
		{"/Dev/app/Ops", "Ops"},
		{"/Common/10.1.1.245/24", "10.1.1.245/24"},
		{"/Dev/app/2001:db8::1/64", "2001:db8::1/64"},
		{"/Common/1234", "1234"},
		{"/10.1.1.245/24", "10.1.1.245/24"},
		{"/Common/ui.advisory.enabled", "ui.advisory.enabled"},
	} {
		if got := plainName(tc.in); got != tc.want {
			t.Errorf("plainName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
