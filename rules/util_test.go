package rules

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
)

// infoConn adds what LBInfo reports to the fake connection.
type infoConn struct{ *fakeConn }

func (c infoConn) VirtualName() string { return "/Common/vs_http" }
func (c infoConn) LBMode(pool string) (string, error) {
	if pool != "" && pool != "test_pool" {
		return "", fmt.Errorf("no pool %s", pool)
	}
	return "least-connections-member", nil
}
func (c infoConn) Members(pool string) ([]netip.AddrPort, error) {
	return append(c.members[pool], netip.MustParseAddrPort("127.0.0.34:9002")), nil
}
func (c infoConn) MemberInfo(pool string, m netip.AddrPort) (MemberInfo, error) {
	return MemberInfo{Ratio: 3, Priority: 10, Weight: 3}, nil
}

// evalIn runs one command in an event and returns its result.
func evalIn(t *testing.T, c Conn, env *Env, ev Event, expr string) (string, error) {
	t.Helper()
	r := mustCompile(t, "cmds", "when "+ev.String()+" { set ::out ["+expr+"] }")
	if env == nil {
		env = &Env{}
	}
	p := NewProgram(env, r)
	s := p.NewConnState(c)
	defer s.Release()
	if err := s.Run(ev); err != nil {
		return "", err
	}
	got, _ := s.Var("out")
	return got, nil
}

