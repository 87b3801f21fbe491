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

// TestKeptBuiltinRefs: F5's built-ins of kinds openltm keeps verbatim
// (the qoe, sctp, ipsecalg and pptp profiles, the real_server and wap
// monitors) exist on a BIG-IP: tmsh create/modify accept a reference to
// one with the kept-kind warning, as a loaded file does, and neither path
// says the object does not exist; the virtual runs as before, the
// references saved and loaded back the same. A name that is no built-in
// is still refused, nothing changed.
func TestKeptBuiltinRefs(t *testing.T) {
	dir := t.TempDir()
	e := openTest(t, dir)
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	ref := func(from, kind, name string) string {
		return from + " refers to " + kind + " /Common/" + name + ", which openltm does not act on"
	}
	for _, tc := range []struct {
		cmd  string
		want []string
	}{
		{"create ltm virtual v1 destination 127.248.0.1:80 profiles replace-all-with { tcp qoe }", []string{ref("ltm virtual /Common/v1", "ltm profile qoe", "qoe")}},
		{"modify ltm virtual v1 profiles add { ipsecalg }", []string{ref("ltm virtual /Common/v1", "ltm profile ipsecalg", "ipsecalg")}},
		{"create ltm virtual v2 destination 127.248.0.2:1723 profiles replace-all-with { tcp pptp }", []string{ref("ltm virtual /Common/v2", "ltm profile pptp", "pptp")}},
		{"create ltm virtual v3 destination 127.248.0.3:80 ip-protocol sctp profiles replace-all-with { sctp }", []string{ref("ltm virtual /Common/v3", "ltm profile sctp", "sctp")}},
		{"create ltm pool p1 monitor real_server members add { 127.248.0.10:80 }", []string{ref("ltm pool /Common/p1", "ltm monitor real-server", "real_server")}},
		{"modify ltm pool p1 monitor wap", []string{ref("ltm pool /Common/p1", "ltm monitor wap", "wap")}},
	} {
		out, errOut := run(t, s, tc.cmd)
		if errOut != "" {
			t.Fatalf("%s: %s", tc.cmd, errOut)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, "Warning: "+w+"\n") {
				t.Errorf("%s:\n%s\nwant %q", tc.cmd, out, w)
			}
		}
		if strings.Contains(out, "does not exist") || strings.Contains(out, "does not ship") {
			t.Errorf("%s:\n%s", tc.cmd, out)
		}
	}
	if out, _ := run(t, s, "list ltm virtual v1 profiles"); !strings.Contains(out, "qoe { }") || !strings.Contains(out, "ipsecalg { }") {
		t.Errorf("list:\n%s", out)
	}
	if _, errOut := run(t, s, "create ltm virtual v4 destination 127.248.0.4:80 profiles replace-all-with { tcp nosuch }"); !strings.Contains(errOut, "01020036") || !strings.Contains(errOut, "/Common/nosuch") {
		t.Errorf("a profile that is no built-in: %q", errOut)
	}
	if out, _ := run(t, s, "list ltm virtual v4"); out != "" {
		t.Errorf("v4 made: %s", out)
	}
	mustRun(t, s, "save sys config")
	out, errOut := run(t, s, "load sys config verify")
	if errOut != "" {
		t.Fatal(errOut)
	}
	for _, w := range []string{
		ref("ltm virtual /Common/v1", "ltm profile qoe", "qoe"),
		ref("ltm virtual /Common/v1", "ltm profile ipsecalg", "ipsecalg"),
		ref("ltm virtual /Common/v2", "ltm profile pptp", "pptp"),
		ref("ltm virtual /Common/v3", "ltm profile sctp", "sctp"),
		ref("ltm pool /Common/p1", "ltm monitor wap", "wap"),
	} {
		if !strings.Contains(out, ": "+w+"\n") {
			t.Errorf("load:\n%s\nwant %q", out, w)
		}
	}
	if strings.Contains(out, "does not exist") || strings.Contains(out, "does not ship") {
		t.Errorf("load:\n%s", out)
	}
}
