package rules

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// sslFake is a connection whose sides speak TLS as info says (nil: no
// TLS on that side).
type sslFake struct {
	*fakeConn
	info [2]*SSLInfo
}

func (f *sslFake) SSL(s Side) (*SSLInfo, bool) { return f.info[s], f.info[s] != nil }
func (f *sslFake) SSLDisable(Side) error       { return errors.New("not here") }
func (f *sslFake) SSLEnable(Side) error        { return errors.New("not here") }

// evalSSL runs script as a when block of ev on conn and returns what it
// logged, or its error.
func evalSSL(t *testing.T, conn *sslFake, ev Event, script string) (string, error) {
	t.Helper()
	logs := &logSink{}
	r := mustCompile(t, "r", "when "+ev.String()+" { log local0. "+script+" }")
	p := NewProgram(&Env{Log: logs.log}, r)
	s := p.NewConnState(conn)
	defer s.Release()
	if err := s.Run(ev); err != nil {
		return "", err
	}
	if len(logs.lines) != 1 {
		t.Fatalf("%s: logged %q", script, logs.lines)
	}
	_, line, _ := strings.Cut(logs.lines[0], ": ")
	return line, nil
}

// TestSSLKeyCommands reads the client random, the secrets, SNI and ALPN
// of each side as BIG-IP's SSL:: commands give them: hex, empty for what
// the side's version or handshake did not make, Tcl errors for bad words.
func TestSSLKeyCommands(t *testing.T) {
	random := bytes.Repeat([]byte{0xab}, 32)
	secrets := map[string][]byte{
		"CLIENT_RANDOM":                   {0x01, 0x02},
		"CLIENT_HANDSHAKE_TRAFFIC_SECRET": {0x11},
		"SERVER_HANDSHAKE_TRAFFIC_SECRET": {0x12},
		"CLIENT_TRAFFIC_SECRET_0":         {0x13},
		"SERVER_TRAFFIC_SECRET_0":         {0x14},
	}
	client := &SSLInfo{Version: "TLSv1.3", ServerName: "app.example", ALPN: "h2", ClientRandom: random, SNIRequired: true,
		Secret: func(l string) []byte { return secrets[l] }}
	server := &SSLInfo{Version: "TLSv1.2", ServerName: "member.example", ClientRandom: []byte{0xcd}}
	conn := &sslFake{fakeConn: newFakeConn(), info: [2]*SSLInfo{ClientSide: client, ServerSide: server}}
	cases := []struct {
		ev      Event
		script  string
		want    string
		wantErr string
	}{
		{ClientSSLHandshake, `"CLIENT_RANDOM [SSL::clientrandom] [SSL::sessionsecret]"`, "CLIENT_RANDOM " + strings.Repeat("ab", 32) + " 0102", ""},
		{ClientSSLHandshake, `[SSL::tls13_secret client hs]`, "11", ""},
		{ClientSSLHandshake, `[SSL::tls13_secret server hs]`, "12", ""},
		{ClientSSLHandshake, `[SSL::tls13_secret client app]`, "13", ""},
		{ClientSSLHandshake, `[SSL::tls13_secret server app]`, "14", ""},
		{ClientSSLHandshake, `[SSL::tls13_secret client_hs]`, "11", ""},
		{ClientSSLHandshake, `[SSL::tls13_secret SERVER_TRAFFIC_SECRET_0]`, "14", ""},
		{ClientSSLHandshake, `"<[SSL::tls13_secret exporter]>"`, "<>", ""},
		{ClientSSLHandshake, `[SSL::tls13_secret client]`, "", "bad secret"},
		{ClientSSLHandshake, `[SSL::tls13_secret client zz]`, "", "bad secret"},
		{ClientSSLHandshake, `[SSL::tls13_secret]`, "", "wrong # args"},
		{ClientSSLHandshake, `[SSL::clientrandom x]`, "", "wrong # args"},
		{ClientSSLHandshake, `"[SSL::sni name] [SSL::sni required] [SSL::alpn]"`, "app.example 1 h2", ""},
		{ClientSSLHandshake, `[SSL::sni]`, "", "wrong # args"},
		{ClientSSLHandshake, `"<[SSL::nextproto]>"`, "<>", ""},
		{ClientSSLHandshake, `[SSL::nextproto "spdy/3 http/1.1"]`, "", "NPN is not supported"},
		{ClientSSLHandshake, `[SSL::sni bogus]`, "", "bad option"},
		// The server side: a TLS 1.2 connection whose secrets were not kept.
		{ServerSSLHandshake, `"[SSL::sni name] [SSL::sni required] <[SSL::alpn]> [SSL::clientrandom] <[SSL::sessionsecret]> <[SSL::tls13_secret client hs]>"`,
			"member.example 0 <> cd <> <>", ""},
	}
	for _, tc := range cases {
		got, err := evalSSL(t, conn, tc.ev, tc.script)
		switch {
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: error %v, want one with %q", tc.script, err, tc.wantErr)
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tc.script, err)
		case tc.wantErr == "" && got != tc.want:
			t.Errorf("%s = %q, want %q", tc.script, got, tc.want)
		}
	}
	// Without TLS on the side: a Tcl error, as for the other SSL:: commands.
	plain := &sslFake{fakeConn: newFakeConn()}
	if _, err := evalSSL(t, plain, ClientSSLHandshake, `[SSL::sni name]`); err == nil || !strings.Contains(err.Error(), "no TLS") {
		t.Errorf("SSL::sni without TLS: %v", err)
	}
}

// TestSSLKeepsSecrets: a program keeps TLS key material only when one of
// its rules names a command that reads it, wherever in the rule.
func TestSSLKeepsSecrets(t *testing.T) {
	for _, tc := range []struct {
		body string
		want bool
	}{
		{`when CLIENTSSL_HANDSHAKE { log local0. "[SSL::clientrandom] [SSL::sni name] [SSL::alpn]" }`, false},
		{`when CLIENTSSL_HANDSHAKE { log local0. "CLIENT_RANDOM [SSL::clientrandom] [SSL::sessionsecret]" }`, true},
		{`when SERVERSSL_HANDSHAKE { log local0. [SSL::tls13_secret server app] }`, true},
		{`proc keys {} { return [SSL::tls13_secret client hs] }
when CLIENTSSL_HANDSHAKE { log local0. [call keys] }`, true},
	} {
		p := NewProgram(nil, mustCompile(t, "r", tc.body))
		if got := p.KeepsSecrets(); got != tc.want {
			t.Errorf("%s: KeepsSecrets = %v, want %v", tc.body, got, tc.want)
		}
	}
	if NewProgram(nil, mustCompile(t, "a", `when CLIENT_ACCEPTED { }`), mustCompile(t, "b", `when CLIENTSSL_HANDSHAKE { log local0. [SSL::sessionsecret] }`)).KeepsSecrets() != true {
		t.Error("a program whose second rule reads the secrets does not keep them")
	}
}

// TestSSLALPNSet: a rule that sets the offered protocols (SSL::alpn
// PROTOCOLS) is kept, not run; reading is supported.
func TestSSLALPNSet(t *testing.T) {
	r, err := Compile("r", `when CLIENTSSL_CLIENTHELLO { SSL::alpn "h2" }`)
	if r == nil || err == nil || !strings.Contains(err.Error(), "SSL::alpn PROTOCOLS") {
		t.Fatalf("SSL::alpn PROTOCOLS: %v", err)
	}
	if _, err := Compile("r", `when CLIENTSSL_HANDSHAKE { log local0. [SSL::alpn] }`); err != nil {
		t.Fatalf("SSL::alpn: %v", err)
	}
}
