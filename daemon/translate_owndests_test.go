package daemon

import (
	"slices"
	"testing"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/authn"
)

// TestOwnDestsTranslated: the destinations the daemon's own parts
// connect to reach the plane (Config.OwnDests), for the steering to pass
// over: sys syslog's remote servers, a net dns-resolver's forward-zones
// nameservers, the servers of a virtual's auth profile (tacacs here,
// one written without a port: 49), a rule's literal node; a server
// written as a host name goes to OwnDestNames, for the plane to resolve.
func TestOwnDestsTranslated(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"modify sys syslog remote-servers add { r1 { host 127.253.8.12 remote-port 20514 } }",
		"create net dns-resolver r1 forward-zones { . { nameservers { 127.253.8.53:20053 { } } } }",
		"create ltm pool p members add { 127.253.8.11:8080 }",
		"create ltm auth tacacs tac servers add { 127.253.8.20:4949 127.253.8.21 tac.example } secret tacsecret service ppp protocol ip",
		"create ltm auth profile tacprof defaults-from tacacs config tac idle-timeout 0",
		"create ltm virtual vs destination 127.253.8.1:80 pool p profiles replace-all-with { tcp http } auth { tacprof }",
		"create ltm rule r_node { when HTTP_REQUEST { node 127.253.8.30 30080 } }",
	)
	tr := e.translate(e.Config())
	var got []string
	for _, d := range tr.dc.OwnDests {
		got = append(got, d.String())
	}
	slices.Sort(got)
	want := []string{"127.253.8.12:20514", "127.253.8.20:4949", "127.253.8.21:49", "127.253.8.30:30080", "127.253.8.53:20053"}
	if !slices.Equal(got, want) {
		t.Errorf("OwnDests %v, want %v (skipped %q)", got, want, tr.skipped)
	}
	if names := tr.dc.OwnDestNames; len(names) != 1 || names[0] != (dataplane.NamedDest{Name: "tac.example", Port: 49}) {
		t.Errorf("OwnDestNames %v, want tac.example at 49", names)
	}
}

// TestRuleLiteralDests: the literal destinations of node and sideband
// connect; a computed one is not known.
func TestRuleLiteralDests(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want []string
	}{
		{"when HTTP_REQUEST { node 127.253.8.30 30080 }", []string{"127.253.8.30:30080"}},
		{"when HTTP_REQUEST { node 127.253.8.31:30081 }", []string{"127.253.8.31:30081"}},
		{"when CLIENT_ACCEPTED { node 127.253.8.32%0 }", []string{"127.253.8.32:0"}},
		{"when HTTP_REQUEST { set c [connect -protocol TCP -timeout 100 -idle 30 127.253.8.33:30083] }", []string{"127.253.8.33:30083"}},
		{"when HTTP_REQUEST { set c [connect -status st $dest] ; node $addr 80 ; node [lindex $l 0] }", nil},
		{"when HTTP_REQUEST { node fd00:253::8 30084 }", []string{"[fd00:253::8]:30084"}},
	} {
		var got []string
		for _, d := range ruleLiteralDests(tc.src) {
			got = append(got, d.String())
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.src, got, tc.want)
		}
	}
}

// TestAuthDestNames: an auth server written as a host name is a named
// destination at its own port or the back end's default; one written
// as an address is not.
func TestAuthDestNames(t *testing.T) {
	for _, tc := range []struct {
		b     authn.Backend
		dests []string
		names []dataplane.NamedDest
	}{
		{&authn.LDAP{Servers: []string{"ldap.example", "127.253.8.40"}}, []string{"127.253.8.40:389"}, []dataplane.NamedDest{{Name: "ldap.example", Port: 389}}},
		{&authn.LDAP{Servers: []string{"ldap.example"}, Port: 30389}, nil, []dataplane.NamedDest{{Name: "ldap.example", Port: 30389}}},
		{&authn.RADIUS{Servers: []authn.RADIUSServer{{Addr: "radius.example:1812"}, {Addr: "127.253.8.41:1812"}}}, []string{"127.253.8.41:1812"}, []dataplane.NamedDest{{Name: "radius.example", Port: 1812}}},
		{&authn.TACACS{Servers: []string{"tac.example:4949"}}, nil, []dataplane.NamedDest{{Name: "tac.example", Port: 4949}}},
		{&authn.SSLCCLDAP{Servers: []string{"ccldap.example"}}, nil, nil}, // no port known: none
	} {
		dests, names := authDests(tc.b)
		var got []string
		for _, d := range dests {
			got = append(got, d.String())
		}
		if !slices.Equal(got, tc.dests) || !slices.Equal(names, tc.names) {
			t.Errorf("%T: %v %v, want %v %v", tc.b, got, names, tc.dests, tc.names)
		}
	}
}
