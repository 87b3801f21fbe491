package objects

import (
	"strings"
	"testing"
)

// Every gtm monitor kind BIG-IP has is known, with its built-in object
// and F5's defaults; the GSLB runs the kinds it has a probe for, and
// keeps the others, each setting set on them drawing a warning.
func TestGTMMonitorKinds(t *testing.T) {
	c := Default.Builtins()
	for _, tc := range []struct {
		kind, builtin     string
		interval, timeout string
		run               bool
		own               map[string]string // defaults of the kind's own settings
	}{
		{"ftp", "ftp", "10", "31", true, map[string]string{"mode": "passive", "filename": "none", "debug": "no"}},
		{"imap", "imap", "10", "31", true, map[string]string{"folder": "INBOX"}},
		{"pop3", "pop3", "10", "31", true, map[string]string{"username": "none"}},
		{"smtp", "smtp", "10", "31", true, map[string]string{"domain": "none"}},
		{"nntp", "nntp", "30", "120", true, map[string]string{"newsgroup": "none"}},
		{"ldap", "ldap", "10", "31", true, map[string]string{"security": "none", "chase-referrals": "yes", "mandatory-attributes": "no"}},
		{"mssql", "mssql", "30", "91", true, map[string]string{"count": "0", "debug": "no"}},
		{"mysql", "mysql", "30", "91", true, map[string]string{"count": "0"}},
		{"postgresql", "postgresql", "30", "91", true, map[string]string{"database": "none"}},
		{"oracle", "oracle", "30", "91", false, map[string]string{"count": "0"}},
		{"radius", "radius", "10", "31", true, map[string]string{"secret": "none", "nas-ip-address": "none"}},
		{"radius-accounting", "radius_accounting", "10", "31", true, map[string]string{"secret": "none"}},
		{"sip", "sip", "30", "120", true, map[string]string{"mode": "udp", "cipherlist": "DEFAULT:+SHA:+3DES:+kEDH"}},
		{"soap", "soap", "30", "120", true, map[string]string{"protocol": "http", "expect-fault": "no", "parameter-type": "bool"}},
		{"scripted", "scripted", "30", "120", true, map[string]string{"filename": "none"}},
		{"external", "external", "30", "120", true, map[string]string{"run": "none", "args": "none"}},
		{"gtp", "gtp", "30", "120", true, map[string]string{"protocol-version": "1", "probe-attempts": "3", "probe-interval": "1"}},
		{"none", "none", "0", "0", false, map[string]string{"destination": "*:6666", "probe-timeout": "0", "time-until-up": "86500"}},
		{"firepass", "firepass_gtm", "30", "90", false, map[string]string{"cipherlist": "HIGH:!ADH", "concurrency-limit": "95", "max-load-average": "12", "username": "gtmuser"}},
		{"real-server", "real_server", "30", "120", false, map[string]string{"agent": "Mozilla/4.0 (compatible: MSIE 5.0; Windows NT)", "method": "GET", "command": "GetWinMediaInfo"}},
		{"wap", "wap", "10", "31", false, map[string]string{"secret": "none"}},
		{"wmi", "wmi", "30", "120", false, map[string]string{"method": "POST", "url": "none"}},
		{"snmp", "snmp_gtm", "90", "180", true, map[string]string{"community": "public", "version": "v1", "port": "161", "probe-attempts": "3", "probe-interval": "1", "probe-timeout": "5"}},
		{"snmp-link", "snmp_link", "90", "180", true, map[string]string{"community": "public", "version": "v1", "port": "161"}},
	} {
		k := Default.Kind("gtm monitor " + tc.kind)
		if k == nil {
			t.Errorf("gtm monitor %s: no such kind", tc.kind)
			continue
		}
		o := c.Get(k, "/Common/"+tc.builtin)
		if o == nil || !o.BuiltIn {
			t.Errorf("gtm monitor %s: no built-in /Common/%s", tc.kind, tc.builtin)
			continue
		}
		if k.Passive == tc.run {
			t.Errorf("gtm monitor %s: passive %v, want run %v", tc.kind, k.Passive, tc.run)
		}
		want := map[string]string{"interval": tc.interval, "timeout": tc.timeout, "ignore-down-response": "disabled"}
		if tc.kind != "none" {
			want["destination"], want["probe-timeout"] = "*:*", "5"
		}
		for n, v := range tc.own {
			want[n] = v
		}
		for n, v := range want {
			if got := c.EffectiveStr(o, n); got != v {
				t.Errorf("gtm monitor %s /Common/%s: %s %q, want %q", tc.kind, tc.builtin, n, got, v)
			}
		}
		// The settings every run kind's probe reads are acted on; transparent
		// and debug-like extras are kept.
		if tc.run {
			for _, n := range []string{"interval", "timeout", "probe-timeout", "destination"} {
				if k.Prop(n).Passive {
					t.Errorf("gtm monitor %s: %s is not acted on", tc.kind, n)
				}
			}
		}
		// list all-properties shows the kind's own settings on the built-in.
		all := Format(o, PrintOpts{Detail: DetailAll, Resolve: c.Get, Folder: "/Common"})
		if !strings.HasPrefix(all, "gtm monitor "+tc.kind+" "+tc.builtin+" {\n") || !strings.Contains(all, "    interval "+tc.interval+"\n") {
			t.Errorf("gtm monitor %s: all-properties:\n%s", tc.kind, all)
		}
	}
}

