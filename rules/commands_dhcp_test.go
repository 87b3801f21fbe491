package rules

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/dhcp"
)

// dhcpDiscover is a DISCOVER from 02:00:00:00:00:aa, xid 0x01020304,
// with vendor class "cpe".
func dhcpDiscover() []byte {
	b := make([]byte, dhcp.V4MinLen)
	b[0], b[1], b[2] = dhcp.OpRequest, 1, 6
	binary.BigEndian.PutUint32(b[4:], 0x01020304)
	copy(b[28:], []byte{2, 0, 0, 0, 0, 0xaa})
	copy(b[dhcp.V4HeaderLen:], []byte{99, 130, 83, 99})
	return append(b, dhcp.OptMessageType, 1, 1, 60, 3, 'c', 'p', 'e', dhcp.OptEnd)
}

func TestDHCPCommands(t *testing.T) {
	v4 := dhcpDiscover()
	sol := []byte{dhcp.MsgSolicit, 0, 0, 7, 0, 1, 0, 1, 'c'}
	for _, tc := range []struct {
		name, body string
		ev         Event
		version    int
		payload    []byte
		wantLog    string
		check      func(p []byte) string
		decided    DecisionKind
		wantErr    string
	}{
		{"v4 fields", `when CLIENT_DATA { log local0. "[DHCP::version] [DHCPv4::opcode] [DHCPv4::htype] [DHCPv4::hlen] [DHCPv4::hops] [DHCPv4::xid] [DHCPv4::secs] [DHCPv4::chaddr] [DHCPv4::ciaddr] [DHCPv4::yiaddr] [DHCPv4::siaddr] [DHCPv4::giaddr] [DHCPv4::type] [DHCPv4::len] [DHCPv4::option 60] <[DHCPv4::option 61]>" }`,
			ClientData, 4, v4, "4 1 1 6 0 16909060 0 02:00:00:00:00:aa 0.0.0.0 0.0.0.0 0.0.0.0 0.0.0.0 1 249 cpe <>", nil, 0, ""},
		{"v4 set and delete", `when SERVER_DATA { DHCPv4::option 12 box; DHCPv4::option delete 60 }`, ServerData, 4, v4, "", func(p []byte) string {
			if v, _ := dhcp.V4Option(p, 12); string(v) != "box" {
				return "option 12 " + string(v)
			}
			if _, ok := dhcp.V4Option(p, 60); ok {
				return "option 60 still there"
			}
			return ""
		}, 0, ""},
		{"v4 drop", `when CLIENT_DATA { DHCPv4::drop }`, ClientData, 4, v4, "", nil, DecideDiscard, ""},
		{"v6 reject", `when CLIENT_DATA { DHCPv6::reject }`, ClientData, 6, sol, "", nil, DecideReject, ""},
		{"v6 fields", `when CLIENT_DATA { log local0. "[DHCP::version] [DHCPv6::msg_type] [DHCPv6::transaction_id] [DHCPv6::hop_count] <[DHCPv6::link_address]> [DHCPv6::len] [DHCPv6::option 1]" }`,
			ClientData, 6, sol, "6 1 7 0 <> 9 c", nil, 0, ""},
		{"v6 set", `when CLIENT_DATA { DHCPv6::option 65000 tag }`, ClientData, 6, sol, "", func(p []byte) string {
			if v, _ := dhcp.V6Option(p, 65000); string(v) != "tag" {
				return "option 65000 " + string(v)
			}
			return ""
		}, 0, ""},
		{"no profile", `when CLIENT_DATA { DHCP::version }`, ClientData, 0, v4, "", nil, 0, "no dhcpv4 or dhcpv6 profile"},
		{"wrong version", `when CLIENT_DATA { DHCPv6::msg_type }`, ClientData, 4, v4, "", nil, 0, "profile is dhcpv4, not dhcpv6"},
		{"not a message", `when CLIENT_DATA { DHCPv4::type }`, ClientData, 4, []byte("hello"), "", nil, 0, "too short"},
		{"not in CLIENT_ACCEPTED", `when CLIENT_ACCEPTED { DHCPv4::xid }`, ClientAccepted, 4, nil, "", nil, 0, "not valid in CLIENT_ACCEPTED"},
		{"bad option id", `when CLIENT_DATA { DHCPv4::option 300 }`, ClientData, 4, v4, "", nil, 0, "not a number from 1 to 254"},
		{"option usage", `when CLIENT_DATA { DHCPv4::option }`, ClientData, 4, v4, "", nil, 0, "wrong # args"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs := &logSink{}
			p := NewProgram(&Env{Log: logs.log}, mustCompile(t, "/Common/r", tc.body))
			fc := newFakeConn()
			side := ClientSide
			if tc.ev == ServerData {
				side = ServerSide
			}
			fc.payload[side] = append([]byte(nil), tc.payload...)
			s := p.NewConnState(udpFake{fc})
			defer s.Release()
			if tc.version != 0 {
				s.SetDHCP(tc.version)
			}
			err := s.Run(tc.ev)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error()+strings.Join(logs.lines, "\n"), tc.wantErr) {
					t.Fatalf("err %v (log %q), want %q", err, logs.lines, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			if tc.wantLog != "" && (len(logs.lines) != 1 || !strings.HasSuffix(logs.lines[0], tc.wantLog)) {
				t.Fatalf("log %q, want %q", logs.lines, tc.wantLog)
			}
			if tc.decided != 0 && (len(fc.decided) != 1 || fc.decided[0].Kind != tc.decided) {
				t.Fatalf("decided %v, want %v", fc.decided, tc.decided)
			}
			if tc.check != nil {
				if msg := tc.check(fc.payload[side]); msg != "" {
					t.Fatal(msg)
				}
			}
		})
	}
}
