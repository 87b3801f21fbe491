package rules

import (
	"net/netip"
	"strings"
	"testing"
)

// TestPCPCommands: PCP::request reads the request in PCP_REQUEST and
// PCP_RESPONSE, PCP::response the answer in PCP_RESPONSE, PCP::reject
// refuses the request with a code in PCP_REQUEST; elsewhere, and with a
// bad field or code, they are errors.
func TestPCPCommands(t *testing.T) {
	mapReq := func() *PCPMessage {
		return &PCPMessage{Version: 2, Opcode: 1, Lifetime: 3600, Client: netip.MustParseAddr("127.172.1.5"),
			Nonce: [12]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, Protocol: 6, InternalPort: 22,
			SuggestedPort: 40000, SuggestedAddr: netip.MustParseAddr("127.172.2.1"), PreferFailure: true,
			ThirdParty: netip.MustParseAddr("127.172.1.6"), Options: []uint8{1, 2},
			RespVersion: 2, Result: 0, RespLifetime: 1800, AssignedPort: 40001, AssignedAddr: netip.MustParseAddr("127.172.2.1")}
	}
	announce := func() *PCPMessage {
		return &PCPMessage{Version: 2, Opcode: 0, Client: netip.MustParseAddr("127.172.1.5"), SuggestedAddr: netip.IPv4Unspecified(), RespVersion: 2}
	}
	peer := func() *PCPMessage {
		m := mapReq()
		m.Opcode, m.Protocol = 2, 17
		return m
	}
	cases := []struct {
		name, body string
		ev         Event
		msg        func() *PCPMessage
		log        string
		reject     uint8
		err        string
	}{
		{name: "request fields", ev: PCPRequest, msg: mapReq,
			body: `when PCP_REQUEST { log local0. "[PCP::request version] [PCP::request opcode] [PCP::request lifetime] [PCP::request client-addr] [PCP::request protocol] [PCP::request internal-port]" }`,
			log:  "2 map 3600 127.172.1.5 tcp 22"},
		{name: "request suggestion and options", ev: PCPRequest, msg: mapReq,
			body: `when PCP_REQUEST { log local0. "[PCP::request suggested-ext-addr]:[PCP::request suggested-ext-port] [PCP::request prefer-failure] [PCP::request third-party] [PCP::request third-party-int-addr] [PCP::request nonce] [PCP::request options]" }`,
			log:  "127.172.2.1:40000 1 1 127.172.1.6 0102030405060708090a0b0c 1 2"},
		{name: "announce has no ports", ev: PCPRequest, msg: announce,
			body: `when PCP_REQUEST { log local0. "[PCP::request opcode] [PCP::request protocol] [PCP::request internal-port] [PCP::request suggested-ext-addr] [PCP::request third-party] [PCP::request third-party-int-addr]" }`,
			log:  "announce NA NA NA 0 NA"},
		{name: "the PCP client and server", ev: PCPRequest, msg: mapReq,
			body: `when PCP_REQUEST { log local0. "[IP::client_addr] [UDP::client_port] [IP::local_addr]" }`, log: "127.172.1.5 40002 127.172.0.20"},
		{name: "peer request", ev: PCPRequest, msg: peer,
			body: `when PCP_REQUEST { log local0. "[PCP::request opcode] [PCP::request protocol]" }`, log: "peer udp"},
		{name: "reject", ev: PCPRequest, msg: mapReq,
			body:   `when PCP_REQUEST { if { [PCP::request opcode] eq "map" && [PCP::request internal-port] < 1024 } { PCP::reject 2 } }`,
			reject: 2},
		{name: "not rejected", ev: PCPRequest, msg: peer,
			body: `when PCP_REQUEST { if { [PCP::request opcode] eq "map" } { PCP::reject 2 } }`},
		{name: "response fields", ev: PCPResponse, msg: mapReq,
			body: `when PCP_RESPONSE { log local0. "[PCP::response version] [PCP::response opcode] [PCP::response lifetime] [PCP::response result] [PCP::response client-addr] [PCP::response protocol] [PCP::response internal-port] [PCP::response assigned-ext-addr]:[PCP::response assigned-ext-port] [PCP::request lifetime]" }`,
			log:  "2 map 1800 0 127.172.1.5 tcp 22 127.172.2.1:40001 3600"},
		{name: "peer response has NA", ev: PCPResponse, msg: peer,
			body: `when PCP_RESPONSE { log local0. "[PCP::response protocol] [PCP::response internal-port] [PCP::response assigned-ext-port]" }`,
			log:  "NA NA NA"},
		{name: "unknown opcode as a number", ev: PCPResponse, msg: func() *PCPMessage { m := announce(); m.Opcode = 9; return m },
			body: `when PCP_RESPONSE { log local0. [PCP::response opcode] }`, log: "9"},
		{name: "response in PCP_REQUEST", ev: PCPRequest, msg: mapReq, body: `when PCP_REQUEST { PCP::response result }`, err: "valid in PCP_RESPONSE"},
		{name: "reject in PCP_RESPONSE", ev: PCPResponse, msg: mapReq, body: `when PCP_RESPONSE { PCP::reject 2 }`, err: "valid in PCP_REQUEST"},
		{name: "reject 0", ev: PCPRequest, msg: mapReq, body: `when PCP_REQUEST { PCP::reject 0 }`, err: "1 to 255"},
		{name: "reject 256", ev: PCPRequest, msg: mapReq, body: `when PCP_REQUEST { PCP::reject 256 }`, err: "1 to 255"},
		{name: "unknown field", ev: PCPRequest, msg: mapReq, body: `when PCP_REQUEST { PCP::request colour }`, err: `unknown field "colour"`},
		{name: "wrong args", ev: PCPRequest, msg: mapReq, body: `when PCP_REQUEST { PCP::request }`, err: "wrong # args"},
		{name: "no balancing here", ev: PCPRequest, msg: mapReq, body: `when PCP_REQUEST { pool p }`, err: "not valid in PCP_REQUEST"},
		{name: "outside the PCP events", ev: ClientAccepted, body: `when CLIENT_ACCEPTED { PCP::request opcode }`, err: "valid in PCP_REQUEST, PCP_RESPONSE"},
	}
	client, server := netip.MustParseAddrPort("127.172.1.5:40002"), netip.MustParseAddrPort("127.172.0.20:5351")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := mustCompile(t, "pcp", c.body)
			if u := r.Unsupported(); len(u) > 0 {
				t.Fatalf("refused as not implemented: %v", u)
			}
			var logged []string
			p := NewProgram(&Env{Log: func(_, l string) { logged = append(logged, l) }}, r)
			var err error
			var m *PCPMessage
			if c.msg != nil {
				m = c.msg()
				err = p.RunPCP(c.ev, m, client, server)
			} else {
				s := p.NewConnState(newFakeConn())
				err = s.Run(c.ev)
				s.Release()
			}
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.log != "" && (len(logged) != 1 || !strings.HasSuffix(logged[0], ": "+c.log)) {
				t.Fatalf("logged %q, want %q", logged, c.log)
			}
			if got := m.Rejected; got != (c.reject != 0) || m.RejectCode != c.reject {
				t.Fatalf("rejected %v code %d, want code %d", got, m.RejectCode, c.reject)
			}
		})
	}
}

