package rules

import (
	"strings"
	"testing"

	"github.com/miekg/dns"
)

func TestCompatCommands(t *testing.T) {
	plain := newFakeConn()
	info := infoConn{newFakeConn()}
	httpConn := newHTTPFake(t, testRequest, "")
	dnsConn := newFakeDNS("www.example.com.", dns.TypeA)
	cases := []struct {
		name string
		conn Conn
		ev   Event
		expr string
		want string // result, or the error's text after "err: "
	}{
		{"active_nodes counts", plain, ClientAccepted, "active_nodes test_pool", "2"},
		{"active_nodes as active_members", plain, ClientAccepted, "expr {[active_nodes test_pool] == [active_members test_pool]}", "1"},
		{"active_nodes list", plain, ClientAccepted, "active_nodes -list test_pool", "{127.0.0.34 9000} {127.0.0.34 9001}"},
		{"active_nodes unknown pool", plain, ClientAccepted, "active_nodes nosuch", `err: active_nodes: no such pool "nosuch"`},
		{"active_nodes arity", plain, ClientAccepted, "active_nodes", "err: wrong # args"},
		{"nodes counts every member", info, ClientAccepted, "nodes test_pool", "3"},
		{"nodes list", info, ClientAccepted, "nodes -list test_pool", "{127.0.0.34 9000} {127.0.0.34 9001} {127.0.0.34 9002}"},
		{"nodes as members", info, ClientAccepted, "expr {[nodes test_pool] == [members test_pool]}", "1"},
		{"nodes without pool info", plain, ClientAccepted, "nodes test_pool", "err: nodes: this connection cannot list pool members"},
		{"http profile on an http virtual", httpConn, HTTPRequest, "PROFILE::exists http", "1"},
		{"http profile in CLIENT_ACCEPTED", httpConn, ClientAccepted, "PROFILE::exists http", "1"},
		{"no http profile on a tcp virtual", plain, ClientAccepted, "PROFILE::exists http", "0"},
		{"dns profile on a dns listener", dnsConn, DNSRequest, "PROFILE::exists dns", "1"},
		{"no dns profile on an http virtual", httpConn, HTTPRequest, "PROFILE::exists dns", "0"},
		{"guard idiom", plain, ClientAccepted, `if {[PROFILE::exists http]} { set x [HTTP::host] } else { set x none }`, "none"},
		{"type from a variable openltm cannot answer", plain, ClientAccepted, "PROFILE::exists [string tolower CLIENTSSL]", "err: PROFILE::exists clientssl: openltm cannot tell"},
		{"arity", plain, ClientAccepted, "PROFILE::exists", "err: wrong # args"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := evalIn(t, c.conn, nil, c.ev, c.expr)
			if want, ok := strings.CutPrefix(c.want, "err: "); ok {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("got %q, %v; want error containing %q", got, err, want)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("got %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

// profConn is a connection that lists its virtual server's profiles.
type profConn struct {
	*fakeConn
	refs []ProfileRef
}

func (c profConn) VirtualProfiles() []ProfileRef { return c.refs }

// TestProfileExistsListed: on a connection that lists its virtual's
// profiles PROFILE::exists answers for every type, tmsh's spelling or
// iRules' (client-ssl, clientssl, fastL4), and by name (full path or
// bare); every form compiles, none is listed as unsupported.
func TestProfileExistsListed(t *testing.T) {
	c := profConn{newFakeConn(), []ProfileRef{
		{Type: "clientssl", Name: "/Common/cs_app"},
		{Type: "tcp", Name: "/Common/tcp"},
		{Type: "oneconnect", Name: "/Part/oc"},
		{Type: "fastl4", Name: "/Common/fl4"},
	}}
	for _, tc := range []struct{ expr, want string }{
		{"PROFILE::exists clientssl", "1"},
		{"PROFILE::exists client-ssl", "1"},
		{"PROFILE::exists serverssl", "0"},
		{"PROFILE::exists clientssl /Common/cs_app", "1"},
		{"PROFILE::exists clientssl cs_app", "1"},
		{"PROFILE::exists clientssl /Common/other", "0"},
		{"PROFILE::exists oneconnect oc", "1"},
		{"PROFILE::exists one-connect /Common/oc", "0"},
		{"PROFILE::exists fastL4", "1"},
		{"PROFILE::exists http", "0"},
		{"PROFILE::exists tcp", "1"},
	} {
		got, err := evalIn(t, c, nil, ClientAccepted, tc.expr)
		if err != nil || got != tc.want {
			t.Errorf("%s: %q, %v; want %s", tc.expr, got, err, tc.want)
		}
	}
	for _, body := range []string{
		"when CLIENT_ACCEPTED { if {[PROFILE::exists clientssl] == 1} { log local0. s } }",
		"when CLIENT_ACCEPTED {\n  log local0. [PROFILE::exists tcp]\n  log local0. [PROFILE::exists http /Common/http]\n}",
	} {
		r, err := Compile("pe", body)
		if err != nil || len(r.Unsupported()) != 0 {
			t.Errorf("%q: %v, unsupported %v", body, err, r.Unsupported())
		}
	}
}
