package daemon

import "testing"

func TestNominalMHz(t *testing.T) {
	tests := []struct {
		name, cpuinfo, base, max string
		want                     float64
	}{
		{"model name GHz", "model name\t: Intel(R) Xeon(R) CPU E5-2660 0 @ 2.20GHz\ncpu MHz\t\t: 1200.000\n", "", "", 2200},
		{"model name MHz", "model name\t: Some CPU @ 800MHz\n", "", "", 800},
		{"base frequency before max", "model name\t: Intel(R) Xeon(R) Processor\ncpu MHz\t\t: 2599.998\n", "2100000\n", "3500000\n", 2100},
		{"max frequency", "model name\t: AMD EPYC\n", "", "3500000\n", 3500},
		{"cpu MHz", "model name\t: Intel(R) Xeon(R) Processor\ncpu MHz\t\t: 2599.998\n", "", "", 2599.998},
		{"first cpu only", "cpu MHz\t\t: 2000.000\ncpu MHz\t\t: 3000.000\n", "", "", 2000},
		{"nothing: 1 GHz", "", "", "", 1000},
		{"garbage: 1 GHz", "model name : x @ fastGHz\ncpu MHz : ?\n", "n/a", "", 1000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := nominalMHz(tc.cpuinfo, tc.base, tc.max); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
