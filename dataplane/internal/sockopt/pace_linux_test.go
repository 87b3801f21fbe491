//go:build linux

package sockopt

import "testing"

// TestPacingAndLowReadBack sets rate-pace-max-rate (SO_MAX_PACING_RATE)
// and proxy-buffer-low's wait and resume (TCP_NOTSENT_LOWAT twice low,
// then high or the system's) on a real socket and reads them back; a
// side without a rate leaves the socket unbounded.
func TestPacingAndLowReadBack(t *testing.T) {
	const unbounded = ^uint64(0)
	cases := []struct {
		name             string
		side             *Side
		rate             uint64
		waiting, resumed int // TCP_NOTSENT_LOWAT after LowWait, after LowResume (-1: not run)
	}{
		{"rate", &Side{PacingRate: 125000}, 125000, -1, -1},
		{"low and high", &Side{NotSentLowat: 65536, NotSentLow: 16384}, unbounded, 32768, 65536},
		{"low only", &Side{NotSentLow: 4096}, unbounded, 8192, -2},
		{"untouched", &Side{}, unbounded, -1, -1},
		{"nil", nil, unbounded, -1, -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fd := socket(t)
			tc.side.Apply(fd)
			r, err := Read(fd)
			if err != nil {
				t.Fatal(err)
			}
			if r.PacingRate != tc.rate {
				t.Errorf("max pacing rate %d, want %d", r.PacingRate, tc.rate)
			}
			if tc.waiting < 0 {
				return
			}
			system := r.NotSentLowat // before any wait: the system's, or high
			tc.side.LowWait(fd)
			if r, _ := Read(fd); r.NotSentLowat != tc.waiting {
				t.Errorf("waiting: TCP_NOTSENT_LOWAT %d, want %d", r.NotSentLowat, tc.waiting)
			}
			tc.side.LowResume(fd)
			want := tc.resumed
			if want == -2 {
				want = system // no high: the system's again
			}
			if r, _ := Read(fd); r.NotSentLowat != want {
				t.Errorf("resumed: TCP_NOTSENT_LOWAT %d, want %d", r.NotSentLowat, want)
			}
		})
	}
}
