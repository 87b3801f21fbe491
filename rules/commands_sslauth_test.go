package rules

import (
	"fmt"
	"strings"
	"testing"
)

// authFake is a connection whose certificate checks rules change; calls
// records what they asked.
type authFake struct {
	*sslFake
	calls []string
	mode  int
}

func (f *authFake) SSLAuthDepth(s Side, depth int) error {
	f.calls = append(f.calls, fmt.Sprintf("depth %s %d", s, depth))
	return nil
}

func (f *authFake) SSLAuthFrequency(always bool) error {
	f.calls = append(f.calls, fmt.Sprint("always ", always))
	return nil
}

func (f *authFake) SSLSecureRenegotiation(s Side, set int) (int, error) {
	if set >= 0 {
		f.calls = append(f.calls, fmt.Sprintf("reneg %s %d", s, set))
		f.mode = set
	}
	return f.mode, nil
}

// TestSSLAuthCommands runs SSL::authenticate, SSL::secure_renegotiation
// and SSL::cert_constraint as rules write them: each form reaches the
// connection with the running event's side, bad forms are Tcl errors
// that change nothing.
func TestSSLAuthCommands(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ev     Event
		script string
		calls  string
		log    string
		err    string
	}{
		{"depth client", ClientAccepted, `SSL::authenticate depth 3`, "depth clientside 3", "", ""},
		{"depth server", ServerConnected, `SSL::authenticate depth 0`, "depth serverside 0", "", ""},
		{"depth bad", ClientAccepted, `SSL::authenticate depth -1`, "", "", "not a depth"},
		{"depth word", ClientAccepted, `SSL::authenticate depth deep`, "", "", "not a depth"},
		{"always", ClientSSLClientHello, `SSL::authenticate always`, "always true", "", ""},
		{"once", ClientAccepted, `SSL::authenticate once`, "always false", "", ""},
		{"once server", ServerConnected, `SSL::authenticate once`, "", "", "client-side context only"},
		{"authenticate bad", ClientAccepted, `SSL::authenticate twice`, "", "", "wrong # args"},
		{"reneg read", ClientSSLClientHello, `log local0. [SSL::secure_renegotiation]`, "", "0", ""},
		{"reneg strict", ClientSSLClientHello, `SSL::secure_renegotiation require-strict`, "reneg clientside 2", "", ""},
		{"reneg server", ServerSSLServerHello, `SSL::secure_renegotiation request`, "reneg serverside 0", "", ""},
		{"reneg bad", ClientAccepted, `SSL::secure_renegotiation strict`, "", "", "wrong # args"},
		{"constraint c3d off", ClientSSLHandshake, `SSL::cert_constraint 1.2.3.4 value`, "", "", "ssl-c3d"},
		{"constraint args", ClientSSLHandshake, `SSL::cert_constraint 1.2.3.4`, "", "", "wrong # args"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			af := &authFake{sslFake: &sslFake{fakeConn: &fakeConn{}}}
			logs := &logSink{}
			r := mustCompile(t, "r", "when "+tc.ev.String()+" { "+tc.script+" }")
			s := NewProgram(&Env{Log: logs.log}, r).NewConnState(af)
			defer s.Release()
			err := s.Run(tc.ev)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				if len(af.calls) != 0 {
					t.Fatalf("a refused command reached the connection: %q", af.calls)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(af.calls, ","); got != tc.calls {
				t.Errorf("calls %q, want %q", got, tc.calls)
			}
			if tc.log != "" && (len(logs.lines) != 1 || !strings.HasSuffix(logs.lines[0], ": "+tc.log)) {
				t.Errorf("logged %q, want %q", logs.lines, tc.log)
			}
		})
	}
	for body, want := range map[string]bool{
		`when CLIENT_ACCEPTED { SSL::authenticate depth 2 }`:               true,
		`when CLIENTSSL_CLIENTHELLO { SSL::secure_renegotiation require }`: true,
		`when CLIENTSSL_HANDSHAKE { SSL::cipher name }`:                    false,
	} {
		if got := NewProgram(nil, mustCompile(t, "r", body)).ChecksPeers(); got != want {
			t.Errorf("%s: ChecksPeers %v, want %v", body, got, want)
		}
	}
}