// TestPCPRunWithoutHandler: a program without the event's handler runs
// nothing and leaves the message alone.
func TestPCPRunWithoutHandler(t *testing.T) {
	p := NewProgram(&Env{}, mustCompile(t, "pcp", `when PCP_RESPONSE { log local0. x }`))
	m := &PCPMessage{Opcode: 1}
	if err := p.RunPCP(PCPRequest, m, netip.AddrPort{}, netip.AddrPort{}); err != nil || m.Rejected {
		t.Fatalf("err %v, rejected %v", err, m.Rejected)
	}
}

// xlatConn is a connection whose source translation the XLAT::
// commands read.
type fakeXLATConn struct {
	*fakeConn
	src    netip.AddrPort
	picked bool
	typ    string
	object string
}

func (c *fakeXLATConn) XLATSource() (netip.AddrPort, bool) { return c.src, c.picked }
func (c *fakeXLATConn) XLATConfig() (string, string)       { return c.typ, c.object }
func (c *fakeXLATConn) XLATValidRanges() ([]XLATRange, bool, bool) {
	if c.typ != "LSN" {
		return nil, false, false
	}
	return []XLATRange{{netip.MustParseAddr("127.172.2.1"), 40000, 40063}, {netip.MustParseAddr("127.172.2.1"), 40128, 40191}}, true, c.picked
}

