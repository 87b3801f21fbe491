package rules

import (
	"strings"
	"testing"
)

// TestAdaptCommands: the ADAPT:: commands change the choice the host
// takes after HTTP_REQUEST, refuse bad values without changing it, and
// Take starts the next request from the profiles' settings.
func TestAdaptCommands(t *testing.T) {
	def := AdaptChoice{Request: true, Response: true, RequestDown: "reset", ResponseDown: "ignore",
		RequestTimeout: 5000, ResponseTimeout: 0, RequestPreview: 1024, ResponsePreview: 0,
		RequestVirtual: "/Common/ivs", ResponseVirtual: "/Common/ivs"}
	cases := []struct {
		name, body string
		ev         Event
		noProfile  bool
		want       func(*AdaptChoice)
		err        string
	}{
		{name: "nothing asked", body: "when HTTP_REQUEST { }", ev: HTTPRequest},
		{name: "enable off", body: "when HTTP_REQUEST { ADAPT::enable request false }", ev: HTTPRequest, want: func(c *AdaptChoice) { c.Request = false }},
		{name: "service down, response", body: "when HTTP_REQUEST { ADAPT::service_down_action response drop }", ev: HTTPRequest, want: func(c *AdaptChoice) { c.ResponseDown = "drop" }},
		{name: "timeout, default side", body: "when HTTP_REQUEST { ADAPT::timeout 250 }", ev: HTTPRequest, want: func(c *AdaptChoice) { c.RequestTimeout = 250 }},
		{name: "timeout 0: none", body: "when HTTP_REQUEST { ADAPT::timeout response 0 }", ev: HTTPRequest, want: func(c *AdaptChoice) { c.ResponseTimeout = 0 }},
		{name: "timeout read back", body: "when HTTP_REQUEST { ADAPT::timeout request [expr {[ADAPT::timeout] * 2}] }", ev: HTTPRequest, want: func(c *AdaptChoice) { c.RequestTimeout = 10000 }},
		{name: "preview size", body: "when HTTP_REQUEST { ADAPT::preview_size request 16; ADAPT::preview_size response 64 }", ev: HTTPRequest, want: func(c *AdaptChoice) { c.RequestPreview, c.ResponsePreview = 16, 64 }},
		{name: "timeout not a number", body: "when HTTP_REQUEST { ADAPT::timeout soon }", ev: HTTPRequest, err: `"soon" is not a number of ms`},
		{name: "timeout negative", body: "when HTTP_REQUEST { ADAPT::timeout -1 }", ev: HTTPRequest, err: "from 0 to 4294967295"},
		{name: "timeout too big", body: "when HTTP_REQUEST { ADAPT::timeout 4294967296 }", ev: HTTPRequest, err: "from 0 to 4294967295"},
		{name: "preview too big", body: "when HTTP_REQUEST { ADAPT::preview_size 2147483648 }", ev: HTTPRequest, err: "from 0 to 2147483647"},
		{name: "preview extra word", body: "when HTTP_REQUEST { ADAPT::preview_size request 1 2 }", ev: HTTPRequest, err: "wrong # args"},
		{name: "timeout outside HTTP_REQUEST", body: "when HTTP_RESPONSE { ADAPT::timeout 1 }", ev: HTTPResponse, err: "valid in HTTP_REQUEST"},
		{name: "allow http_v1.0", body: "when HTTP_REQUEST { ADAPT::allow http_v1.0 yes }", ev: HTTPRequest, want: func(c *AdaptChoice) { c.RequestHTTP10 = true }},
		{name: "allow http_v1.0 response, read back", body: "when HTTP_REQUEST { ADAPT::allow http_v1.0 response [expr {![ADAPT::allow http_v1.0 response]}] }", ev: HTTPRequest, want: func(c *AdaptChoice) { c.ResponseHTTP10 = true }},
		{name: "allow unknown property", body: "when HTTP_REQUEST { ADAPT::allow http_v2 yes }", ev: HTTPRequest, err: `"http_v2" is not a property (http_v1.0)`},
		{name: "allow not a boolean", body: "when HTTP_REQUEST { ADAPT::allow http_v1.0 request maybe }", ev: HTTPRequest, err: "maybe"},
		{name: "allow without property", body: "when HTTP_REQUEST { ADAPT::allow }", ev: HTTPRequest, err: "wrong # args"},
		{name: "select by short name", body: "when HTTP_REQUEST { ADAPT::select other }", ev: HTTPRequest, want: func(c *AdaptChoice) { c.RequestVirtual = "/Common/other" }},
		{name: "select response, read back", body: "when HTTP_REQUEST { ADAPT::select response /Common/other; if {[ADAPT::select response] ne {/Common/other}} { error no } }", ev: HTTPRequest, want: func(c *AdaptChoice) { c.ResponseVirtual = "/Common/other" }},
		{name: "select unknown", body: "when HTTP_REQUEST { ADAPT::select nosuch }", ev: HTTPRequest, err: `"nosuch" is not an internal virtual server with an icap profile`},
		{name: "select outside HTTP_REQUEST", body: "when HTTP_RESPONSE { ADAPT::select other }", ev: HTTPResponse, err: "valid in HTTP_REQUEST"},
		{name: "without a profile", body: "when HTTP_REQUEST { ADAPT::preview_size 1 }", ev: HTTPRequest, noProfile: true, err: "no request-adapt or response-adapt profile"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := NewProgram(&Env{}, mustCompile(t, "adapt", c.body))
			s := p.NewConnState(newFakeConn())
			defer s.Release()
			if !c.noProfile {
				s.SetAdapt(def)
				s.Adapt().SetInternal(func(n string) (string, bool) {
					if n == "other" || n == "/Common/other" {
						return "/Common/other", true
					}
					return "", false
				})
			}
			err := s.Run(c.ev)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one containing %q", err, c.err)
				}
				if !c.noProfile && s.Adapt().AdaptChoice != def {
					t.Fatalf("choice %+v after the error, want it unchanged", s.Adapt().AdaptChoice)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := def
			if c.want != nil {
				c.want(&want)
			}
			if got := s.Adapt().Take(); got != want {
				t.Fatalf("choice %+v, want %+v", got, want)
			}
			if got := s.Adapt().Take(); got != def {
				t.Fatalf("next request starts from %+v, want the profiles' %+v", got, def)
			}
		})
	}
}
