package rules

import (
	"errors"
	"strings"
	"testing"
)

// sslDataFake is an sslFake that also holds decrypted bytes for rules.
type sslDataFake struct {
	*sslFake
	noTLS [2]bool
}

func (f *sslDataFake) SSLCollect(s Side, length int) error {
	if f.noTLS[s] {
		return errors.New("SSL::collect: no TLS on that side")
	}
	f.record("sslcollect %s %d", s, length)
	return nil
}

// TestSSLDataCommands runs SSL::collect, payload, release and respond,
// SSL::modssl_sessionid_headers and SSL::renegotiate over a fake
// connection: what each asks of the connection, on the event's side, and
// the errors for bad words and connections that cannot do it.
func TestSSLDataCommands(t *testing.T) {
	info := &SSLInfo{Version: "TLSv1.2", SessionID: []byte{0xab, 0xcd}, DesiredSessionID: []byte{0x01}}
	newConn := func() *sslDataFake {
		f := &sslDataFake{sslFake: &sslFake{fakeConn: newFakeConn(), info: [2]*SSLInfo{ClientSide: info, ServerSide: info}}}
		f.payload[ClientSide] = []byte("HELO world")
		f.payload[ServerSide] = []byte("250 ok")
		return f
	}
	cases := []struct {
		name    string
		ev      Event
		script  string
		plain   bool // an SSLConn without SSLDataConn (an http virtual)
		noTLS   bool // the server side speaks plaintext
		want    string
		calls   string
		wantErr string
	}{
		{name: "collect", ev: ClientSSLHandshake, script: `SSL::collect`, calls: "sslcollect clientside 0"},
		{name: "collect length", ev: ClientSSLHandshake, script: `SSL::collect 4`, calls: "sslcollect clientside 4"},
		{name: "collect server", ev: ServerSSLHandshake, script: `SSL::collect 2`, calls: "sslcollect serverside 2"},
		{name: "collect bad", ev: ClientSSLHandshake, script: `SSL::collect -1`, wantErr: "bad length"},
		{name: "collect words", ev: ClientSSLHandshake, script: `SSL::collect 1 2`, wantErr: "wrong # args"},
		{name: "collect plaintext side", ev: ServerConnected, script: `SSL::collect`, noTLS: true, wantErr: "no TLS"},
		{name: "collect http virtual", ev: ClientSSLHandshake, script: `SSL::collect`, plain: true, wantErr: "does not hand decrypted data"},
		{name: "payload", ev: ClientSSLData, script: `set r [SSL::payload]`, want: "HELO world"},
		{name: "payload part", ev: ClientSSLData, script: `set r [SSL::payload 5 5]`, want: "world"},
		{name: "payload length", ev: ClientSSLData, script: `set r [SSL::payload length]`, want: "10"},
		{name: "payload server", ev: ServerSSLData, script: `set r [SSL::payload 3]`, want: "250"},
		{name: "payload replace", ev: ClientSSLData, script: `SSL::payload replace 0 4 EHLO; set r [SSL::payload]`, want: "EHLO world"},
		{name: "payload bad", ev: ClientSSLData, script: `SSL::payload x`, wantErr: "expected length"},
		{name: "release", ev: ClientSSLData, script: `SSL::release`, calls: "release clientside -1"},
		{name: "release length", ev: ServerSSLData, script: `SSL::release 3`, calls: "release serverside 3"},
		{name: "release bad", ev: ClientSSLData, script: `SSL::release x`, wantErr: "bad length"},
		{name: "respond", ev: ClientSSLData, script: `SSL::respond "220 hi\r\n"`, calls: `respond clientside "220 hi\r\n"`},
		{name: "respond words", ev: ClientSSLData, script: `SSL::respond`, wantErr: "wrong # args"},
		{name: "respond http virtual", ev: ClientSSLData, script: `SSL::respond x`, plain: true, wantErr: "does not hand decrypted data"},
		{name: "modssl", ev: ClientSSLHandshake, script: `set r [SSL::modssl_sessionid_headers]`, want: "SSLClientSessionId 01"},
		{name: "modssl initial", ev: ClientSSLHandshake, script: `set r [SSL::modssl_sessionid_headers initial]`, want: "SSLClientSessionId 01"},
		{name: "modssl current", ev: ClientSSLHandshake, script: `set r [SSL::modssl_sessionid_headers current]`, want: "SSLClientCurrentSessionId abcd"},
		{name: "modssl bad", ev: ClientSSLHandshake, script: `SSL::modssl_sessionid_headers now`, wantErr: "wrong # args"},
		{name: "renegotiate disable", ev: ClientSSLHandshake, script: `SSL::renegotiate disable`},
		{name: "renegotiate", ev: ClientSSLHandshake, script: `SSL::renegotiate`, wantErr: "does not renegotiate"},
		{name: "renegotiate enable", ev: ClientSSLHandshake, script: `SSL::renegotiate enable`, wantErr: "does not renegotiate"},
		{name: "renegotiate disable serverside", ev: ServerSSLHandshake, script: `SSL::renegotiate disable`, wantErr: "renegotiation setting decides"},
		{name: "renegotiate bad", ev: ClientSSLHandshake, script: `SSL::renegotiate now`, wantErr: "wrong # args"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newConn()
			f.noTLS[ServerSide] = tc.noTLS
			var conn Conn = f
			if tc.plain {
				conn = f.sslFake
			}
			r := mustCompile(t, "r", "when "+tc.ev.String()+" { "+tc.script+" }")
			p := NewProgram(&Env{Log: func(string, string) {}}, r)
			s := p.NewConnState(conn)
			defer s.Release()
			err := s.Run(tc.ev)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("%s: error %v, want one saying %q", tc.script, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", tc.script, err)
			}
			if got := strings.Join(f.calls, "; "); got != tc.calls {
				t.Fatalf("%s: asked %q, want %q", tc.script, got, tc.calls)
			}
			if tc.want != "" {
				if got, _ := s.Var("r"); got != tc.want {
					t.Fatalf("%s: r = %q, want %q", tc.script, got, tc.want)
				}
			}
		})
	}
}

// TestSSLDataEvents: CLIENTSSL_DATA runs on the client side and
// SERVERSSL_DATA on the server side, which SSL:: and TCP:: commands act on.
func TestSSLDataEvents(t *testing.T) {
	for ev, side := range map[string]Side{"CLIENTSSL_DATA": ClientSide, "SERVERSSL_DATA": ServerSide} {
		e, ok := ParseEvent(ev)
		if !ok || e.Side() != side {
			t.Fatalf("%s: parsed %v, side %v", ev, ok, e.Side())
		}
	}
}
