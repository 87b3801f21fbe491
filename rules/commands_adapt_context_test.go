package rules

import (
	"strings"
	"testing"
)

// TestAdaptContextCommands: ADAPT::context_create makes dynamic contexts
// that start from their side's profile settings and that the other
// ADAPT:: commands set through their handle; context_static,
// context_current and context_name answer as BIG-IP's do; bad handles,
// sides without a profile and events too late are errors that change
// nothing.
func TestAdaptContextCommands(t *testing.T) {
	def := AdaptChoice{Request: true, Response: false, RequestDown: "reset", ResponseDown: "ignore",
		RequestTimeout: 5000, RequestPreview: 1024, RequestVirtual: "/Common/ivs", RequestProfile: "/Common/reqadapt"}
	cases := []struct {
		name, body string
		ev         Event
		out        string // the rule's "set out" value
		contexts   []AdaptContext
		err        string
	}{
		{name: "static handles", ev: HTTPRequest,
			body: `when HTTP_REQUEST { set out "[ADAPT::context_static] [ADAPT::context_current] [ADAPT::context_name [ADAPT::context_static]] <[ADAPT::context_static response]>" }`,
			out:  "adapt_ctx_request_static adapt_ctx_request_static /Common/reqadapt <>"},
		{name: "create two, set one", ev: HTTPRequest,
			body: `when HTTP_REQUEST { set a [ADAPT::context_create av]; set b [ADAPT::context_create dlp]; ADAPT::select $b other; ADAPT::timeout $b 250; ADAPT::enable $a 0; set out "$a $b [ADAPT::context_name $b] [ADAPT::timeout $a]" }`,
			out:  "adapt_ctx_1 adapt_ctx_2 dlp 5000",
			contexts: []AdaptContext{
				{Name: "av", Enable: false, Down: "reset", Timeout: 5000, Preview: 1024, Virtual: "/Common/ivs"},
				{Name: "dlp", Enable: true, Down: "reset", Timeout: 250, Preview: 1024, Virtual: "/Common/other"},
			}},
		{name: "a context's setting leaves the static one", ev: HTTPRequest,
			body: `when HTTP_REQUEST { set a [ADAPT::context_create av]; ADAPT::service_down_action $a drop; set out [ADAPT::service_down_action] }`,
			out:  "reset", contexts: []AdaptContext{{Name: "av", Enable: true, Down: "drop", Timeout: 5000, Preview: 1024, Virtual: "/Common/ivs"}}},
		{name: "delete all", ev: HTTPRequest,
			body: `when HTTP_REQUEST { set a [ADAPT::context_create av]; ADAPT::context_delete_all; set out [catch {ADAPT::timeout $a}] }`, out: "1"},
		{name: "side word agrees", ev: HTTPRequest,
			body: `when HTTP_REQUEST { set a [ADAPT::context_create request av]; set out [ADAPT::preview_size $a request 8] ; ADAPT::allow $a http_v1.0 1 }`,
			out:  "8", contexts: []AdaptContext{{Name: "av", Enable: true, Down: "reset", Timeout: 5000, Preview: 8, HTTP10: true, Virtual: "/Common/ivs"}}},
		{name: "side word disagrees", ev: HTTPRequest,
			body: `when HTTP_REQUEST { set a [ADAPT::context_create request av]; ADAPT::preview_size $a response 8 }`, err: "the context is on the request side, not response"},
		{name: "no response-adapt profile", ev: HTTPRequest,
			body: `when HTTP_REQUEST { ADAPT::context_create response av }`, err: "no response-adapt profile"},
		{name: "bad side word", ev: HTTPRequest,
			body: `when HTTP_REQUEST { ADAPT::context_create sideways av }`, err: `"sideways" is not request or response`},
		{name: "unknown handle", ev: HTTPRequest,
			body: `when HTTP_REQUEST { ADAPT::context_name adapt_ctx_7 }`, err: `no adaptation context "adapt_ctx_7"`},
		{name: "too late in HTTP_RESPONSE", ev: HTTPResponse,
			body: `when HTTP_RESPONSE { ADAPT::context_create av }`, err: "valid in HTTP_REQUEST and the ADAPT_ events"},
		{name: "no name", ev: HTTPRequest, body: `when HTTP_REQUEST { ADAPT::context_create }`, err: "wrong # args"},
		{name: "bounded", ev: HTTPRequest,
			body: `when HTTP_REQUEST { for {set i 0} {$i < 17} {incr i} { ADAPT::context_create c$i } }`, err: "the most it may have"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := NewProgram(&Env{}, mustCompile(t, "adapt", c.body))
			s := p.NewConnState(newFakeConn())
			defer s.Release()
			s.SetAdapt(def)
			s.Adapt().SetInternal(func(n string) (string, bool) {
				if n == "other" {
					return "/Common/other", true
				}
				return "", false
			})
			err := s.Run(c.ev)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one containing %q", err, c.err)
				}
				if s.Adapt().AdaptChoice != def {
					t.Fatalf("static choice %+v after the error, want it unchanged", s.Adapt().AdaptChoice)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := s.Var("out"); got != c.out {
				t.Fatalf("out %q, want %q", got, c.out)
			}
			for i := 0; ; i++ {
				got, ok := s.Adapt().Context(false, i)
				if i >= len(c.contexts) {
					if ok {
						t.Fatalf("context %d %+v, want none", i, got)
					}
					break
				}
				want := c.contexts[i]
				got.handle = ""
				if !ok || got != want {
					t.Fatalf("context %d %+v %v, want %+v", i, got, ok, want)
				}
			}
		})
	}
}
