package transcripts

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

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

// tacacsd ADDR SECRET [TYPES]: a TACACS+ server on ADDR (TCP) that lets
// alice/wonder and erin/erinpw log in, authorizes alice only and
// records the accounting records it gets; it takes the login types
// TYPES (pap, ascii, chap, comma-separated; pap alone by default) and
// answers another RESTART; it stops with the script.
func cmdTacacsd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: tacacsd ADDR SECRET [TYPES]")
	}
	var o authntest.TACACSOptions
	if len(args) == 3 {
		for _, t := range strings.Split(args[2], ",") {
			n, ok := map[string]byte{"pap": authntest.TACACSPAP, "ascii": authntest.TACACSASCII, "chap": authntest.TACACSCHAP}[t]
			if !ok {
				ts.Fatalf("tacacsd: type %q: want pap, ascii or chap", t)
			}
			o.Types = append(o.Types, n)
		}
	}
	s, err := authntest.StartTACACSWith(args[0], args[1], o)
	if err != nil {
		ts.Fatalf("tacacsd: %v", err)
	}
	tacacsServers.Store(args[0], s)
	ts.Defer(func() {
		tacacsServers.Delete(args[0])
		s.Close()
	})
}

// tacacsServers are the scripts' TACACS+ servers, by address.
var tacacsServers sync.Map

// tacacslog ADDR N: print the logins that passed ("login USER TYPE")
// and the accounting records ("start|stop USER PORT REMOTE ARGS...")
// of the TACACS+ server on ADDR, once it holds N records (waiting up
// to 15 seconds: the records are sent behind the connections' backs).
func cmdTacacslog(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: tacacslog ADDR N")
	}
	v, ok := tacacsServers.Load(args[0])
	if !ok {
		ts.Fatalf("tacacslog: no tacacsd on %s", args[0])
	}
	s := v.(*authntest.TACACS)
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	for i := 0; i < 300 && len(s.Records()) < n; i++ {
		time.Sleep(50 * time.Millisecond)
	}
	var b strings.Builder
	for _, l := range s.Logins() {
		fmt.Fprintf(&b, "login %s\n", l)
	}
	recs := s.Records()
	for _, r := range recs {
		fmt.Fprintf(&b, "%s\n", r)
	}
	ts.Stdout().Write([]byte(b.String()))
	if len(recs) != n {
		ts.Fatalf("tacacslog: %d accounting records, want %d", len(recs), n)
	}
}
