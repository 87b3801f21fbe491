package rules

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/radius"
)

// rfc2865Request is RFC 2865 §7.1's Access-Request: User-Name nemo,
// NAS-IP-Address 192.168.1.16, NAS-Port 3.
const rfc2865Request = "010000380f403f9473978057bd83d5cb98f4227a01066e656d6f02120dbe708d93d413ce3196e43f782a0aee0406c0a80110050600000003"

func TestRADIUSCommands(t *testing.T) {
	req, _ := hex.DecodeString(rfc2865Request)
	for _, tc := range []struct {
		name, body string
		ev         Event
		noProfile  bool
		payload    []byte
		wantLog    string
		check      func(p []byte) string // "" when the packet is right
		wantErr    string
	}{
		{"read header and attributes", `when CLIENT_DATA { log local0. "[RADIUS::code] [RADIUS::id] [RADIUS::avp User-Name] [RADIUS::avp 4] [RADIUS::avp NAS-Port] [RADIUS::avp 5 string] <[RADIUS::avp 31]> [RADIUS::rtdom]" }`,
			ClientData, false, req, "1 0 nemo 192.168.1.16 3 \x00\x00\x00\x03 <> 0", nil, ""},
		{"replace and insert", `when CLIENT_DATA { RADIUS::avp replace User-Name alice; RADIUS::avp insert 31 02-aa; RADIUS::avp replace NAS-IP-Address 10.0.0.1 ip4; RADIUS::avp insert 5 7 integer index 0 }`,
			ClientData, false, req, "", func(p []byte) string {
				if v, _ := radius.Attr(p, radius.AttrID{Type: 1}, 0); string(v) != "alice" {
					return "User-Name " + string(v)
				}
				if v, _ := radius.Attr(p, radius.AttrID{Type: 31}, 0); string(v) != "02-aa" {
					return "Calling-Station-Id " + string(v)
				}
				if v, _ := radius.Attr(p, radius.AttrID{Type: 4}, 0); string(v) != "\x0a\x00\x00\x01" {
					return "NAS-IP-Address"
				}
				if v, _ := radius.Attr(p, radius.AttrID{Type: 5}, 0); string(v) != "\x00\x00\x00\x07" || radius.Count(p, radius.AttrID{Type: 5}) != 2 {
					return "NAS-Port"
				}
				return ""
			}, ""},
		{"delete", `when SERVER_DATA { RADIUS::avp delete NAS-Port }`, ServerData, false, req, "", func(p []byte) string {
			if radius.Count(p, radius.AttrID{Type: 5}) != 0 {
				return "NAS-Port still there"
			}
			return ""
		}, ""},
		{"vendor", `when CLIENT_DATA { RADIUS::avp insert 26 v1 vendor 9 1; log local0. [RADIUS::avp 26 vendor 9 1] }`, ClientData, false, req, "v1", nil, ""},
		{"no profile", `when CLIENT_DATA { RADIUS::code }`, ClientData, true, req, "", nil, "the virtual server has no radius profile"},
		{"not a packet", `when CLIENT_DATA { RADIUS::code }`, ClientData, false, []byte("hello"), "", nil, "shorter than a RADIUS header"},
		{"not in CLIENT_ACCEPTED", `when CLIENT_ACCEPTED { RADIUS::id }`, ClientAccepted, false, nil, "", nil, "not valid in CLIENT_ACCEPTED"},
		{"bad attribute", `when CLIENT_DATA { RADIUS::avp No-Such }`, ClientData, false, req, "", nil, "neither an attribute number"},
		{"bad ip4", `when CLIENT_DATA { RADIUS::avp replace 4 nope ip4 }`, ClientData, false, req, "", nil, `"nope" is not an IPv4 address`},
		{"replace absent", `when CLIENT_DATA { RADIUS::avp replace 31 x }`, ClientData, false, req, "", nil, "no attribute 31 at index 0"},
		{"bad type", `when CLIENT_DATA { RADIUS::avp 4 float }`, ClientData, false, req, "", nil, `"float" is not a type`},
		{"subscriber needs PEM", `when CLIENT_DATA { RADIUS::subscriber }`, ClientData, false, req, "", nil, "needs PEM"},
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
			if !tc.noProfile {
				s.SetRADIUS()
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
			out := fc.payload[side]
			if n, err := radius.Check(out); err != nil || n != len(out) {
				t.Fatalf("the packet does not check: %v", err)
			}
			if tc.check != nil {
				if msg := tc.check(out); msg != "" {
					t.Fatal(msg)
				}
			}
		})
	}
}
