package daemon

import (
	"net/netip"
	"reflect"
	"testing"

	"github.com/openltm/openltm/dataplane"
)

// TestLoginMonitorsTranslated: the smtp, pop3, imap, ftp and ldap monitors run,
// with what they say to the member read from their own settings (BIG-IP's
// none as empty, imap's folder INBOX by default, ftp's mode).
func TestLoginMonitorsTranslated(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm monitor smtp m_smtp domain mail.example",
		"create ltm monitor pop3 m_pop3 username u password p",
		"create ltm monitor imap m_imap username u password p",
		"create ltm monitor imap m_imap2 defaults-from m_imap folder Archive",
		"create ltm monitor ftp m_ftp username u password p filename /pub/ok.txt mode port",
		"create ltm monitor nntp m_nntp username u password p newsgroup comp.lang.go",
		`create ltm monitor postgresql m_pg username mon password pw database app send "SELECT status FROM health" recv ready recv-row 1 recv-column 1`,
		"create ltm monitor radius m_radius secret s3 username mon password good nas-ip-address 192.0.2.7",
		"create ltm monitor radius-accounting m_acct secret s3",
		`create ltm monitor sip m_sip mode tcp request "OPTIONS sip:health@example SIP/2.0" headers "X-Probe: 1" filter "200 404" filter-neg 503`,
		`create ltm monitor ldap m_ldap base "dc=example,dc=com" filter "(uid=probe)" username "cn=mon,dc=example,dc=com" password p security tls mandatory-attributes yes chase-referrals no`,
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	dc, skipped := Translate(e.schema, e.reveal(e.Config())[0])
	if len(skipped) != 0 {
		t.Fatalf("skipped %v", skipped)
	}
	for _, c := range []struct {
		name string
		typ  dataplane.MonitorType
		want dataplane.MonitorLogin
	}{
		{"/Common/smtp", dataplane.MonitorSMTP, dataplane.MonitorLogin{}},
		{"/Common/m_smtp", dataplane.MonitorSMTP, dataplane.MonitorLogin{Domain: "mail.example"}},
		{"/Common/pop3", dataplane.MonitorPOP3, dataplane.MonitorLogin{}},
		{"/Common/m_pop3", dataplane.MonitorPOP3, dataplane.MonitorLogin{Username: "u", Password: "p"}},
		{"/Common/m_imap", dataplane.MonitorIMAP, dataplane.MonitorLogin{Username: "u", Password: "p", Folder: "INBOX"}},
		{"/Common/m_imap2", dataplane.MonitorIMAP, dataplane.MonitorLogin{Username: "u", Password: "p", Folder: "Archive"}},
		{"/Common/ftp", dataplane.MonitorFTP, dataplane.MonitorLogin{}},
		{"/Common/m_ftp", dataplane.MonitorFTP, dataplane.MonitorLogin{Username: "u", Password: "p", Filename: "/pub/ok.txt", Port: true}},
		{"/Common/m_nntp", dataplane.MonitorNNTP, dataplane.MonitorLogin{Username: "u", Password: "p", Newsgroup: "comp.lang.go"}},
	} {
		m := dc.Monitors[c.name]
		if m == nil || m.Type != c.typ || m.Login == nil || *m.Login != c.want {
			t.Errorf("%s: %+v, want type %s login %+v", c.name, m, c.typ, c.want)
		}
	}
	if m := dc.Monitors["/Common/m_pg"]; m == nil || m.Type != dataplane.MonitorPostgreSQL || m.DB == nil ||
		*m.DB != (dataplane.DBMonitor{Username: "mon", Password: "pw", Database: "app", Send: "SELECT status FROM health", Recv: "ready", RecvRow: 1, RecvColumn: 1}) {
		t.Errorf("m_pg: %+v", m)
	}
	for name, want := range map[string]dataplane.RADIUSMonitor{
		"/Common/m_radius": {Secret: "s3", Username: "mon", Password: "good", NASIP: netip.MustParseAddr("192.0.2.7")},
		"/Common/m_acct":   {Secret: "s3"},
	} {
		if m := dc.Monitors[name]; m == nil || m.RADIUS == nil || *m.RADIUS != want {
			t.Errorf("%s: %+v, want radius %+v", name, m, want)
		}
	}
	for name, want := range map[string]dataplane.SIPMonitor{
		"/Common/sip":   {Mode: "udp"},
		"/Common/m_sip": {Mode: "tcp", Request: "OPTIONS sip:health@example SIP/2.0", Headers: "X-Probe: 1", Filter: []int{200, 404}, FilterNeg: []int{503}},
	} {
		if m := dc.Monitors[name]; m == nil || m.Type != dataplane.MonitorSIP || !reflect.DeepEqual(m.SIP, &want) {
			t.Errorf("%s: %+v, want sip %+v", name, m, want)
		}
	}
	for _, c := range []struct {
		name string
		want dataplane.LDAPMonitor
	}{
		{"/Common/ldap", dataplane.LDAPMonitor{ChaseReferrals: true}},
		{"/Common/m_ldap", dataplane.LDAPMonitor{Base: "dc=example,dc=com", Filter: "(uid=probe)", Username: "cn=mon,dc=example,dc=com",
			Password: "p", Security: "tls", MandatoryAttributes: true}},
	} {
		m := dc.Monitors[c.name]
		if m == nil || m.Type != dataplane.MonitorLDAP || m.LDAP == nil || *m.LDAP != c.want {
			t.Errorf("%s: %+v, want ldap %+v", c.name, m, c.want)
		}
	}
}
