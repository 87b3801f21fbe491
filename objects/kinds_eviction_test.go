package objects

import (
	"testing"
)

func TestEvictionPolicyKind(t *testing.T) {
	ep := func(body string) string { return "ltm eviction-policy /Common/ep1 {\n" + body + "\n}\n" }
	for _, tc := range []struct {
		name, text string
		refused    string // substring of the refusal, "" when it loads
	}{
		{"full", ep("    high-water 90\n    low-water 70\n    strategies {\n        bias-bytes {\n            delay 5\n            enabled true\n        }\n        bias-idle {\n            enabled true\n        }\n    }") +
			"ltm virtual /Common/v { destination /Common/127.184.20.1:80 connection-limit 4 flow-eviction-policy /Common/ep1 }\n", ""},
		{"the built-in", "ltm virtual /Common/v { destination /Common/127.184.20.1:80 connection-limit 4 flow-eviction-policy /Common/default-eviction-policy }\n", ""},
		{"low at high", ep("    high-water 80\n    low-water 80"), ""},
		{"low above high", ep("    high-water 60\n    low-water 80"), "low-water 80 is above high-water 60"},
		{"low above the default high", ep("    low-water 97"), "above high-water 95"},
		{"high over 100", ep("    high-water 101"), "high-water"},
		{"low under 50", ep("    low-water 49"), "low-water"},
		{"not a strategy", ep("    strategies {\n        bias-random {\n            enabled true\n        }\n    }"), "bias-random"},
		{"enabled yes", ep("    strategies {\n        bias-idle {\n            enabled yes\n        }\n    }"), "yes"},
		{"low-priority port", ep("    strategies {\n        low-priority-port {\n            enabled true\n            ports {\n                web {\n                    port-number http\n                    protocol tcp\n                }\n            }\n        }\n    }"), ""},
		{"low-priority port not a port", ep("    strategies {\n        low-priority-port {\n            ports {\n                web {\n                    port-number webby\n                }\n            }\n        }\n    }"), `port-number "webby" is not a port`},
		{"low-priority port without a number", ep("    strategies {\n        low-priority-port {\n            ports {\n                web {\n                    protocol tcp\n                }\n            }\n        }\n    }"), `port-number "0" is not a port`},
		{"low-priority country", ep("    strategies {\n        low-priority-geographies {\n            countries { DE us }\n            enabled true\n        }\n    }"), ""},
		{"low-priority country not a code", ep("    strategies {\n        low-priority-geographies {\n            countries { Germany }\n        }\n    }"), `"Germany" is not a country`},
		{"slow-flow", ep("    slow-flow {\n        enabled true\n        eviction-type count\n        maximum 500\n        threshold-bps 100\n        throttling enabled\n    }"), ""},
		{"slow-flow percent over 100", ep("    slow-flow {\n        maximum 500\n    }"), "slow-flow maximum 500 is a percentage"},
		{"slow-flow throttling yes", ep("    slow-flow {\n        throttling yes\n    }"), "yes"},
		{"bias-fast and low priorities", ep("    strategies {\n        bias-fast {\n            delay 3\n            enabled true\n        }\n        low-priority-virtual-server {\n            enabled true\n            names { v1 }\n        }\n    }"), ""},
		{"global policy", "ltm global-settings connection { global-flow-eviction-policy /Common/default-eviction-policy }\n", ""},
		{"global policy missing", "ltm global-settings connection { global-flow-eviction-policy /Common/nope }\n", "The requested eviction policy (/Common/nope) was not found"},
		{"route domain policy", "net route-domain /Common/rd1 { id 1 connection-limit 5 flow-eviction-policy /Common/default-eviction-policy }\n", ""},
		{"route domain policy missing", "net route-domain /Common/rd1 { id 1 flow-eviction-policy /Common/nope }\n", "nope"},
		{"missing policy", "ltm virtual /Common/v { destination /Common/127.184.20.1:80 flow-eviction-policy /Common/nope }\n", "nope"},
	} {
		checkRefusal(t, tc.name, tc.text, tc.refused)
	}
}
