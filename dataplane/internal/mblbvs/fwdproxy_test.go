package mblbvs

import (
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/fwdproxy"
	"github.com/openltm/openltm/dataplane/internal/sockopt"
)

// TestFwdCloseTimers: the explicit proxy takes close-wait, fin-wait and
// zero-window from the virtual's close handling, and nothing (no timer
// of its own) when none is set.
func TestFwdCloseTimers(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   *sockopt.Close
		want *fwdproxy.CloseTimers
	}{
		{"none", nil, nil},
		{"fastl4's only", &sockopt.Close{Loose: true, ClientTimeout: time.Second}, nil},
		{"all three", &sockopt.Close{AfterFIN: 5 * time.Second, FinWait: 2 * time.Second, ZeroWindow: 20 * time.Second, Loose: true},
			&fwdproxy.CloseTimers{AfterFIN: 5 * time.Second, FINWait: 2 * time.Second, ZeroWindow: 20 * time.Second}},
		{"zero window alone", &sockopt.Close{ZeroWindow: time.Second}, &fwdproxy.CloseTimers{ZeroWindow: time.Second}},
	} {
		got := fwdCloseTimers(tc.in)
		if (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
			t.Errorf("%s: = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