// A bigip.conf with the application monitors reads without errors; what
// the GSLB does not act on (a kept kind, a setting its probe does not
// use) is a warning, and a setting F5 does not define is refused.
func TestGTMMonitorKindsRead(t *testing.T) {
	for _, tc := range []struct {
		text string
		warn string // a warning expected, "" none
		err  string // an error expected
	}{
		{text: `gtm monitor smtp /Common/m { defaults-from /Common/smtp domain mail.example interval 5 timeout 16 }`},
		{text: `gtm monitor mysql /Common/m { defaults-from /Common/mysql username mon password x database app send "SELECT 1" recv 1 debug yes }`},
		{text: `gtm monitor radius /Common/m { defaults-from /Common/radius secret s nas-ip-address 10.0.0.1 }`},
		{text: `gtm monitor sip /Common/m { defaults-from /Common/sip cipherlist DEFAULT }`, warn: `"cipherlist" is kept`},
		{text: `gtm monitor smtp /Common/m { defaults-from /Common/smtp debug yes }`, warn: `"debug" is kept`},
		{text: `gtm monitor wmi /Common/m { defaults-from /Common/wmi url /wmi }`, warn: "does not act on"},
		{text: `gtm monitor oracle /Common/m { defaults-from /Common/oracle }`, warn: "does not act on"},
		{text: `gtm monitor smtp /Common/m { defaults-from /Common/smtp folder INBOX }`, err: "folder"},
		{text: `gtm monitor ldap /Common/m { security starttls }`, err: "starttls"},
		{text: `gtm monitor radius /Common/m { nas-ip-address not-an-ip }`, err: "not-an-ip"},
		{text: `gtm monitor gtp /Common/m { protocol-version 2 probe-attempts 2 }`},
		{text: `gtm monitor gtp /Common/m { protocol-version 3 }`, err: "protocol-version"},
	} {
		l := readAndCheck(tc.text + "\n")
		var warns, errs []string
		for _, f := range l.Findings {
			if f.Category == Refused {
				errs = append(errs, f.Msg)
			} else {
				warns = append(warns, f.Msg)
			}
		}
		switch {
		case tc.err != "":
			if !strings.Contains(strings.Join(errs, "\n"), tc.err) {
				t.Errorf("%s: errors %q, want %q", tc.text, errs, tc.err)
			}
		case len(errs) > 0:
			t.Errorf("%s: refused: %q", tc.text, errs)
		case tc.warn == "" && len(warns) > 0:
			t.Errorf("%s: warnings %q, want none", tc.text, warns)
		case tc.warn != "" && !strings.Contains(strings.Join(warns, "\n"), tc.warn):
			t.Errorf("%s: warnings %q, want %q", tc.text, warns, tc.warn)
		}
	}
}
