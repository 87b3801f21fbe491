package daemon

import (
	"strings"
	"testing"
)

// TestKeptRefsWarn: tmsh create/modify of a virtual that names a profile
// openltm keeps and does not act on (sctp, kept verbatim; a
// certificate-authority table) warn as loading the saved file does; a
// modify warns only of the references it adds; a kept profile's
// defaults-from naming its kind's built-in gives no second warning.
func TestKeptRefsWarn(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	const (
		sctpRef = "ltm virtual /Common/v1 refers to ltm profile sctp /Common/sc1, which openltm does not act on"
		caRef   = "ltm virtual /Common/v1 refers to ltm profile certificate-authority /Common/ca1, which openltm does not act on"
	)
	mustRun(t, s, "create ltm profile sctp sc1")
	for _, tc := range []struct {
		cmd       string
		want, not []string
	}{
		{"create ltm profile certificate-authority ca1", []string{"certificate-authority /Common/ca1 is kept and saved back"}, []string{"refers to"}},
		{"create ltm virtual v1 destination 127.245.0.1:80 ip-protocol sctp profiles replace-all-with { sc1 }", []string{"Warning: " + sctpRef + "\n"}, nil},
		{"modify ltm virtual v1 profiles add { ca1 }", []string{"Warning: " + caRef + "\n"}, []string{sctpRef}},
		{"modify ltm virtual v1 description kept", nil, []string{"refers to"}},
		{"create ltm virtual v2 destination 127.245.0.2:80 profiles replace-all-with { tcp }", nil, []string{"refers to"}},
	} {
		out, errOut := run(t, s, tc.cmd)
		if errOut != "" {
			t.Fatalf("%s: %s", tc.cmd, errOut)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s:\n%s\nwant %q", tc.cmd, out, w)
			}
		}
		for _, w := range tc.not {
			if strings.Contains(out, w) {
				t.Errorf("%s:\n%s\nwant no %q", tc.cmd, out, w)
			}
		}
	}
	mustRun(t, s, "save sys config")
	out, errOut := run(t, s, "load sys config verify")
	if errOut != "" {
		t.Fatal(errOut)
	}
	for _, w := range []string{": " + sctpRef + "\n", ": " + caRef + "\n"} {
		if !strings.Contains(out, w) {
			t.Errorf("load:\n%s\nwant %q", out, w)
		}
	}
	if strings.Contains(out, "refers to ltm profile certificate-authority /Common/certificateauthority") {
		t.Errorf("load warns of ca1's defaults-from:\n%s", out)
	}
}
