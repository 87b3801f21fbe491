package daemon

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/mblb"
)

// TestSIPProfileTranslated: a sip profile makes the virtual a SIP one,
// balanced per message with mblb and per connection without; max-size
// bounds a message; sip_info persistence names its header; properties
// not acted on warn (the proxy settings are TestSIPProxySettings').
func TestSIPProfileTranslated(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.78.3.11:5060 127.78.3.12:5060 }",
		"create ltm profile sip sip_small defaults-from sip max-size 4096",
		"create ltm persistence sip sip_from defaults-from sip_info sip-info From timeout 60",
		"create ltm virtual v_msg destination 127.78.3.1:5060 pool p profiles replace-all-with { tcp { } mblb { } sip_small { } }",
		"create ltm virtual v_conn destination 127.78.3.2:5060 pool p profiles replace-all-with { tcp { } sip { } }",
		"create ltm virtual v_persist destination 127.78.3.3:5060 pool p profiles replace-all-with { tcp { } mblb { } sip { } } persist replace-all-with { sip_info { default yes } }",
		"create ltm virtual v_from destination 127.78.3.4:5060 pool p profiles replace-all-with { tcp { } mblb { } sip { } } persist replace-all-with { sip_from { default yes } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	out, _ := run(t, s, "modify ltm profile sip sip_small alg-enable enabled community c1 insert-via-header enabled terminate-on-bye disabled max-size 8192")
	for _, name := range []string{"alg-enable", "community"} {
		if !strings.Contains(out, `property "`+name+`" is kept`) {
			t.Errorf("no warning for %s:\n%s", name, out)
		}
	}
	for _, name := range []string{"max-size", "insert-via-header", "terminate-on-bye"} {
		if strings.Contains(out, `"`+name+`"`) {
			t.Errorf("a warning for %s:\n%s", name, out)
		}
	}
	dc, skipped := Translate(e.schema, e.Config())
	if len(skipped) != 0 {
		t.Fatalf("skipped %v", skipped)
	}
	for name, want := range map[string]struct {
		size    int
		perConn bool
		header  string
		method  dataplane.PersistMethod
	}{
		"/Common/v_msg":     {8192, false, "", ""},
		"/Common/v_conn":    {65535, true, "", ""},
		"/Common/v_persist": {65535, false, "Call-ID", dataplane.PersistSIP},
		"/Common/v_from":    {65535, false, "From", dataplane.PersistSIP},
	} {
		v := dc.Virtuals[name]
		if v == nil || v.MBLB == nil || v.MBLB.Request.Mode != mblb.SIP {
			t.Errorf("%s: not a SIP virtual: %+v", name, v)
			continue
		}
		o := v.MBLB.Request.SIP
		if v.MBLB.MaxMessageSize != want.size || o.PerConnection != want.perConn || o.PersistHeader != want.header {
			t.Errorf("%s: size %d per-connection %v header %q, want %+v", name, v.MBLB.MaxMessageSize, o.PerConnection, o.PersistHeader, want)
		}
		if want.method != "" && (v.Persist == nil || v.Persist.Method != want.method) {
			t.Errorf("%s: persistence %+v, want %s", name, v.Persist, want.method)
		}
	}
}

// TestSIPProfileRefused: sip beside http, or without a transport
// profile, is refused and the virtual not made; an mblb framing that
// contradicts sip is refused too.
func TestSIPProfileRefused(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.78.3.11:5060 }",
		"create ltm profile mblb mblb_len framing length",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		cmd, want string
	}{
		{"create ltm virtual v_http destination 127.78.3.5:5060 pool p profiles replace-all-with { tcp { } http { } sip { } }", "cannot be used with http profile"},
		{"create ltm virtual v_fast destination 127.78.3.6:5060 pool p profiles replace-all-with { fastL4 { } sip { } }", "requires a tcp or udp profile"},
		{"create ltm virtual v_len destination 127.78.3.7:5060 pool p profiles replace-all-with { tcp { } mblb_len { } sip { } }", "framing length cannot be used beside sip profile"},
	} {
		_, err := run(t, s, c.cmd)
		if !strings.Contains(err, c.want) {
			t.Errorf("%s: error %q, want one saying %q", c.cmd, err, c.want)
		}
		if out, err := run(t, s, "list ltm virtual "+strings.Fields(c.cmd)[3]); err == "" {
			t.Errorf("the refused virtual exists:\n%s", out)
		}
	}
	// Over UDP each datagram is a message; sip_info persistence keys on
	// its Call-ID there too.
	for _, c := range []string{
		"create ltm virtual v_udp destination 127.78.3.8:5060 ip-protocol udp pool p profiles replace-all-with { udp { } sip { } } persist replace-all-with { sip_info { default yes } }",
	} {
		if out, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s %s", c, out, err)
		}
	}
	dc, skipped := Translate(e.schema, e.Config())
	v := dc.Virtuals["/Common/v_udp"]
	if v == nil || v.SIP == nil || v.SIP.PersistHeader != "Call-ID" || v.Persist == nil || v.Persist.Method != dataplane.PersistSIP {
		t.Fatalf("udp virtual %+v (skipped %v)", v, skipped)
	}
}

