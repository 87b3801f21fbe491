package objects

import "testing"

// Port lockdown values and traffic classes: what reads, and what is
// refused at its line and column (or at commit) naming what is valid.
func TestSelfAllowAndTrafficClassRefusals(t *testing.T) {
	for _, tc := range []struct{ name, text, refused string }{
		{"default", "net self /Common/s { address 127.201.2.1/32 allow-service default }", ""},
		{"all", "net self /Common/s { address 127.201.2.1/32 allow-service all }", ""},
		{"list", "net self /Common/s { address 127.201.2.1/32 allow-service { default tcp:4353 ospf:0 89:0 } }", ""},
		{"old-style list", "net self /Common/s { address 127.201.2.1/32 allow-service { tcp:22 { } } }", ""},
		{"bad word", "net self /Common/s { address 127.201.2.1/32 allow-service some }", `1:59: Syntax Error: "some" is not a valid value for "allow-service"`},
		{"bad entry", "net self /Common/s { address 127.201.2.1/32 allow-service { tcp:22 tcp:x } }", `1:68: Syntax Error: "tcp:x" is not a port lockdown entry`},
		{"bad protocol", "net self /Common/s { address 127.201.2.1/32 allow-service { smtp:25 } }", `"smtp:25" is not a port lockdown entry`},
		{"port too big", "net self /Common/s { address 127.201.2.1/32 allow-service { udp:65536 } }", `"udp:65536" is not a port lockdown entry`},
		{"defaults", "net self-allow { defaults { igmp:0 tcp:22 } }", ""},
		{"defaults none", "net self-allow { defaults none }", ""},
		{"default in defaults", "net self-allow { defaults { default } }", `"default" is not a port lockdown entry`},
		{"defaults unknown property", "net self-allow { colour red }", `"colour"`},
		{"class", "ltm traffic-class /Common/c { classification gold source-address 10.0.0.0 source-mask 255.0.0.0 destination-port 80 protocol tcp }", ""},
		{"class host", "ltm traffic-class /Common/c { classification gold destination-address 2001:db8::1 }", ""},
		{"class no classification", "ltm traffic-class /Common/c { source-address 10.0.0.0 }", "must have a classification"},
		{"class holey mask", "ltm traffic-class /Common/c { classification g source-address 10.0.0.0 source-mask 255.0.255.0 }", "is not a network"},
		{"class mask of another family", "ltm traffic-class /Common/c { classification g source-address 10.0.0.0 source-mask ffff:: }", "is not a network"},
		{"class mask alone", "ltm traffic-class /Common/c { classification g destination-mask 255.255.0.0 }", "is not a network"},
		{"class bad address", "ltm traffic-class /Common/c { classification g source-address ten }", `"ten"`},
		{"class protocol", "ltm traffic-class /Common/c { classification g protocol gre }", `"gre" is not a valid value for "protocol"`},
		{"class port", "ltm traffic-class /Common/c { classification g source-port 65536 }", "65536"},
		{"virtual class missing", "ltm virtual /Common/v { destination /Common/127.201.2.9:80 traffic-classes { /Common/nope } }", "01020036"},
		{"exclusions", "gtm global-settings metrics-exclusions { addresses { 127.201.2.5 2001:db8::53 } }", ""},
		{"exclusions bad", "gtm global-settings metrics-exclusions { addresses { 127.201.2.5 resolver } }", `"resolver" is not an IP address`},
	} {
		checkRefusal(t, tc.name, tc.text, tc.refused)
	}
}

func TestServiceAllowed(t *testing.T) {
	for _, tc := range []struct {
		allow, defaults, proto string
		port                   int
		want                   bool
	}{
		{"", SelfAllowDefaults, "tcp", 4353, false},
		{"none", SelfAllowDefaults, "tcp", 4353, false},
		{"all", "none", "udp", 9, true},
		{"default", SelfAllowDefaults, "tcp", 4353, true},
		{"default", SelfAllowDefaults, "tcp", 4354, false},
		{"default", "none", "tcp", 4353, false},
		{"{ tcp:4353 }", "none", "tcp", 4353, true},
		{"{ tcp:4353 }", "none", "udp", 4353, false},
		{"{ tcp:0 }", "none", "tcp", 1, true},
		{"{ udp:53 default }", "{ tcp:4353 }", "tcp", 4353, true},
		{"{ udp:53 }", "{ tcp:4353 }", "tcp", 4353, false},
		{"{\n    tcp:22\n    tcp:4353\n}", "none", "tcp", 4353, true},
	} {
		if got := ServiceAllowed(tc.allow, tc.defaults, tc.proto, tc.port); got != tc.want {
			t.Errorf("%q with defaults %q: %s:%d allowed %v, want %v", tc.allow, tc.defaults, tc.proto, tc.port, got, tc.want)
		}
	}
}
