package rules

import (
	"strings"
	"testing"
)

func TestCompressCommands(t *testing.T) {
	cases := []struct {
		name, body string
		ev         Event
		noProfile  bool
		want       CompressState
		err        string
	}{
		{name: "nothing asked", body: "when HTTP_REQUEST { }", ev: HTTPRequest},
		{name: "disable", body: "when HTTP_REQUEST { COMPRESS::disable }", ev: HTTPRequest, want: CompressState{Set: -1}},
		{name: "enable in the response", body: "when HTTP_RESPONSE { COMPRESS::enable }", ev: HTTPResponse, want: CompressState{Set: 1}},
		{name: "the last switch wins", body: "when HTTP_RESPONSE { COMPRESS::enable; COMPRESS::disable }", ev: HTTPResponse, want: CompressState{Set: -1}},
		{name: "method and level", body: "when HTTP_REQUEST { COMPRESS::method prefer deflate; COMPRESS::gzip level 9 }", ev: HTTPRequest, want: CompressState{Prefer: "deflate", Level: 9}},
		{name: "kept settings", body: "when HTTP_RESPONSE { COMPRESS::buffer_size 8192; COMPRESS::nodelay; COMPRESS::gzip memory_level 16; COMPRESS::gzip window_size 64 }", ev: HTTPResponse},
		{name: "method unknown", body: "when HTTP_REQUEST { COMPRESS::method prefer br }", ev: HTTPRequest, err: `"br" is not gzip or deflate`},
		{name: "method form", body: "when HTTP_REQUEST { COMPRESS::method gzip }", ev: HTTPRequest, err: "wrong # args"},
		{name: "level out of range", body: "when HTTP_REQUEST { COMPRESS::gzip level 10 }", ev: HTTPRequest, err: "level 10 is out of range: 1 to 9"},
		{name: "level not a number", body: "when HTTP_REQUEST { COMPRESS::gzip level high }", ev: HTTPRequest, err: "expected integer"},
		{name: "gzip setting unknown", body: "when HTTP_REQUEST { COMPRESS::gzip speed 3 }", ev: HTTPRequest, err: `"speed" is not level, memory_level or window_size`},
		{name: "enable takes no arguments", body: "when HTTP_REQUEST { COMPRESS::enable now }", ev: HTTPRequest, err: "wrong # args"},
		{name: "buffer_size needs its size", body: "when HTTP_REQUEST { COMPRESS::buffer_size }", ev: HTTPRequest, err: "wrong # args"},
		{name: "without the profile", body: "when HTTP_REQUEST { COMPRESS::disable }", ev: HTTPRequest, noProfile: true, err: "no http-compression profile"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := NewProgram(&Env{}, mustCompile(t, "compress", c.body))
			s := p.NewConnState(newFakeConn())
			defer s.Release()
			if !c.noProfile {
				s.SetCompress()
			}
			err := s.Run(c.ev)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			st := s.Compress()
			if got := st.Take(); got != c.want {
				t.Errorf("took %+v, want %+v", got, c.want)
			}
			if again := st.Take(); again != (CompressState{}) {
				t.Errorf("a second Take gave %+v: the choice carried over", again)
			}
		})
	}
}

// TestCompressNeeds: the COMPRESS:: commands in when blocks, with their
// places, are what the configuration checks against the virtual's
// profiles; RULE_INIT's are not (no message runs there).
func TestCompressNeeds(t *testing.T) {
	r := mustCompile(t, "needs", `when RULE_INIT { set ::x 1 }
when HTTP_REQUEST {
    if { [HTTP::uri] starts_with "/img" } { COMPRESS::disable }
}
when HTTP_RESPONSE { COMPRESS::enable }`)
	got := r.CompressNeeds()
	if len(got) != 2 || got[0].Name != "COMPRESS::disable" || got[0].Line != 3 || got[0].Event != HTTPRequest ||
		got[1].Name != "COMPRESS::enable" || got[1].Line != 5 || got[1].Event != HTTPResponse {
		t.Fatalf("CompressNeeds = %+v", got)
	}
	if n := mustCompile(t, "none", "when HTTP_REQUEST { STREAM::disable }").CompressNeeds(); len(n) != 0 {
		t.Errorf("a rule without COMPRESS:: needs %+v", n)
	}
}
