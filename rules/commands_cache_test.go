package rules

import (
	"strings"
	"testing"
)

func TestCacheCommands(t *testing.T) {
	for _, c := range []struct {
		name, body string
		noProfile  bool
		want       CacheState
		err        string
	}{
		{name: "nothing asked", body: "when HTTP_REQUEST { }"},
		{name: "disable", body: "when HTTP_REQUEST { CACHE::disable }", want: CacheState{Set: -1}},
		{name: "enable undoes disable", body: "when HTTP_REQUEST { CACHE::disable; CACHE::enable }", want: CacheState{Set: 1}},
		{name: "expire", body: "when HTTP_REQUEST { CACHE::expire }", want: CacheState{Expire: true}},
		{name: "arguments", body: "when HTTP_REQUEST { CACHE::disable now }", err: "wrong # args"},
		{name: "uri", body: `when HTTP_REQUEST { CACHE::uri [string tolower "/A/B"] }`, want: CacheState{URI: "/a/b"}},
		{name: "uri read back", body: `when HTTP_REQUEST { CACHE::uri /x; CACHE::userkey "lang=[CACHE::uri]" }`, want: CacheState{URI: "/x", UserKey: "lang=/x"}},
		{name: "userkey", body: "when HTTP_REQUEST { CACHE::userkey de }", want: CacheState{UserKey: "de"}},
		{name: "userkey arguments", body: "when HTTP_REQUEST { CACHE::userkey }", err: "wrong # args"},
		{name: "without the profile", body: "when HTTP_REQUEST { CACHE::expire }", noProfile: true, err: "no web-acceleration profile"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := NewProgram(&Env{}, mustCompile(t, "cache", c.body))
			s := p.NewConnState(newFakeConn())
			defer s.Release()
			if !c.noProfile {
				s.SetCache()
			}
			err := s.Run(HTTPRequest)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Cache().Take(); got != c.want {
				t.Errorf("took %+v, want %+v", got, c.want)
			}
			if again := s.Cache().Take(); again != (CacheState{}) {
				t.Errorf("carried over: %+v", again)
			}
		})
	}
	r := mustCompile(t, "needs", "when HTTP_REQUEST {\n  if { [HTTP::path] starts_with \"/api\" } { CACHE::disable }\n}")
	if n := r.CacheNeeds(); len(n) != 1 || n[0].Name != "CACHE::disable" || n[0].Line != 2 {
		t.Errorf("CacheNeeds = %+v", n)
	}
}
