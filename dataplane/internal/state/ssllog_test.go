package state

import (
	"net"
	"testing"
)

// TestSSLLogLevels: a line is logged at or below the level set, never
// without a sink, and a nil log logs nothing.
func TestSSLLogLevels(t *testing.T) {
	var nilLog *SSLLog
	if nilLog.Enabled(SevError) {
		t.Fatal("a nil log is enabled")
	}
	sink := func(int, string) {}
	for _, tc := range []struct {
		level int
		sink  bool
		sev   int
		want  bool
	}{
		{SevWarning, true, SevWarning, true},
		{SevWarning, true, SevDebug, false},
		{SevWarning, true, SevError, true},
		{SevDebug, true, SevDebug, true},
		{SevError, true, SevWarning, false},
		{SevDebug, false, SevError, false},
	} {
		var l SSLLog
		if tc.sink {
			l.Set(tc.level, sink)
		} else {
			l.Set(tc.level, nil)
		}
		if got := l.Enabled(tc.sev); got != tc.want {
			t.Errorf("level %d, sink %v: severity %d enabled %v, want %v", tc.level, tc.sink, tc.sev, got, tc.want)
		}
	}
}

// TestLogAddr: addresses are written as BIG-IP's logs write them.
func TestLogAddr(t *testing.T) {
	for _, tc := range []struct {
		a    net.Addr
		want string
	}{
		{&net.TCPAddr{IP: net.ParseIP("127.58.0.1"), Port: 443}, "127.58.0.1:443"},
		{&net.TCPAddr{IP: net.ParseIP("::ffff:127.58.0.2"), Port: 80}, "127.58.0.2:80"},
		{&net.TCPAddr{IP: net.ParseIP("2001:db8::1"), Port: 8443}, "2001:db8::1.8443"},
		{nil, "0.0.0.0:0"},
	} {
		if got := logAddr(tc.a); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.a, got, tc.want)
		}
	}
}
