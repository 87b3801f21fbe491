package transcripts

import (
	"path/filepath"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/openltm/openltm/dataplane/authn/authntest"
)

// slapd ADDR: run OpenLDAP's slapd on ADDR with its configuration and
// database under $WORK/slapd-ADDR, holding authntest's directory
// (dc=example,dc=com; carol/ldappw and dave/davepw in cn=staff,
// erin/erinpw not); it stops with the script.
func cmdSlapd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: slapd ADDR")
	}
	s, err := authntest.StartSlapd(filepath.Join(ts.Getenv("WORK"), "slapd-"+args[0]), args[0])
	if err != nil {
		ts.Fatalf("slapd: %v", err)
	}
	ts.Defer(s.Close)
}

// radiusd ADDR SECRET: a RADIUS server on ADDR (UDP) that accepts
// alice/wonder and rejects anyone else; it stops with the script.
func cmdRadiusd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: radiusd ADDR SECRET")
	}
	r, err := authntest.StartRADIUS(args[0], args[1])
	if err != nil {
		ts.Fatalf("radiusd: %v", err)
	}
	ts.Defer(r.Close)
}

// tacacsd ADDR SECRET: a TACACS+ server on ADDR (TCP) that lets
// alice/wonder and erin/erinpw log in and authorizes alice only; it
// stops with the script.
func cmdTacacsd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: tacacsd ADDR SECRET")
	}
	s, err := authntest.StartTACACS(args[0], args[1])
	if err != nil {
		ts.Fatalf("tacacsd: %v", err)
	}
	ts.Defer(s.Close)
}
