package render

import (
	"bytes"
	"testing"

	"github.com/openltm/openltm/dataplane/bwc"
)

// TestRenderBWCPolicy: a policy's counters, and each measurement on under
// Measured, named as its log lines name it.
func TestRenderBWCPolicy(t *testing.T) {
	for _, c := range []struct {
		name string
		st   bwc.Stats
		want string
	}{
		{"unmeasured", bwc.Stats{MaxRate: 2e6, Rate: 1500, Passed: 100, PassedPkts: 1}, `------------------------------
Net::BWC Policy: gold
------------------------------
Max Rate (bits/sec)       2.0M
Current Rate (bits/sec)   1.5K
Passed
  Bits                     800
  Packets                    1
Delayed Bits                 0
Dropped
  Bits                       0
  Packets                    0
Dynamic Instances            0

`},
		{"measured", bwc.Stats{MaxRate: 2e6, Instances: 1, Measured: []bwc.Measured{
			{Rate: 1981440, Bytes: 495360},
			{What: "category video", Rate: 8000, Bytes: 1000},
			{What: "flow 10.1.1.1:5000", ID: "DL", Rate: 0, Bytes: 0},
		}}, `---------------------------
Net::BWC Policy: gold
---------------------------
Max Rate (bits/sec)    2.0M
Current Rate (bits/sec)   0
Passed
  Bits                    0
  Packets                 0
Delayed Bits              0
Dropped
  Bits                    0
  Packets                 0
Dynamic Instances         1
Measured
  Policy
    Rate (bits/sec)    2.0M
    Bits               4.0M
  Category video
    Rate (bits/sec)    8.0K
    Bits               8.0K
  Flow 10.1.1.1:5000 (DL)
    Rate (bits/sec)       0
    Bits                  0

`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := BWCPolicy(&b, "/Common/gold", c.st, Options{Folder: "/Common"}); err != nil {
				t.Fatal(err)
			}
			diff(t, b.String(), c.want)
		})
	}
}
