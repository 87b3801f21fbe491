package objects

import (
	"testing"
)

func TestTimerPolicyKinds(t *testing.T) {
	tp := func(rules string) string {
		return "net timer-policy /Common/tp {\n    rules {\n" + rules + "\n    }\n}\n"
	}
	rule := func(name, body string) string { return "        " + name + " {\n" + body + "\n        }\n" }
	sp := "net service-policy /Common/sp { timer-policy /Common/tp }\n"
	for _, tc := range []struct {
		name, text string
		refused    string // substring of the refusal, "" when it loads
	}{
		{"ssh an hour", tp(rule("ssh", "            destination-ports {\n                22 { }\n            }\n            ip-protocol tcp\n            timers {\n                flow-idle-timeout {\n                    value 3600\n                }\n            }")) + sp +
			"ltm virtual /Common/v { destination /Common/127.195.0.1:22 service-policy /Common/sp }\n", ""},
		{"range and service name", tp(rule("web", "            destination-ports { 8000-8099 { } http { } }\n            ip-protocol tcp\n            timers { flow-idle-timeout { value 30 } }")), ""},
		{"immediate", tp(rule("dns", "            destination-ports { 53 { } }\n            ip-protocol udp\n            timers { flow-idle-timeout { value immediate } }")), ""},
		{"indefinite all-other", tp(rule("rest", "            timers { flow-idle-timeout { value indefinite } }")), ""},
		{"unspecified by number", tp(rule("gre", "            ip-protocol 47\n            timers { flow-idle-timeout { value unspecified } }")), ""},
		{"a bad value", tp(rule("r", "            timers { flow-idle-timeout { value forever } }")), `"forever" is not a timeout`},
		{"a negative value", tp(rule("r", "            timers { flow-idle-timeout { value -1 } }")), "is not a timeout"},
		{"too large", tp(rule("r", "            timers { flow-idle-timeout { value 4294967296 } }")), "is not a timeout"},
		{"not a timer", tp(rule("r", "            timers { flow-fin-timeout { value 5 } }")), `"flow-fin-timeout" is not a valid timer`},
		{"not a protocol", tp(rule("r", "            ip-protocol tcpp")), `"tcpp" is not a valid value`},
		{"protocol 256", tp(rule("r", "            ip-protocol 256")), "256"},
		{"not a port", tp(rule("r", "            destination-ports { 70000 { } }\n            ip-protocol tcp")), `"70000" is not a port`},
		{"backwards range", tp(rule("r", "            destination-ports { 90-80 { } }\n            ip-protocol tcp")), "first port is above its last"},
		{"ports without a port protocol", tp(rule("r", "            destination-ports { 22 { } }\n            ip-protocol icmp")), "tcp, udp or sctp only, not icmp"},
		{"ports with all-other", tp(rule("r", "            destination-ports { 22 { } }")), "not all-other"},
		{"missing timer policy", "net service-policy /Common/sp { timer-policy /Common/nope }\n", "nope"},
		{"missing service policy", "ltm virtual /Common/v { destination /Common/127.195.0.1:22 service-policy /Common/nope }\n", "01020036"},
		{"a route domain's", tp("") + sp + "net route-domain /Common/0 { id 0 service-policy /Common/sp }\n", ""},
		{"a route domain's missing", "net route-domain /Common/0 { id 0 service-policy /Common/nope }\n", "nope"},
		// A route domain's parent (whose service policy a child without
		// one takes) must be a route domain, by name or id, and the
		// parents must not lead back.
		{"a parent by name", "net route-domain /Common/rd4 { id 4 }\nnet route-domain /Common/rd6 { id 6 parent /Common/rd4 }\n", ""},
		{"a parent by relative name", "net route-domain /Common/rd4 { id 4 }\nnet route-domain /Common/rd6 { id 6 parent rd4 }\n", ""},
		{"a parent by id", "net route-domain /Common/rd4 { id 4 }\nnet route-domain /Common/rd6 { id 6 parent 4 }\n", ""},
		{"parent 65535 is none", "net route-domain /Common/rd6 { id 6 parent 65535 }\n", ""},
		{"a missing parent", "net route-domain /Common/rd6 { id 6 parent /Common/rd9 }\n", "01020036:3: The requested route domain (/Common/rd9) was not found."},
		{"a missing parent id", "net route-domain /Common/rd6 { id 6 parent 9 }\n", "(9) was not found"},
		{"its own parent", "net route-domain /Common/rd6 { id 6 parent /Common/rd6 }\n", "route domain /Common/rd6: its parents lead back to it (/Common/rd6 -> /Common/rd6)"},
		{"a loop of parents", "net route-domain /Common/rd4 { id 4 parent rd6 }\nnet route-domain /Common/rd6 { id 6 parent rd4 }\n", "its parents lead back to it (/Common/rd4 -> /Common/rd6 -> /Common/rd4)"},
		{"a missing parent by relative name", "net route-domain /Common/rd6 { id 6 parent rd9 }\n", "(/Common/rd9) was not found"},
	} {
		checkRefusal(t, tc.name, tc.text, tc.refused)
	}
}
