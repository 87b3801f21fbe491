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
			s := runScript(t, conn, tc.ev, tc.script, tc.wantErr)
			if s == nil {
				return
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

// settingsFake is an sslFake whose TLS settings rules may change.
type settingsFake struct {
	*sslFake
	mode    [2]bool
	nonSSL  bool
	maxRec  [2]int
	lateNon bool // the client's handshake is done
}

func (f *settingsFake) SSLMode(s Side) bool { return f.mode[s] }
func (f *settingsFake) SSLAllowNonSSL(set, on bool) (bool, error) {
	if set && f.lateNon {
		return false, errors.New("SSL::allow_nonssl: set it in CLIENT_ACCEPTED")
	}
	if set {
		f.nonSSL = on
	}
	return f.nonSSL, nil
}
func (f *settingsFake) SSLMaxRecord(s Side, n int) (int, error) {
	if n > 0 && (n < 256 || n > 16384) {
		return 0, errors.New("SSL::maximum_record_size: out of range")
	}
	if n > 0 {
		f.maxRec[s] = n
	}
	return f.maxRec[s], nil
}

// TestSSLSettingsCommands reads and sets SSL::mode, SSL::allow_nonssl and
// SSL::maximum_record_size through a fake connection, on the event's
// side, with the errors for bad words and for connections that do not
// change their settings.
func TestSSLSettingsCommands(t *testing.T) {
	cases := []struct {
		name    string
		ev      Event
		script  string
		plain   bool
		late    bool
		want    string
		wantErr string
	}{
		{name: "mode client", ev: ClientAccepted, script: `set r [SSL::mode]`, want: "1"},
		{name: "mode server", ev: ServerConnected, script: `set r [SSL::mode]`, want: "0"},
		{name: "mode words", ev: ClientAccepted, script: `SSL::mode x`, wantErr: "wrong # args"},
		{name: "mode http virtual", ev: ClientAccepted, script: `SSL::mode`, plain: true, wantErr: "not changed per connection"},
		{name: "allow_nonssl read", ev: ClientAccepted, script: `set r [SSL::allow_nonssl]`, want: "0"},
		{name: "allow_nonssl set", ev: ClientAccepted, script: `SSL::allow_nonssl 1; set r [SSL::allow_nonssl]`, want: "1"},
		{name: "allow_nonssl set returns nothing", ev: ClientAccepted, script: `set r "<[SSL::allow_nonssl 1]>"`, want: "<>"},
		{name: "allow_nonssl late", ev: ClientSSLHandshake, script: `SSL::allow_nonssl 1`, late: true, wantErr: "CLIENT_ACCEPTED"},
		{name: "allow_nonssl bad", ev: ClientAccepted, script: `SSL::allow_nonssl yes`, wantErr: "wrong # args"},
		{name: "record read", ev: ClientAccepted, script: `set r [SSL::maximum_record_size]`, want: "0"},
		{name: "record set", ev: ClientAccepted, script: `SSL::maximum_record_size 1024; set r [SSL::maximum_record_size]`, want: "1024"},
		{name: "record set server", ev: ServerConnected, script: `SSL::maximum_record_size 512; set r [clientside { SSL::maximum_record_size }]/[SSL::maximum_record_size]`, want: "0/512"},
		{name: "record range", ev: ClientAccepted, script: `SSL::maximum_record_size 100`, wantErr: "out of range"},
		{name: "record bad", ev: ClientAccepted, script: `SSL::maximum_record_size big`, wantErr: "bad size"},
		{name: "record zero", ev: ClientAccepted, script: `SSL::maximum_record_size 0`, wantErr: "bad size"},
		{name: "record words", ev: ClientAccepted, script: `SSL::maximum_record_size 1 2`, wantErr: "wrong # args"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &settingsFake{sslFake: &sslFake{fakeConn: newFakeConn()}, mode: [2]bool{ClientSide: true}, lateNon: tc.late}
			var conn Conn = f
			if tc.plain {
				conn = f.sslFake
			}
			s := runScript(t, conn, tc.ev, tc.script, tc.wantErr)
			if s == nil {
				return
			}
			if got, _ := s.Var("r"); got != tc.want {
				t.Fatalf("%s: r = %q, want %q", tc.script, got, tc.want)
			}
		})
	}
}

// fpFake is a connection on an SSL forward proxy.
type fpFake struct {
	*fakeConn
	bypass bool
}

func (f *fpFake) ForwardProxyPolicy(set string) (string, error) {
	if set != "" {
		f.bypass = set == "bypass"
	}
	if f.bypass {
		return "bypass", nil
	}
	return "intercept", nil
}

// TestSSLForwardProxyCommand: SSL::forward_proxy policy reads and sets
// the decision; the forms openltm does not take, bad words and a
// connection that is no forward proxy are errors.
func TestSSLForwardProxyCommand(t *testing.T) {
	for _, tc := range []struct {
		script  string
		plain   bool
		want    string
		wantErr string
	}{
		{script: `set r [SSL::forward_proxy policy]`, want: "intercept"},
		{script: `SSL::forward_proxy policy bypass; set r [SSL::forward_proxy policy]`, want: "bypass"},
		{script: `set r "<[SSL::forward_proxy policy intercept]>"`, want: "<>"},
		{script: `SSL::forward_proxy policy maybe`, wantErr: "wrong # args"},
		{script: `SSL::forward_proxy`, wantErr: "wrong # args"},
		{script: `SSL::forward_proxy cert`, wantErr: "not implemented"},
		{script: `SSL::forward_proxy verified_handshake enable`, wantErr: "not implemented"},
		{script: `SSL::forward_proxy policy`, plain: true, wantErr: "not an SSL forward proxy"},
	} {
		t.Run(tc.script, func(t *testing.T) {
			f := &fpFake{fakeConn: newFakeConn()}
			var conn Conn = f
			if tc.plain {
				conn = f.fakeConn
			}
			r := mustCompile(t, "r", "when CLIENTSSL_CLIENTHELLO { "+tc.script+" }")
			s := NewProgram(&Env{Log: func(string, string) {}}, r).NewConnState(conn)
			defer s.Release()
			err := s.Run(ClientSSLClientHello)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := s.Var("r"); got != tc.want {
				t.Fatalf("r = %q, want %q", got, tc.want)
			}
		})
	}
}

// runScript runs script as the one handler of ev on conn. With wantErr
// the run must fail saying it, and runScript returns nil; else it must
// succeed, and the connection's state is returned (released when t
// ends) for its variables.
func runScript(t *testing.T, conn Conn, ev Event, script, wantErr string) *ConnState {
	t.Helper()
	r := mustCompile(t, "r", "when "+ev.String()+" { "+script+" }")
	s := NewProgram(&Env{Log: func(string, string) {}}, r).NewConnState(conn)
	t.Cleanup(s.Release)
	err := s.Run(ev)
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("%s: error %v, want one saying %q", script, err, wantErr)
		}
		return nil
	}
	if err != nil {
		t.Fatalf("%s: %v", script, err)
	}
	return s
}