func TestUtilityCommands(t *testing.T) {
	dg, err := NewDataGroup("/Common/hosts", DGString, []Record{{Key: "b.example", Value: "pb"}, {Key: "a.example", Value: "pa"}, {Key: "c.example", Value: "pc"}})
	if err != nil {
		t.Fatal(err)
	}
	env := &Env{DataGroup: func(n string) (*DataGroup, bool) { return dg, strings.HasSuffix(n, "hosts") }}
	cases := []struct{ expr, want string }{
		{"b64encode hello", "aGVsbG8="},
		{"domain www.sub.example.com 2", "example.com"},
		{"TMM::cmp_unit", "0"},
		{"TMM::cmp_count", "1"},
		{"expr {[TMM::cmp_unit] == 0 && [TMM::cmp_groups] == 1 && [TMM::cmp_group] == [TMM::cmp_primary_group]}", "1"},
		{"domain www.sub.example.com 3", "sub.example.com"},
		{"domain www.example.com. 2", "example.com"},
		{"domain www.example.com 9", "www.example.com"},
		{"domain localhost 1", "localhost"},
		{"domain www.example.com 0", ""},
		{"b64decode aGVsbG8=", "hello"},
		{"b64decode aGVsbG8", "hello"},
		{"b64decode [b64encode \\xff\\x00]", "\u00ff\x00"},
		{"binary encode hex [md5 abc]", "900150983cd24fb0d6963f7d28e17f72"},
		{"binary encode hex [sha1 abc]", "a9993e364706816aba3e25717850c26c9cd0d89d"},
		{"binary encode hex [sha256 abc]", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{"string range [binary encode hex [sha512 abc]] 0 31", "ddaf35a193617abacc417349ae204131"},
		{"string length [sha384 abc]", "48"},
		{"b64encode [md5 abc]", "kAFQmDzST7DWlj99KOF/cg=="},
		{"binary scan [sha1 abc] H8 h; set h", "a9993e36"},
		{"crc32 abc", "891568578"},
		{"crc32 {}", "0"},
		{"URI::decode /a%20b%2Fc+d%zz", "/a b/c+d%zz"},
		{"URI::encode {a b/c?d=é}", "a%20b%2Fc%3Fd%3D%C3%A9"},
		{"URI::query /p?a=1&b=2&a=3", "a=1&b=2&a=3"},
		{"URI::query /p?a=1&b=2&a=3 a", "1"},
		{"URI::query /p?a=1&b=2 c", ""},
		{"URI::query /p", ""},
		{"URI::path /a/b/c/file.html?x=1", "/a/b/c/"},
		{"URI::path /file.html", "/"},
		{"URI::path /a/b/c/file.html depth", "3"},
		{"URI::path /a/b/c/file.html 2", "/b/c/"},
		{"URI::path /a/b/c/file.html 1 2", "/a/b/"},
		{"URI::path /a/b/c/ 5", "/"},
		{"URI::basename /a/b/index.html?x=/y", "index.html"},
		{"URI::basename /a/b/", ""},
		{"URI::protocol https://www.example.com:8443/x", "https"},
		{"URI::host https://user@www.example.com:8443/x", "www.example.com"},
		{"URI::port https://www.example.com:8443/x", "8443"},
		{"URI::port https://www.example.com/x", "443"},
		{"URI::port http://www.example.com", "80"},
		{"URI::host /relative/only", ""},
		{"URI::compare HTTP://WWW.Example.com:80/a%20b http://www.example.com/a%20b", "1"},
		{"URI::compare http://a/x http://a/y", "0"},
		{"timing on", ""},
		{"after cancel -all", ""},
		{"after info", ""},
		{"after 0 { set ::ran 1 }; set ::ran", "1"},
		{"virtual", "/Common/vs_http"},
		{"virtual name", "/Common/vs_http"},
		{"members test_pool", "3"},
		{"members -list test_pool", "{127.0.0.34 9000} {127.0.0.34 9001} {127.0.0.34 9002}"},
		{"active_members -list test_pool", "{127.0.0.34 9000} {127.0.0.34 9001}"},
		{"LB::mode", "least-connections-member"},
		{"LB::server", "test_pool 127.0.0.34 9000"},
		{"LB::server pool", "test_pool"},
		{"LB::server addr", "127.0.0.34"},
		{"LB::server priority", "10"},
		{"LB::server ratio", "3"},
		{"LB::server weight", "3"},
		{"LB::server route_domain", "0"},
		{"LB::status", "up"},
		{"LB::status up", "1"},
		{"LB::status pool test_pool member 127.0.0.34 9001 down", "1"},
		{"LB::status pool test_pool member 127.0.0.34:9001", "down"},
		{"LB::status node 127.0.0.34", "up"},
		{"IP::client_addr", "127.0.0.9"},
		{"IP::client_addr clientside", "127.0.0.9"},
		{"clientside { IP::remote_addr }", "127.0.0.9"},
		{"serverside { IP::remote_addr }", "127.0.0.34"},
		{"serverside { TCP::local_port }", "40001"},
		{"class element 0 hosts", "a.example pa"},
		{"class element -value 2 hosts", "pc"},
		{"class element -name 1 hosts", "b.example"},
		{"class element 9 hosts", ""},
		{"class match -- a.example equals hosts", "1"},
		{"class get hosts a*", "{a.example pa}"},
		{"set id [class startsearch hosts]; set out {}; while {[class anymore hosts $id]} { lappend out [class nextelement -name hosts $id] }; class donesearch hosts $id; set out", "a.example b.example c.example"},
		{"set id [class startsearch hosts]; class nextelement hosts $id; class nextelement -value hosts $id", "pb"},
		{"set id [class startsearch hosts]; class nextelement -index hosts $id", "0"},
	}
	for _, c := range cases {
		t.Run(c.expr, func(t *testing.T) {
			got, err := evalIn(t, infoConn{newFakeConn()}, env, ClientAccepted, c.expr)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("got %q want %q", got, c.want)
			}
		})
	}
}

func TestUtilityErrors(t *testing.T) {
	cases := []struct {
		expr string
		conn Conn
		want string
	}{
		{"b64decode {a$b}", nil, "is not base64"},
		{"virtual", newFakeConn(), "does not know its virtual server"},
		{"members p", newFakeConn(), "cannot list pool members"},
		{"LB::server ratio", newFakeConn(), "no pool member information"},
		{"LB::mode", newFakeConn(), "cannot report"},
		{"set p -periodic; after 10 $p { drop }", nil, "after -periodic: not supported"},
		{"class donesearch hosts nosuch", nil, "no data group"},
		{"matchclass a equals b", nil, `matchclass: neither "a" nor "b" is a data group`},
		{"matchclass a equals", nil, "wrong # args"},
		{"URI::path /a/b 0", nil, "bad start"},
	}
	for _, c := range cases {
		t.Run(c.expr, func(t *testing.T) {
			conn := c.conn
			if conn == nil {
				conn = infoConn{newFakeConn()}
			}
			_, err := evalIn(t, conn, nil, ClientAccepted, c.expr)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err %v, want %q", err, c.want)
			}
		})
	}
}

