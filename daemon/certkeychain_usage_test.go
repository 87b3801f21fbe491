package daemon

import (
	"strings"
	"testing"
)

// cert-key-chain's usage: SERVER (the default) serves the certificate,
// CA gives the SSL forward proxy its CA; anything else is refused.
func TestParseCertKeyChainUsage(t *testing.T) {
	for _, tc := range []struct {
		raw, err string
		ca       []bool
	}{
		{"{ www { cert www.crt key www.key } }", "", []bool{false}},
		{"{ www { cert www.crt key www.key usage SERVER } }", "", []bool{false}},
		{"{ ca { cert ca.crt key ca.key usage CA } }", "", []bool{true}},
		{"{ www { cert www.crt key www.key } ca { cert ca.crt key ca.key usage ca } }", "", []bool{false, true}},
		{"{ ca { cert ca.crt key ca.key usage BOTH } }", "usage BOTH is not valid (SERVER or CA)", nil},
		{"{ ca { cert ca.crt usage CA } }", "needs both cert and key", nil},
	} {
		got, err := parseCertKeyChain("/Common/cs", tc.raw)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.raw, err, tc.err)
			}
			continue
		}
		if err != nil || len(got) != len(tc.ca) {
			t.Fatalf("%s: %v, %v", tc.raw, got, err)
		}
		for i, e := range got {
			if e.ca != tc.ca[i] {
				t.Errorf("%s: entry %s ca %v, want %v", tc.raw, e.name, e.ca, tc.ca[i])
			}
		}
	}
}