// TestXLATCommands: XLAT::src_addr and src_port answer the source once
// picked and are errors before; src_config answers the type and object;
// the commands openltm cannot carry out are refused as unsupported.
func TestXLATCommands(t *testing.T) {
	lsnConn := func(picked bool) Conn {
		return &fakeXLATConn{fakeConn: newFakeConn(), src: netip.MustParseAddrPort("127.172.2.1:40007"), picked: picked, typ: "LSN", object: "/Common/cgnat"}
	}
	cases := []struct {
		name, body string
		conn       Conn
		log, err   string
	}{
		{name: "source picked", body: `when SERVER_CONNECTED { log local0. "[XLAT::src_addr] [XLAT::src_port]" }`, conn: lsnConn(true), log: "127.172.2.1 40007"},
		{name: "in SA_PICKED", body: `when SA_PICKED { log local0. "[XLAT::src_addr]:[XLAT::src_port]" }`, conn: lsnConn(true), log: "127.172.2.1:40007"},
		{name: "not picked yet", body: `when CLIENT_ACCEPTED { XLAT::src_addr }`, conn: lsnConn(false), err: "not picked yet"},
		{name: "config", body: `when CLIENT_ACCEPTED { log local0. [XLAT::src_config] }`, conn: lsnConn(false), log: "LSN /Common/cgnat"},
		{name: "automap", body: `when CLIENT_ACCEPTED { log local0. [lindex [XLAT::src_config] 1] }`,
			conn: &fakeXLATConn{fakeConn: newFakeConn(), typ: "AUTOMAP", object: "NA"}, log: "NA"},
		{name: "a connection without it", body: `when CLIENT_ACCEPTED { XLAT::src_config }`, conn: newFakeConn(), err: "source translation cannot be read"},
		{name: "wrong args", body: `when CLIENT_ACCEPTED { XLAT::src_port 1 }`, conn: lsnConn(true), err: "wrong # args"},
		{name: "valid ranges", body: `when SERVER_CONNECTED { log local0. [XLAT::src_nat_valid_range] }`, conn: lsnConn(true), log: "{127.172.2.1 40000 40063} {127.172.2.1 40128 40191}"},
		{name: "valid ranges before the pick", body: `when CLIENT_ACCEPTED { XLAT::src_nat_valid_range }`, conn: lsnConn(false), err: "not picked yet"},
		{name: "valid ranges without lsn", body: `when SERVER_CONNECTED { XLAT::src_nat_valid_range }`,
			conn: &fakeXLATConn{fakeConn: newFakeConn(), typ: "AUTOMAP", object: "NA", picked: true}, err: "not translated by an lsn pool"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := mustCompile(t, "xlat", c.body)
			var logged []string
			p := NewProgram(&Env{Log: func(_, l string) { logged = append(logged, l) }}, r)
			s := p.NewConnState(c.conn)
			ev := ClientAccepted
			switch {
			case strings.Contains(c.body, "SERVER_CONNECTED"):
				ev = ServerConnected
			case strings.Contains(c.body, "SA_PICKED"):
				ev = SAPicked
			}
			err := s.Run(ev)
			s.Release()
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(logged) != 1 || !strings.HasSuffix(logged[0], ": "+c.log) {
				t.Fatalf("logged %q, want %q", logged, c.log)
			}
		})
	}
	for _, name := range []string{"DSLITE::remote_addr"} {
		r, _ := Compile("/Common/u", "when CLIENT_ACCEPTED { "+name+" }")
		if r == nil || len(r.Unsupported()) != 1 || !strings.HasPrefix(r.Unsupported()[0], name+" (") {
			t.Errorf("%s: not refused as unsupported: %v", name, r)
		}
	}
}
