package daemon

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/gslb"
	"github.com/openltm/openltm/dataplane/monitor"
	"github.com/openltm/openltm/objects"
)

// The gtm application monitors become the LTM's probes, with their own
// settings read from the gtm kind and BIG-IP DNS's timing; oracle, wap,
// wmi, real-server, firepass and none probe nothing.
func TestTranslateGTMAppMonitors(t *testing.T) {
	const conf = `
gtm monitor ftp /Common/my_ftp { defaults-from /Common/ftp username mon password secret filename status.txt mode port }
gtm monitor imap /Common/my_imap { defaults-from /Common/imap username mon password secret folder Archive }
gtm monitor pop3 /Common/my_pop3 { defaults-from /Common/pop3 username mon password secret probe-timeout 3 }
gtm monitor smtp /Common/my_smtp { defaults-from /Common/smtp domain mail.example ignore-down-response enabled }
gtm monitor nntp /Common/my_nntp { defaults-from /Common/nntp newsgroup comp.lang.go }
gtm monitor ldap /Common/my_ldap { defaults-from /Common/ldap base "dc=example,dc=com" filter "(uid=mon)" security tls }
gtm monitor mysql /Common/my_mysql { defaults-from /Common/mysql username mon password secret database app send "SELECT 1" recv 1 count 5 }
gtm monitor postgresql /Common/my_pg { defaults-from /Common/postgresql username mon database app }
gtm monitor mssql /Common/my_mssql { defaults-from /Common/mssql username sa password secret }
gtm monitor radius /Common/my_radius { defaults-from /Common/radius secret s3cret username mon password pw nas-ip-address 127.114.9.1 }
gtm monitor radius-accounting /Common/my_acct { defaults-from /Common/radius_accounting secret s3cret destination *:1813 }
gtm monitor sip /Common/my_sip { defaults-from /Common/sip mode tcp filter "200 486" }
gtm monitor soap /Common/my_soap { defaults-from /Common/soap method ping url-path /svc return-value true }
gtm monitor soap /Common/soap_nomethod { defaults-from /Common/soap }
gtm monitor oracle /Common/my_oracle { defaults-from /Common/oracle username mon }
gtm monitor wmi /Common/my_wmi { defaults-from /Common/wmi }
gtm monitor gtp /Common/my_gtp { defaults-from /Common/gtp protocol-version 2 probe-attempts 2 }
gtm datacenter /Common/dc1 { }
gtm server /Common/s1 {
    datacenter /Common/dc1
    addresses { 127.114.9.10 { } }
    virtual-servers {
        ftp { destination 127.114.9.11:21 monitor /Common/my_ftp }
        imap { destination 127.114.9.11:143 monitor /Common/my_imap }
        pop3 { destination 127.114.9.11:110 monitor /Common/my_pop3 }
        smtp { destination 127.114.9.11:25 monitor /Common/my_smtp }
        nntp { destination 127.114.9.11:119 monitor /Common/my_nntp }
        ldap { destination 127.114.9.11:389 monitor /Common/my_ldap }
        mysql { destination 127.114.9.11:3306 monitor /Common/my_mysql }
        pg { destination 127.114.9.11:5432 monitor /Common/my_pg }
        mssql { destination 127.114.9.11:1433 monitor /Common/my_mssql }
        radius { destination 127.114.9.11:1812 monitor /Common/my_radius }
        acct { destination 127.114.9.11:1646 monitor /Common/my_acct }
        sip { destination 127.114.9.11:5060 monitor /Common/my_sip }
        soap { destination 127.114.9.11:80 monitor /Common/my_soap }
        soap_nomethod { destination 127.114.9.11:81 monitor /Common/soap_nomethod }
        oracle { destination 127.114.9.11:1521 monitor /Common/my_oracle }
        wmi { destination 127.114.9.11:82 monitor /Common/my_wmi }
        none { destination 127.114.9.11:83 monitor /Common/none }
        builtin_ftp { destination 127.114.9.11:2121 monitor /Common/ftp }
        gtp { destination 127.114.9.11:2123 monitor /Common/my_gtp }
        builtin_gtp { destination 127.114.9.11:2124 monitor /Common/gtp }
    }
}
`
	gc, kept, err := TranslateGSLB(objects.Default, gtmConfig(t, conf))
	if err != nil {
		t.Fatal(err)
	}
	vs := map[string]gslb.Monitor{}
	for _, v := range gc.Servers["/Common/s1"].VirtualServers {
		vs[v.Name] = v.Monitor
	}
	type timing struct {
		Type              monitor.Type
		Interval, Timeout time.Duration
		ProbeTimeout      time.Duration
		DownOnResponse    bool
		Destination       netip.AddrPort
	}
	sec := func(n int) time.Duration { return time.Duration(n) * time.Second }
	for _, tc := range []struct {
		vs    string
		want  timing
		check func(s *monitor.Spec) bool
	}{
		{"ftp", timing{"ftp", sec(10), sec(31), sec(5), true, netip.AddrPort{}}, func(s *monitor.Spec) bool {
			return *s.Login == monitor.Login{Username: "mon", Password: "secret", Filename: "status.txt", Port: true}
		}},
		{"imap", timing{"imap", sec(10), sec(31), sec(5), true, netip.AddrPort{}}, func(s *monitor.Spec) bool {
			return *s.Login == monitor.Login{Username: "mon", Password: "secret", Folder: "Archive"}
		}},
		{"pop3", timing{"pop3", sec(10), sec(31), sec(3), true, netip.AddrPort{}}, func(s *monitor.Spec) bool {
			return *s.Login == monitor.Login{Username: "mon", Password: "secret"}
		}},
		{"smtp", timing{"smtp", sec(10), sec(31), sec(5), false, netip.AddrPort{}}, func(s *monitor.Spec) bool {
			return *s.Login == monitor.Login{Domain: "mail.example"}
		}},
		{"nntp", timing{"nntp", sec(30), sec(120), sec(5), true, netip.AddrPort{}}, func(s *monitor.Spec) bool {
			return s.Login.Newsgroup == "comp.lang.go"
		}},
		{"ldap", timing{"ldap", sec(10), sec(31), sec(5), true, netip.AddrPort{}}, func(s *monitor.Spec) bool {
			return *s.LDAP == monitor.LDAPCheck{Base: "dc=example,dc=com", Filter: "(uid=mon)", Security: "tls", ChaseReferrals: true}
		}},
		{"mysql", timing{"mysql", sec(30), sec(91), sec(5), true, netip.AddrPort{}}, func(s *monitor.Spec) bool {
			return s.DB.Username == "mon" && s.DB.Database == "app" && s.DB.Send == "SELECT 1" && s.DB.Recv == "1" && s.DB.Count == 5
		}},
		{"pg", timing{"postgresql", sec(30), sec(91), sec(5), true, netip.AddrPort{}}, func(s *monitor.Spec) bool {
			return s.DB.Username == "mon" && s.DB.Database == "app"
		}},
		{"mssql", timing{"mssql", sec(30), sec(91), sec(5), true, netip.AddrPort{}}, func(s *monitor.Spec) bool {
			return s.DB.Username == "sa" && s.DB.Password == "secret"
		}},
		{"radius", timing{"radius", sec(10), sec(31), sec(5), true, netip.AddrPort{}}, func(s *monitor.Spec) bool {
			return *s.RADIUS == monitor.RADIUSCheck{Secret: "s3cret", Username: "mon", Password: "pw", NASIP: netip.MustParseAddr("127.114.9.1")}
		}},
		{"acct", timing{"radius-accounting", sec(10), sec(31), sec(5), true, netip.AddrPortFrom(netip.Addr{}, 1813)}, func(s *monitor.Spec) bool {
			return s.RADIUS.Secret == "s3cret"
		}},
		{"sip", timing{"sip", sec(30), sec(120), sec(5), true, netip.AddrPort{}}, func(s *monitor.Spec) bool {
			return s.SIP.Mode == "tcp" && len(s.SIP.Filter) == 2 && s.SIP.Filter[1] == 486
		}},
		{"soap", timing{"soap", sec(30), sec(120), sec(5), true, netip.AddrPort{}}, func(s *monitor.Spec) bool {
			return s.SOAP.Method == "ping" && s.SOAP.URLPath == "/svc" && s.SOAP.ReturnValue == "true"
		}},
		// F5's built-in ftp monitor names no account: an anonymous login.
		{"builtin_ftp", timing{"ftp", sec(10), sec(31), sec(5), true, netip.AddrPort{}}, nil},
		{"gtp", timing{"gtp", sec(30), sec(120), sec(5), true, netip.AddrPort{}}, func(s *monitor.Spec) bool {
			return s.GTPVersion == 2 && s.Attempts == 2 && s.AttemptInterval == sec(1)
		}},
		{"builtin_gtp", timing{"gtp", sec(30), sec(120), sec(5), true, netip.AddrPort{}}, func(s *monitor.Spec) bool {
			return s.GTPVersion == 1 && s.Attempts == 3
		}},
		// Kept kinds, a soap monitor with nothing to call, and none: no probe.
		{"soap_nomethod", timing{}, nil},
		{"oracle", timing{}, nil},
		{"wmi", timing{}, nil},
		{"none", timing{}, nil},
	} {
		m := vs[tc.vs]
		var got timing
		if s := m.Spec; s != nil {
			got = timing{s.Type, s.Interval, s.Timeout, s.ProbeTimeout, s.DownOnResponse, m.Destination}
		}
		if got != tc.want {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.vs, got, tc.want)
			continue
		}
		if tc.check != nil && !tc.check(m.Spec) {
			t.Errorf("%s: settings not read: %+v", tc.vs, m.Spec)
		}
	}
	if !strings.Contains(strings.Join(kept, "\n"), "a soap monitor without method has nothing to call; not run") {
		t.Errorf("kept %q: the soap monitor without method must be said", kept)
	}
}
