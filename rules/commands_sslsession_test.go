package rules

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// sessionFake is a connection whose TLS sessions rules act on; calls
// records what they asked.
type sessionFake struct {
	*sslFake
	calls  []string
	ticket []byte
}

func (f *sessionFake) SSLSessionInvalidate(s Side) error {
	f.calls = append(f.calls, "invalidate "+s.String())
	return nil
}

func (f *sessionFake) SSLSessionTicket(Side) ([]byte, error) { return f.ticket, nil }

func (f *sessionFake) SSLHandshakeHold(s Side, hold bool) error {
	if hold {
		f.calls = append(f.calls, "hold")
	} else {
		f.calls = append(f.calls, "resume")
	}
	return nil
}

func (f *sessionFake) SSLUncleanShutdown(s Side, on bool) error {
	if on {
		f.calls = append(f.calls, "unclean "+s.String())
	} else {
		f.calls = append(f.calls, "clean "+s.String())
	}
	return nil
}

func (f *sessionFake) SSLDynamicRecords(set, on bool) (bool, error) {
	if set {
		f.calls = append(f.calls, fmt.Sprint("dynamic ", on))
	}
	return false, nil
}

func (f *sessionFake) SSLRenegotiationSecure(s Side) (bool, error) {
	if s == ServerSide {
		return false, errors.New("SSL::is_renegotiation_secure: only the client's hello is read")
	}
	return true, nil
}

// TestSSLSessionCommands runs the SSL::session family as rules write it:
// each form reaches the connection, bad forms are Tcl errors that change
// nothing, a hold is refused outside CLIENTSSL_CLIENTHELLO, and a
// virtual without the connection's support makes them errors.
func TestSSLSessionCommands(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ev     Event
		script string
		plain  bool
		calls  string
		log    string
		err    string
	}{
		{"invalidate", ClientSSLHandshake, `SSL::session invalidate`, false, "invalidate clientside", "", ""},
		{"invalidate serverside", ServerSSLHandshake, `SSL::session invalidate`, false, "invalidate serverside", "", ""},
		{"session bad", ClientSSLHandshake, `SSL::session drop`, false, "", "", "wrong # args"},
		{"session none", ClientSSLHandshake, `SSL::session`, false, "", "", "wrong # args"},
		{"ticket", ClientSSLHandshake, `log local0. [SSL::sessionticket]`, false, "", "00ff10", ""},
		{"ticket args", ClientSSLHandshake, `SSL::sessionticket x`, false, "", "", "wrong # args"},
		{"hold", ClientSSLClientHello, `SSL::handshake hold`, false, "hold", "", ""},
		{"hold late", ClientSSLHandshake, `SSL::handshake hold`, false, "", "", "only in CLIENTSSL_CLIENTHELLO"},
		{"resume", ClientSSLHandshake, `SSL::handshake resume`, false, "resume", "", ""},
		{"handshake bad", ClientSSLClientHello, `SSL::handshake pause`, false, "", "", "wrong # args"},
		{"unclean", ClientSSLHandshake, `SSL::unclean_shutdown enable`, false, "unclean clientside", "", ""},
		{"clean", ServerSSLHandshake, `SSL::unclean_shutdown disable`, false, "clean serverside", "", ""},
		{"unclean bad", ClientSSLHandshake, `SSL::unclean_shutdown 1`, false, "", "", "wrong # args"},
		{"secure", ClientSSLHandshake, `log local0. [SSL::is_renegotiation_secure]`, false, "", "1", ""},
		{"secure server", ServerSSLHandshake, `SSL::is_renegotiation_secure`, false, "", "", "only the client's hello"},
		{"dynamic read", ClientSSLClientHello, `log local0. [SSL::allow_dynamic_record_sizing]`, false, "", "0", ""},
		{"dynamic on", ClientAccepted, `SSL::allow_dynamic_record_sizing 1`, false, "dynamic true", "", ""},
		{"dynamic off", ClientSSLClientHello, `SSL::allow_dynamic_record_sizing disable`, false, "dynamic false", "", ""},
		{"dynamic bad", ClientAccepted, `SSL::allow_dynamic_record_sizing yes`, false, "", "", "wrong # args"},
		{"dynamic server", ServerSSLHandshake, `SSL::allow_dynamic_record_sizing 1`, false, "", "", "client-ssl setting"},
		{"no support", ClientSSLHandshake, `SSL::session invalidate`, true, "", "", "not handed to rules"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fc := &fakeConn{}
			sf := &sessionFake{sslFake: &sslFake{fakeConn: fc}, ticket: []byte{0, 0xff, 0x10}}
			var conn Conn = sf
			if tc.plain {
				conn = sf.sslFake
			}
			logs := &logSink{}
			r := mustCompile(t, "r", "when "+tc.ev.String()+" { "+tc.script+" }")
			s := NewProgram(&Env{Log: logs.log}, r).NewConnState(conn)
			defer s.Release()
			err := s.Run(tc.ev)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				if len(sf.calls) != 0 {
					t.Fatalf("a refused command reached the connection: %q", sf.calls)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(sf.calls, ","); got != tc.calls {
				t.Errorf("calls %q, want %q", got, tc.calls)
			}
			if tc.log != "" {
				if len(logs.lines) != 1 || !strings.HasSuffix(logs.lines[0], ": "+tc.log) {
					t.Errorf("logged %q, want %q", logs.lines, tc.log)
				}
			}
		})
	}
}

// TestControlsSessions: the dataplane keeps tickets and hellos only for
// rules naming SSL::session, SSL::sessionticket or
// SSL::is_renegotiation_secure, not for SSL::sessionid or
// SSL::sessionsecret, whose names begin alike.
func TestControlsSessions(t *testing.T) {
	for _, tc := range []struct {
		body string
		want bool
	}{
		{`when CLIENTSSL_HANDSHAKE { SSL::session invalidate }`, true},
		{`when CLIENTSSL_HANDSHAKE { log local0. [SSL::sessionticket] }`, true},
		{`when CLIENTSSL_HANDSHAKE { set x [SSL::is_renegotiation_secure] }`, true},
		{`when CLIENTSSL_HANDSHAKE { log local0. "[SSL::sessionid] [SSL::sessionsecret]" }`, false},
		{`when CLIENTSSL_HANDSHAKE { log local0. [SSL::sessionid]; SSL::session invalidate }`, true},
		{`when CLIENT_ACCEPTED { }`, false},
	} {
		if got := NewProgram(nil, mustCompile(t, "r", tc.body)).ControlsSessions(); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.body, got, tc.want)
		}
	}
	var nilProg *Program
	if nilProg.ControlsSessions() {
		t.Error("no program controls sessions")
	}
}