// TestSIPProxySettings: the profile's Via, Record-Route, BYE, dialog and
// registration settings reach the engine; a user-via-header that is not
// a Via's protocol and address is refused with the virtual.
func TestSIPProxySettings(t *testing.T) {
	for i, tc := range []struct {
		props   string
		want    mblb.SIPOptions
		refused string
	}{
		{"", mblb.SIPOptions{TerminateOnBye: true, DialogTimeout: 10 * time.Second, SessionTimeout: 300 * time.Second,
			MaxRegistrations: 100, MaxSessionsPerRegistration: 50, RegistrationTimeout: 3600 * time.Second}, ""},
		{"insert-via-header enabled secure-via-header enabled insert-record-route-header enabled terminate-on-bye disabled",
			mblb.SIPOptions{Via: true, SecureVia: true, RecordRoute: true, DialogTimeout: 10 * time.Second, SessionTimeout: 300 * time.Second,
				MaxRegistrations: 100, MaxSessionsPerRegistration: 50, RegistrationTimeout: 3600 * time.Second}, ""},
		{`user-via-header "SIP/2.0/TLS sbc.example.net:5061" dialog-aware enabled dialog-establishment-timeout 0 sip-session-timeout 60 max-registrations 0 max-sessions-per-registration 2 registration-timeout 120`,
			mblb.SIPOptions{UserVia: "SIP/2.0/TLS sbc.example.net:5061", TerminateOnBye: true, DialogAware: true, SessionTimeout: 60 * time.Second,
				MaxSessionsPerRegistration: 2, RegistrationTimeout: 120 * time.Second}, ""},
		{`user-via-header "sbc.example.net"`, mblb.SIPOptions{}, "is not a Via's protocol and address"},
		{`user-via-header "SIP/2.0/TCP sbc.example.net;received=1.2.3.4"`, mblb.SIPOptions{}, "where a host[:port] alone belongs"},
	} {
		t.Run(tc.props, func(t *testing.T) {
			e, _ := openWithPlane(t, t.TempDir())
			s := e.NewSession("admin").(*Session)
			for _, c := range []string{
				"create ltm pool p members add { 127.49.7.11:5060 }",
				"create ltm profile sip sp defaults-from sip " + tc.props,
			} {
				if _, err := run(t, s, c); err != "" {
					t.Fatalf("%s: %s", c, err)
				}
			}
			vs := fmt.Sprintf("create ltm virtual v destination 127.49.7.%d:5060 pool p profiles replace-all-with { tcp { } mblb { } sp { } }", i+1)
			_, err := run(t, s, vs)
			if tc.refused != "" {
				if !strings.Contains(err, tc.refused) {
					t.Fatalf("%s: error %q, want %q", vs, err, tc.refused)
				}
				if out, _ := run(t, s, "list ltm virtual"); strings.Contains(out, "ltm virtual v ") {
					t.Fatalf("the refused virtual was made:\n%s", out)
				}
				return
			}
			if err != "" {
				t.Fatalf("%s: %s", vs, err)
			}
			dc, skipped := Translate(e.schema, e.Config())
			if len(skipped) != 0 {
				t.Fatalf("skipped %v", skipped)
			}
			v := dc.Virtuals["/Common/v"]
			if v == nil || v.MBLB == nil {
				t.Fatalf("not a SIP virtual: %+v", v)
			}
			got := v.MBLB.Request.SIP
			got.MaxHeaderSize = 0
			if got != tc.want {
				t.Fatalf("options %+v, want %+v", got, tc.want)
			}
		})
	}
}
