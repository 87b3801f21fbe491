package rules

import (
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/ssefilter"
)

// TestSSEEvents runs SSE_RESPONSE through a real pass over an event
// stream, each case a rule reading or editing the event it is handed.
func TestSSEEvents(t *testing.T) {
	stream := "event: tick\ndata: 1\n\n: keepalive\n\nid: 7\ndata: a\ndata: b\n\n"
	cases := []struct {
		name, body, want, err string
		vars                  map[string]string
	}{
		{name: "get", body: `when SSE_RESPONSE { lappend ::d [SSE::field get data] [SSE::field get event] }`,
			want: stream, vars: map[string]string{"d": "1 tick {a\nb} {}"}},
		{name: "names", body: `when SSE_RESPONSE { lappend ::n [SSE::field names] }`,
			want: stream, vars: map[string]string{"n": "{event data} {id data}"}},
		{name: "set", body: `when SSE_RESPONSE { SSE::field set data "<[SSE::field get data]>" }`,
			want: "event: tick\ndata: <1>\n\n: keepalive\n\nid: 7\ndata: <a\ndata: b>\n\n"},
		{name: "remove and add", body: `when SSE_RESPONSE { SSE::field remove id; SSE::field set retry 5000 }`,
			want: "event: tick\ndata: 1\nretry: 5000\n\n: keepalive\n\ndata: a\ndata: b\nretry: 5000\n\n"},
		{name: "bad arguments", body: `when SSE_RESPONSE { SSE::field set data }`, err: "should be \"SSE::field get NAME"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := NewProgram(&Env{}, mustCompile(t, "sse", c.body))
			s := p.NewConnState(newFakeConn())
			defer s.Release()
			var runErr error
			pass := ssefilter.New(ssefilter.Limits{}, func(e *ssefilter.Event) {
				if err := s.RunSSE(e); err != nil && runErr == nil {
					runErr = err
				}
			})
			var out []byte
			for i := 0; i < len(stream); i += 4 {
				out = pass.Write(out, []byte(stream[i:min(i+4, len(stream))]))
			}
			out = pass.Close(out)
			if c.err != "" {
				if runErr == nil || !strings.Contains(runErr.Error(), c.err) {
					t.Fatalf("error %v, want one containing %q", runErr, c.err)
				}
				return
			}
			if runErr != nil {
				t.Fatal(runErr)
			}
			if string(out) != c.want {
				t.Errorf("got  %q\nwant %q", out, c.want)
			}
			for k, want := range c.vars {
				if got, _ := s.Var(k); got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
		})
	}
}

// TestSSEFieldOutsideEvent: SSE::field is an error where no event is in
// hand, and a rule with SSE_RESPONSE needs an sse profile.
func TestSSEFieldOutsideEvent(t *testing.T) {
	r := mustCompile(t, "sse", `when HTTP_RESPONSE { SSE::field get data }
when SSE_RESPONSE { log local0. x }`)
	if n := r.SSENeeds(); len(n) != 1 || n[0].Name != "SSE_RESPONSE" || n[0].Line != 2 {
		t.Fatalf("needs %+v", n)
	}
	s := NewProgram(&Env{}, r).NewConnState(newFakeConn())
	defer s.Release()
	if err := s.Run(HTTPResponse); err == nil || !strings.Contains(err.Error(), "only valid in SSE_RESPONSE") {
		t.Fatalf("error %v", err)
	}
}
