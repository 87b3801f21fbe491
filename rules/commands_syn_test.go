package rules

import (
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/synhdr"
)

// synConn is a fake connection that kept a client's SYN.
type synConn struct {
	*fakeConn
	syn   *synhdr.SYN
	picks synhdr.Picks
}

func (c *synConn) ClientSYN() (*synhdr.SYN, synhdr.Picks) { return c.syn, c.picks }

// testSYN is an IPv4 SYN with TTL 57, ToS 0x28, MSS 1380, window scale
// 7, two options 253 (first 0xbeef, last 0xcafe), option 28 of 4 bytes,
// option 30 of 3 bytes and option 31 of 1 byte.
func testSYN(t *testing.T) *synhdr.SYN {
	t.Helper()
	opts := []byte{2, 4, 0x05, 0x64, 1, 3, 3, 7, 253, 4, 0xbe, 0xef, 253, 4, 0xca, 0xfe, 28, 6, 127, 69, 0, 9, 30, 5, 'a', 0xff, 'c', 31, 3, 200, 0}
	tcp := make([]byte, 20, 52)
	tcp[12] = byte((20+32)/4) << 4
	tcp = append(tcp, opts...)
	for len(tcp) < 52 {
		tcp = append(tcp, 0)
	}
	b := append([]byte{0x45, 0x28, 0, 0, 0, 0, 0, 0, 57, 6, 0, 0, 127, 69, 0, 1, 127, 69, 0, 2}, tcp...)
	s, ok := synhdr.Parse(b)
	if !ok {
		t.Fatal("test SYN does not parse")
	}
	return &s
}

func TestSYNCommands(t *testing.T) {
	picks, err := synhdr.ParsePicks("{253 last} {28 first} {30 first} {31 first} {3 first} {2 first} {29 first}")
	if err != nil {
		t.Fatal(err)
	}
	conn := &synConn{fakeConn: newFakeConn(), syn: testSYN(t), picks: picks}
	run := func(t *testing.T, c Conn, ev Event, event, body string) (string, error) {
		t.Helper()
		r, err := Compile("syn", "when "+event+" {\nset ::r ["+body+"]\n}")
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		if !r.readsSYN && !strings.Contains(body, "binary") {
			t.Errorf("%s: the rule is not marked as reading the SYN", body)
		}
		s := NewProgram(&Env{}, r).NewConnState(c)
		defer s.Release()
		if err := s.Run(ev); err != nil {
			return "", err
		}
		v, _ := s.Var("r")
		return v, nil
	}
	for _, c := range []struct{ body, want string }{
		{"TCP::option get 253", "51966"},
		{"TCP::option get 28", "2135228425"},
		{"TCP::option get 2", "1380"},
		{"TCP::option get 3", "7"},
		{"TCP::option get 31", "200"},
		{"TCP::option get 29", ""},
		{"binary scan [TCP::option get 30] H* h; set h", "61ff63"},
		{"string length [TCP::option get 30]", "3"},
		{"IP::ttl", "57"},
		{"IP::ttl clientside", "57"},
		{"IP::hops", "7"},
		{"IP::tos", "40"},
		{"IP::tos clientside", "40"},
	} {
		got, err := run(t, conn, ClientAccepted, "CLIENT_ACCEPTED", c.body)
		if err != nil || got != c.want {
			t.Errorf("%s = %q, %v; want %q", c.body, got, err, c.want)
		}
	}
	// A connection whose SYN was not kept answers empty; one that cannot
	// keep any, and the server side, are errors.
	noSYN := &synConn{fakeConn: newFakeConn(), picks: picks}
	for _, body := range []string{"TCP::option get 253", "IP::ttl", "IP::tos"} {
		if got, err := run(t, noSYN, ClientAccepted, "CLIENT_ACCEPTED", body); err != nil || got != "" {
			t.Errorf("%s without a SYN = %q, %v", body, got, err)
		}
	}
	for _, c := range []struct {
		conn      Conn
		ev        Event
		event     string
		body, err string
	}{
		{conn, ClientAccepted, "CLIENT_ACCEPTED", "TCP::option get 8", "option 8 is not configured for collection"},
		{conn, ClientAccepted, "CLIENT_ACCEPTED", "TCP::option get 1", "not an option kind from 2 to 255"},
		{conn, ClientAccepted, "CLIENT_ACCEPTED", "TCP::option get 256", "not an option kind from 2 to 255"},
		{conn, ClientAccepted, "CLIENT_ACCEPTED", "TCP::option get", "wrong # args"},
		{conn, ClientAccepted, "CLIENT_ACCEPTED", "TCP::option", "wrong # args"},
		{conn, ClientAccepted, "CLIENT_ACCEPTED", "IP::ttl a b", "wrong # args"},
		{conn, ClientAccepted, "CLIENT_ACCEPTED", "IP::ttl sideways", "wrong # args"},
		{conn, ClientAccepted, "CLIENT_ACCEPTED", "IP::ttl serverside", "reads the client's SYN only"},
		{conn, ServerConnected, "SERVER_CONNECTED", "TCP::option get 253", "reads the client's SYN only"},
		{conn, ServerConnected, "SERVER_CONNECTED", "IP::ttl", "reads the client's SYN only"},
		{newFakeConn(), ClientAccepted, "CLIENT_ACCEPTED", "IP::ttl", "did not keep its SYN"},
	} {
		if _, err := run(t, c.conn, c.ev, c.event, c.body); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s in %s: error %v, want %q", c.body, c.event, err, c.err)
		}
	}
}

// TestReadsSYN: only the rules that read the SYN make the listener keep
// it.
func TestReadsSYN(t *testing.T) {
	for body, want := range map[string]bool{
		"when CLIENT_ACCEPTED { log local0. [TCP::option get 28] }": true,
		"when CLIENT_ACCEPTED { log local0. [IP::ttl] }":            true,
		"when CLIENT_ACCEPTED { log local0. [IP::hops] }":           true,
		"when CLIENT_ACCEPTED { log local0. [IP::tos] }":            true,
		"when CLIENT_ACCEPTED { log local0. [IP::tos clientside] }": true,
		"when CLIENT_ACCEPTED { IP::tos 184 }":                      false,
		"when CLIENT_ACCEPTED { IP::tos serverside 184 }":           false,
		"when CLIENT_ACCEPTED { log local0. [TCP::mss] }":           false,
	} {
		r, err := Compile("r", body)
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		if got := NewProgram(nil, r).ReadsSYN(); got != want {
			t.Errorf("%s: ReadsSYN %v, want %v", body, got, want)
		}
	}
	var p *Program
	if p.ReadsSYN() {
		t.Error("a nil program reads the SYN")
	}
}
