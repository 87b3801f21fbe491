package objects

import (
	"strings"
	"testing"
)

// What BIG-IP refuses of content adaptation: an adapt profile naming a
// virtual that is not internal, an internal virtual with a destination.
func TestAdaptValidation(t *testing.T) {
	const iv = "ltm virtual /Common/iv { internal }\n"
	for _, tc := range []struct {
		name, text, err string
	}{
		{"internal virtual", iv, ""},
		{"internal with any destination", "ltm virtual /Common/iv { internal destination 0.0.0.0:any }\n", ""},
		{"internal with a destination", "ltm virtual /Common/iv { internal destination 127.60.0.1:80 }\n",
			"The virtual server (/Common/iv) is an internal virtual server and cannot have a destination"},
		{"request-adapt to an internal virtual", iv + "ltm profile request-adapt /Common/ra { internal-virtual /Common/iv }\n", ""},
		{"response-adapt to an internal virtual", iv + "ltm profile response-adapt /Common/ra { internal-virtual /Common/iv preview-size 0 }\n", ""},
		{"request-adapt to a standard virtual", "ltm virtual /Common/sv { destination 127.60.0.1:80 }\nltm profile request-adapt /Common/ra { internal-virtual /Common/sv }\n",
			"The request-adapt profile (/Common/ra) names virtual server (/Common/sv) as its internal-virtual, which is not an internal virtual server."},
		{"response-adapt to a standard virtual", "ltm virtual /Common/sv { destination 127.60.0.1:80 }\nltm profile response-adapt /Common/ra { internal-virtual sv }\n",
			"The response-adapt profile (/Common/ra)"},
		{"no internal virtual", "ltm profile request-adapt /Common/ra { internal-virtual none }\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Default.Builtins()
			objs, err := Default.ReadConfig("t.conf", []byte(tc.text), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range objs {
				cfg.Put(o)
			}
			err = cfg.Validate(Default)
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("got %v, want %q", err, tc.err)
			}
		})
	}
	for _, bad := range []string{
		"ltm profile request-adapt /Common/ra { service-down-action bounce }\n",
		"ltm profile response-adapt /Common/ra { enabled maybe }\n",
		"ltm profile icap /Common/i { preview-length lots }\n",
	} {
		if _, err := Default.ReadConfig("t.conf", []byte(bad), nil); err == nil {
			t.Errorf("%q read without an error", bad)
		}
	}
}
