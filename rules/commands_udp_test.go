package rules

import (
	"strings"
	"testing"
)

// udpFake is the fake connection of a UDP flow.
type udpFake struct{ *fakeConn }

func (udpFake) Protocol() int { return protoUDP }

func (u udpFake) UDPHold() error    { u.calls = append(u.calls, "hold"); return nil }
func (u udpFake) UDPRelease() error { u.calls = append(u.calls, "release"); return nil }

func TestUDPCommands(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		ev         Event
		payload    string
		tcp        bool
		want       string // calls, joined by "; "
		wantPay    string
		wantErr    string
	}{
		{"payload and respond", `when CLIENT_DATA { if {[UDP::payload] eq "ping"} { UDP::respond pong; UDP::drop } }`,
			ClientData, "ping", false, `respond clientside "pong"; discard`, "ping", ""},
		{"payload length and part", `when CLIENT_DATA { UDP::respond "[UDP::payload length] [UDP::payload 1 2]" }`,
			ClientData, "abcdef", false, `respond clientside "6 bc"`, "abcdef", ""},
		{"replace", `when SERVER_DATA { UDP::payload replace 0 2 XYZ }`,
			ServerData, "abcd", false, "", "XYZcd", ""},
		{"ports", `when CLIENT_ACCEPTED { log local0. "[UDP::client_port] [UDP::local_port] [UDP::remote_port] [UDP::server_port]" }`,
			ClientAccepted, "", false, "", "", ""},
		{"not on tcp", `when CLIENT_DATA { UDP::payload }`, ClientData, "x", true, "", "x", "the virtual server is not UDP"},
		{"drop takes no argument", `when CLIENT_DATA { UDP::drop now }`, ClientData, "x", false, "", "x", "wrong # args"},
		{"hold", `when CLIENT_ACCEPTED { UDP::hold }`, ClientAccepted, "", false, "hold", "", ""},
		{"release", `when SERVER_CONNECTED { UDP::release }`, ServerConnected, "", false, "release", "", ""},
		{"release in LB_SELECTED", `when LB_SELECTED { UDP::release }`, LBSelected, "", false, "release", "", ""},
		{"hold only in CLIENT_ACCEPTED", `when CLIENT_DATA { UDP::hold }`, ClientData, "x", false, "", "x", "UDP::hold: not valid in CLIENT_DATA (valid in CLIENT_ACCEPTED)"},
		{"release not in CLIENT_DATA", `when CLIENT_DATA { UDP::release }`, ClientData, "x", false, "", "x", "valid in LB_SELECTED, SERVER_CONNECTED"},
		{"hold not on tcp", `when CLIENT_ACCEPTED { UDP::hold }`, ClientAccepted, "", true, "", "", "the virtual server is not UDP"},
		{"hold takes no argument", `when CLIENT_ACCEPTED { UDP::hold 5 }`, ClientAccepted, "", false, "", "", "wrong # args"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs := &logSink{}
			p := NewProgram(&Env{Log: logs.log}, mustCompile(t, "/Common/r", tc.body))
			fc := newFakeConn()
			side := ClientSide
			if tc.ev == ServerData {
				side = ServerSide
			}
			fc.payload[side] = []byte(tc.payload)
			var c Conn = udpFake{fc}
			if tc.tcp {
				c = fc
			}
			s := p.NewConnState(c)
			defer s.Release()
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
			if got := strings.Join(fc.calls, "; "); got != tc.want {
				t.Errorf("calls %q, want %q", got, tc.want)
			}
			if got := string(fc.payload[side]); got != tc.wantPay {
				t.Errorf("payload %q, want %q", got, tc.wantPay)
			}
			if tc.name == "ports" && (len(logs.lines) != 1 || !strings.HasSuffix(logs.lines[0], "40001 10100 40001 9000")) {
				t.Errorf("log %q", logs.lines)
			}
		})
	}
}
