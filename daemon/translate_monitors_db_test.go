package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane"
)

// TestDBEchoScriptedMonitorsTranslated: the mysql, mssql, tcp-echo and
// scripted monitors run, with the database login and query read as
// postgresql's are, tcp-echo's destination kept, and the scripted
// monitor's file read and checked when it is set: a script that cannot
// run refuses the change, naming the file, line and column at fault.
func TestDBEchoScriptedMonitorsTranslated(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "smtp.script")
	os.WriteFile(good, []byte("expect \"220\"\nsend \"QUIT\\r\\n\"\n"), 0o600)
	bad := filepath.Join(dir, "bad.script")
	os.WriteFile(bad, []byte("expect \"220\"\nsend \"HELO\\q\"\n"), 0o600)
	e, _ := openWithPlane(t, t.TempDir()) // a running dataplane refuses what it cannot run
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		`create ltm monitor mysql m_my username mon password pw database app send "SELECT status FROM health" recv ready recv-row 1 recv-column 2`,
		`create ltm monitor mssql m_ms username sa password pw database app send "SELECT 1" recv 1 count 10 debug yes`,
		`create ltm monitor udp m_udp send ping recv pong debug yes`,
		"create ltm monitor tcp-echo m_echo",
		"create ltm monitor tcp-echo m_echo2 destination *:7007",
		"create ltm monitor scripted m_script filename "+good,
	)
	dc, skipped := Translate(e.schema, e.reveal(e.Config())[0])
	if len(skipped) != 0 {
		t.Fatalf("skipped %v", skipped)
	}
	for _, c := range []struct {
		name string
		typ  dataplane.MonitorType
		db   *dataplane.DBMonitor
	}{
		{"/Common/mysql", dataplane.MonitorMySQL, &dataplane.DBMonitor{}},
		{"/Common/m_my", dataplane.MonitorMySQL, &dataplane.DBMonitor{Username: "mon", Password: "pw", Database: "app",
			Send: "SELECT status FROM health", Recv: "ready", RecvRow: 1, RecvColumn: 2}},
		{"/Common/mssql", dataplane.MonitorMSSQL, &dataplane.DBMonitor{}},
		{"/Common/m_ms", dataplane.MonitorMSSQL, &dataplane.DBMonitor{Username: "sa", Password: "pw", Database: "app", Send: "SELECT 1", Recv: "1", Count: 10}},
		{"/Common/tcp_echo", dataplane.MonitorTCPEcho, nil},
		{"/Common/m_echo", dataplane.MonitorTCPEcho, nil},
	} {
		m := dc.Monitors[c.name]
		if m == nil || m.Type != c.typ || (c.db == nil) != (m.DB == nil) || c.db != nil && *m.DB != *c.db {
			t.Errorf("%s: %+v, want type %s db %+v", c.name, m, c.typ, c.db)
		}
	}
	// debug: the udp and database monitors trace their probes.
	for name, want := range map[string]bool{"/Common/m_ms": true, "/Common/m_udp": true, "/Common/m_my": false, "/Common/udp": false} {
		if m := dc.Monitors[name]; m == nil || m.Debug != want {
			t.Errorf("%s: %+v, want debug %v", name, m, want)
		}
	}
	if m := dc.Monitors["/Common/m_echo2"]; m == nil || m.Destination.Port() != 7007 {
		t.Errorf("m_echo2: %+v, want destination port 7007", m)
	}
	if m := dc.Monitors["/Common/m_script"]; m == nil || m.Type != dataplane.MonitorScripted || m.Script == nil ||
		m.Script.File != good || !strings.HasPrefix(m.Script.Text, "expect \"220\"") {
		t.Errorf("m_script: %+v", m)
	}
	if m := dc.Monitors["/Common/scripted"]; m != nil {
		t.Errorf("the built-in scripted monitor, with no filename, runs: %+v", m)
	}

	// Bad settings refuse the change, and nothing is created; the column
	// is the fault's (the backslash).
	for _, c := range []struct{ cmd, err string }{
		{"create ltm monitor scripted m_bad filename " + bad, bad + `:2:11: unknown escape \q`},
		{"create ltm monitor scripted m_rel filename smtp.script", `filename "smtp.script" is not an absolute path`},
		{"create ltm monitor scripted m_gone filename " + filepath.Join(dir, "gone.script"), "cannot read the script"},
		{"create ltm monitor mysql m_row recv-row 0", `recv-row "0" is not a number from 1`},
		{"create ltm monitor mssql m_col recv-column x", `recv-column "x" is not a number from 1`},
		{"create ltm monitor postgresql m_count count -1", `"-1" is not a valid value for "count"`},
	} {
		if _, err := run(t, s, c.cmd); !strings.Contains(err, c.err) {
			t.Errorf("%s: error %q, want one saying %q", c.cmd, err, c.err)
		}
	}
	if out, _ := run(t, s, "list ltm monitor scripted"); strings.Contains(out, "m_bad") || strings.Contains(out, "m_rel") {
		t.Errorf("a refused monitor was kept:\n%s", out)
	}
	// A user's scripted monitor without filename is kept, said not to run.
	mustRun(t, s, "create ltm monitor scripted m_none")
	if _, skipped := Translate(e.schema, e.reveal(e.Config())[0]); len(skipped) != 1 || !strings.Contains(skipped[0], "without filename") {
		t.Errorf("a scripted monitor without filename: %v", skipped)
	}
}
