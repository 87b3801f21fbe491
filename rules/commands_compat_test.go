package rules

import (
	"errors"
	"slices"
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

// TestProfileExistsUnsupported: a literal profile type openltm cannot
// answer for, or a profile asked about by name, keeps the rule from
// running and says which, like other F5 forms openltm lacks.
func TestProfileExistsUnsupported(t *testing.T) {
	cases := []struct {
		body string
		want []string // Unsupported(), nil for a rule that runs
	}{
		{"when HTTP_REQUEST { if {[PROFILE::exists http]} { log local0. h } }", nil},
		{"when DNS_REQUEST { if {[PROFILE::exists dns]} { log local0. d } }", nil},
		{"when CLIENT_ACCEPTED { set t http; if {[PROFILE::exists $t]} { log local0. h } }", nil},
		{"when CLIENT_ACCEPTED { if {[PROFILE::exists clientssl] == 1} { log local0. s } }", []string{"PROFILE::exists clientssl"}},
		{"when CLIENT_ACCEPTED {\n  log local0. [PROFILE::exists tcp]\n  log local0. [PROFILE::exists http /Common/http]\n}", []string{"PROFILE::exists tcp", "PROFILE::exists http NAME"}},
	}
	for _, c := range cases {
		r, err := Compile("pe", c.body)
		if r == nil {
			t.Fatalf("%q: %v", c.body, err)
		}
		var ue *UnsupportedError
		if c.want == nil {
			if err != nil {
				t.Errorf("%q: %v", c.body, err)
			}
			continue
		}
		if !errors.As(err, &ue) || !slices.Equal(r.Unsupported(), c.want) {
			t.Errorf("%q: unsupported %v (%v), want %v", c.body, r.Unsupported(), err, c.want)
		}
	}
}
