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
		{name: "useragent value", body: "when HTTP_REQUEST { CACHE::useragent mobile }", want: CacheState{UserAgent: "mobile", UserAgentSet: true}},
		{name: "accept_encoding value", body: "when HTTP_REQUEST { CACHE::accept_encoding gzip }", want: CacheState{AcceptEncoding: "gzip", AcceptEncodingSet: true}},
		{name: "useragent arguments", body: "when HTTP_REQUEST { CACHE::useragent a b }", err: "wrong # args"},
		{name: "priority", body: "when HTTP_REQUEST { CACHE::priority 8 }", want: CacheState{Priority: 8}},
		{name: "priority range", body: "when HTTP_REQUEST { CACHE::priority 11 }", err: "from 1 to 10"},
		{name: "priority number", body: "when HTTP_REQUEST { CACHE::priority high }", err: "from 1 to 10"},
		{name: "disabled", body: "when HTTP_REQUEST { CACHE::disable; CACHE::userkey [CACHE::disabled] }", want: CacheState{Set: -1, UserKey: "1"}},
		{name: "age outside its events", body: "when HTTP_REQUEST { CACHE::age }", err: "not valid in HTTP_REQUEST (valid in CACHE_REQUEST, CACHE_RESPONSE)"},
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

func TestCacheEvents(t *testing.T) {
	entry := &CacheEntry{Age: 7, Hits: 3, Head: []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"), Payload: []byte("hi")}
	for _, c := range []struct {
		name, body string
		ev         Event
		noEntry    bool
		want       string // the rule's result, set in ::r
		took       CacheState
		err        string
	}{
		{name: "age and hits", ev: CacheResponse, body: "when CACHE_RESPONSE { set ::r [CACHE::age]/[CACHE::hits] }", want: "7/3"},
		{name: "age in CACHE_REQUEST", ev: CacheRequest, body: "when CACHE_REQUEST { set ::r [CACHE::age] }", want: "7"},
		{name: "fresh", ev: CacheRequest, body: "when CACHE_REQUEST { set ::r [CACHE::fresh] }", want: "1"},
		{name: "headers", ev: CacheResponse, body: "when CACHE_RESPONSE { set ::r [string length [CACHE::headers]] }", want: "36"},
		{name: "header", ev: CacheResponse, body: "when CACHE_RESPONSE { set ::r [CACHE::header content-length]|[CACHE::header X-None] }", want: "2|"},
		{name: "header arguments", ev: CacheResponse, body: "when CACHE_RESPONSE { CACHE::header }", err: "wrong # args"},
		{name: "payload", ev: CacheResponse, body: "when CACHE_RESPONSE { set ::r [CACHE::payload]:[CACHE::payload length] }", want: "hi:2"},
		{name: "payload arguments", ev: CacheResponse, body: "when CACHE_RESPONSE { CACHE::payload 0 1 }", err: "wrong # args"},
		{name: "headers in CACHE_REQUEST", ev: CacheRequest, body: "when CACHE_REQUEST { CACHE::headers }", err: "valid in CACHE_RESPONSE"},
		{name: "disable in CACHE_REQUEST", ev: CacheRequest, body: "when CACHE_REQUEST { if { [CACHE::age] > 5 } { CACHE::disable } }", took: CacheState{Set: -1}},
		{name: "expire in CACHE_RESPONSE", ev: CacheResponse, body: "when CACHE_RESPONSE { CACHE::expire }", took: CacheState{Expire: true}},
		{name: "disable in CACHE_UPDATE", ev: CacheUpdate, noEntry: true, body: "when CACHE_UPDATE { CACHE::disable; set ::r [CACHE::disabled] }", want: "1", took: CacheState{Set: -1}},
		{name: "disable in CACHE_RESPONSE", ev: CacheResponse, body: "when CACHE_RESPONSE { CACHE::disable }", err: "not valid in CACHE_RESPONSE"},
		{name: "key in CACHE_REQUEST", ev: CacheRequest, body: "when CACHE_REQUEST { CACHE::userkey x }", err: "valid in HTTP_REQUEST"},
		{name: "no entry", ev: CacheUpdate, noEntry: true, body: "when CACHE_UPDATE { CACHE::hits }", err: "valid in CACHE_REQUEST"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := NewProgram(&Env{}, mustCompile(t, "cache", c.body))
			s := p.NewConnState(newFakeConn())
			defer s.Release()
			s.SetCache()
			if !c.noEntry {
				s.Cache().Entry = entry
			}
			err := s.Run(c.ev)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.want != "" {
				if got, _ := s.Var("r"); got != c.want {
					t.Errorf("r = %q, want %q", got, c.want)
				}
			}
			got := s.Cache().Take()
			got.Entry = nil
			if got != c.took {
				t.Errorf("took %+v, want %+v", got, c.took)
			}
		})
	}
	r := mustCompile(t, "needs", "when CACHE_RESPONSE {\n  HTTP::header insert X-Cache HIT\n}\nwhen HTTP_REQUEST { CACHE::userkey a }")
	if n := r.CacheNeeds(); len(n) != 2 || n[0].Name != "CACHE_RESPONSE" || n[1].Name != "CACHE::userkey" {
		t.Errorf("CacheNeeds = %+v", n)
	}
}