func TestVirtualDecision(t *testing.T) {
	c := newFakeConn()
	if _, err := evalIn(t, c, nil, ClientAccepted, "virtual vs_other"); err != nil {
		t.Fatal(err)
	}
	if got := c.String(); got != "virtual /Common/vs_other" {
		t.Errorf("calls %q", got)
	}
}

func TestAfterPeriodicActedOn(t *testing.T) {
	r, err := Compile("p", "when CLIENT_ACCEPTED { set id [after 1000 -periodic { log local0. tick }] }")
	if r == nil || err != nil || len(r.Unsupported()) != 0 {
		t.Fatalf("rule %v err %v", r, err)
	}
}

func TestAddressTextFollowsTheConnection(t *testing.T) {
	p := NewProgram(nil, mustCompile(t, "a", "when LB_SELECTED { set ::s [IP::server_addr] }\nwhen SERVER_CONNECTED { set ::s2 [IP::server_addr] }"))
	c := newFakeConn()
	s := p.NewConnState(c)
	defer s.Release()
	if err := s.Run(LBSelected); err != nil {
		t.Fatal(err)
	}
	c.addrs[EndServer] = netip.MustParseAddrPort("127.0.0.35:9000") // reselected
	if err := s.Run(ServerConnected); err != nil {
		t.Fatal(err)
	}
	a, _ := s.Var("s")
	b, _ := s.Var("s2")
	if a != "127.0.0.34" || b != "127.0.0.35" {
		t.Errorf("server addr %q then %q", a, b)
	}
}

// namedConn is a Conn whose members have names of their own (LBNamer).
type namedConn struct {
	*fakeConn
	name   string
	target bool
}

func (c namedConn) LBServerName() (string, bool) { return c.name, c.target }

// TestLBServerName: LB::server name is the member's own name when the
// Conn has one; a target (a GSLB name pool's member) stands in for the
// address too.
func TestLBServerName(t *testing.T) {
	cases := []struct {
		conn Conn
		expr string
		want string
	}{
		{newFakeConn(), "LB::server name", "127.0.0.34"},
		{namedConn{newFakeConn(), "/Common/ltm1:vs1", false}, "LB::server name", "/Common/ltm1:vs1"},
		{namedConn{newFakeConn(), "/Common/ltm1:vs1", false}, "LB::server addr", "127.0.0.34"},
		{namedConn{newFakeConn(), "/Common/ltm1:vs1", false}, "LB::server", "test_pool 127.0.0.34 9000"},
		{namedConn{newFakeConn(), "mx1.example.com", true}, "LB::server name", "mx1.example.com"},
		{namedConn{newFakeConn(), "mx1.example.com", true}, "LB::server addr", "mx1.example.com"},
		{namedConn{newFakeConn(), "mx1.example.com", true}, "LB::server", "test_pool mx1.example.com 9000"},
	}
	for _, c := range cases {
		got, err := evalIn(t, c.conn, nil, LBSelected, c.expr)
		if err != nil || got != c.want {
			t.Errorf("%T %s: %q, %v; want %q", c.conn, c.expr, got, err, c.want)
		}
	}
}

// TestLBServerBeforeAPick: before a member is chosen, LB::server answers
// the pool the connection's traffic would go to (as BIG-IP does in
// CLIENT_ACCEPTED: `set default_pool [LB::server pool]`), and nothing for
// the member's fields.
func TestLBServerBeforeAPick(t *testing.T) {
	c := newFakeConn()
	c.addrs[EndServer] = netip.AddrPort{}
	for _, tc := range []struct{ expr, want string }{
		{"LB::server", "test_pool"},
		{"LB::server pool", "test_pool"},
		{"LB::server addr", ""},
		{"LB::server name", ""},
		{"LB::server port", "0"},
	} {
		got, err := evalIn(t, c, nil, ClientAccepted, tc.expr)
		if err != nil || got != tc.want {
			t.Errorf("%s = %q, %v; want %q", tc.expr, got, err, tc.want)
		}
	}
}
