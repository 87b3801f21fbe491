package render

import (
	"bytes"
	"testing"
	"time"

	"github.com/openltm/openltm/rules"
)

func TestRenderRuleEvent(t *testing.T) {
	st := rules.EventStats{Event: rules.HTTPRequest, Priority: 500, Executions: 1200, Failures: 3, Aborts: 1,
		Total: 1200 * 9690 * time.Nanosecond, Min: 5460 * time.Nanosecond, Max: 26730 * time.Nanosecond}
	tests := []struct {
		name string
		kind string
		st   rules.EventStats
		mhz  float64
		o    Options
		want string
	}{
		{"scaled", "Ltm", st, 2600, Options{Folder: "/Common"}, `-------------------------------------
Ltm::Rule Event: my_rule:HTTP_REQUEST
-------------------------------------
Priority                  500
Executions
  Total                  1.2K
  Failures                  3
  Aborts                    1
CPU Cycles on Executing
  Average               25.2K
  Maximum               69.5K
  Minimum               14.2K

`},
		{"raw, other folder", "Ltm", st, 2600, Options{Folder: "/Other", Raw: true}, `---------------------------------------------
Ltm::Rule Event: /Common/my_rule:HTTP_REQUEST
---------------------------------------------
Priority                  500
Executions
  Total                  1200
  Failures                  3
  Aborts                    1
CPU Cycles on Executing
  Average               25194
  Maximum               69498
  Minimum               14196

`},
		{"detail at 1 GHz", "Gtm", rules.EventStats{Event: rules.DNSRequest, Priority: 500, Executions: 2, Total: 3000, Min: 1000, Max: 2000}, 1000,
			Options{Folder: "/Common", Detail: true}, `------------------------------------
Gtm::Rule Event: my_rule:DNS_REQUEST
------------------------------------
Priority                  500
Executions
  Total                     2
  Failures                  0
  Aborts                    0
CPU Cycles on Executing
  Average                1.5K
  Maximum                2.0K
  Minimum                1.0K
Time on Executing (us)
  Average               1.500
  Maximum               2.000
  Minimum               1.000
  Total                 3.000
Cycles per us            1000

`},
		{"no executions", "Ltm", rules.EventStats{Event: rules.ClientAccepted, Priority: 100}, 2600, Options{Folder: "/Common"}, `----------------------------------------
Ltm::Rule Event: my_rule:CLIENT_ACCEPTED
----------------------------------------
Priority                  100
Executions
  Total                     0
  Failures                  0
  Aborts                    0
CPU Cycles on Executing
  Average                   0
  Maximum                   0
  Minimum                   0

`},
		{"field-fmt, gtm", "Gtm", st, 2600, Options{Folder: "/Common", FieldFmt: true, Raw: true}, `gtm rule-event my_rule:HTTP_REQUEST {
    aborts 1
    avg-cycles 25194
    event-type HTTP_REQUEST
    failures 3
    max-cycles 69498
    min-cycles 14196
    name my_rule
    priority 500
    total-executions 1200
}
`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := RuleEvent(&b, tc.kind, "/Common/my_rule", tc.st, tc.mhz, tc.o); err != nil {
				t.Fatal(err)
			}
			diff(t, b.String(), tc.want)
		})
	}
}
