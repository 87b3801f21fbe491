package rules

import (
	"context"
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/authn"
)

// fakeBackend answers by user name: ok succeeds (with a mail
// attribute), want is challenged, slow waits for its context, anyone
// else fails.
type fakeBackend struct{}

func (fakeBackend) Authenticate(ctx context.Context, r authn.Request) authn.Result {
	switch r.Username {
	case "ok":
		return authn.Result{Status: authn.Success, Data: []authn.Attr{{Name: "ldap:attr:mail", Value: "ok@example.com"}}}
	case "want":
		if string(r.State) == "s1" && r.Password == "pin" {
			return authn.Result{Status: authn.Success}
		}
		return authn.Result{Status: authn.WantCredential, Prompt: "PIN?", PromptStyle: "echo_off", CredType: "password", State: []byte("s1")}
	case "slow":
		<-ctx.Done()
		return authn.Result{Status: authn.Error, Err: ctx.Err()}
	}
	return authn.Result{Status: authn.Failure}
}

func authEnv(logs *[]string) *Env {
	p := authn.NewProfile("/Common/lp", "ldap", fakeBackend{}, 0, nil)
	return &Env{
		Log: func(_, line string) { *logs = append(*logs, line) },
		Auth: func(vs, svc string) (*authn.Profile, bool) {
			return p, vs == "/Common/vs_http" && (svc == "default_ldap" || svc == "lp")
		},
	}
}

// TestAuthCommands runs the AUTH:: commands and events against a fake
// back end: the result events run after the asking event, in order,
// with AUTH::status, last_event_session_id and (subscribed)
// response_data; a challenge is answered with authenticate_continue;
// an aborted session raises nothing.
func TestAuthCommands(t *testing.T) {
	for _, c := range []struct {
		name, script string
		want         []string
	}{
		{"success", `when CLIENT_ACCEPTED {
    set sid [AUTH::start pam default_ldap]
    AUTH::subscribe $sid
    AUTH::username_credential $sid ok
    AUTH::password_credential $sid pw
    AUTH::authenticate $sid
    log local0. "asked $sid"
}
when AUTH_RESULT { log local0. "result [AUTH::last_event_session_id] [AUTH::status] [AUTH::response_data]" }
when AUTH_SUCCESS { log local0. "success" }
when AUTH_FAILURE { log local0. "failure" }`, []string{"asked 1", "result 1 0 ldap:attr:mail ok@example.com", "success"}},
		{"failure, unsubscribed", `when CLIENT_ACCEPTED {
    set sid [AUTH::start pam lp]
    AUTH::username_credential $sid bad
    AUTH::authenticate $sid
}
when AUTH_RESULT { log local0. "result [AUTH::status] <[AUTH::response_data]>" }
when AUTH_FAILURE { log local0. "failure" }`, []string{"result 1 <>", "failure"}},
		{"challenge", `when CLIENT_ACCEPTED {
    set sid [AUTH::start pam default_ldap]
    AUTH::username_credential $sid want
    AUTH::authenticate $sid
}
when AUTH_WANTCREDENTIAL {
    log local0. "want [AUTH::wantcredential_prompt] [AUTH::wantcredential_prompt_style] [AUTH::wantcredential_type]"
    AUTH::password_credential $sid pin
    AUTH::authenticate_continue $sid
}
when AUTH_SUCCESS { log local0. "success [AUTH::status $sid]" }`, []string{"want PIN? echo_off password", "success 0"}},
		{"two sessions, one aborted", `when CLIENT_ACCEPTED {
    set a [AUTH::start pam default_ldap]
    set b [AUTH::start pam default_ldap]
    AUTH::username_credential $a slow
    AUTH::username_credential $b ok
    AUTH::authenticate $a
    AUTH::authenticate $b
    AUTH::abort $a
}
when AUTH_RESULT { log local0. "result [AUTH::last_event_session_id] [AUTH::status]" }`, []string{"result 2 0"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var logs []string
			p := NewProgram(authEnv(&logs), mustCompile(t, "r", c.script))
			s := p.NewConnState(infoConn{newFakeConn()})
			defer s.Release()
			if err := s.Run(ClientAccepted); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range logs {
				if _, msg, ok := strings.Cut(l, ">: "); ok {
					got = append(got, msg)
				}
			}
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// TestAuthErrors: what the AUTH:: commands refuse.
func TestAuthErrors(t *testing.T) {
	var logs []string
	env := authEnv(&logs)
	for _, c := range []struct{ expr, want string }{
		{"AUTH::start pam default_radius", "no auth profile"},
		{"AUTH::start ldap default_ldap", "pam is the only type"},
		{"AUTH::status 7", "no auth session 7"},
		{"AUTH::status", "no auth session has answered"},
		{"AUTH::cert_credential [AUTH::start pam lp] notacert", "not a certificate"},
		{"AUTH::authenticate x", "bad auth session id"},
	} {
		_, err := evalIn(t, infoConn{newFakeConn()}, env, ClientAccepted, c.expr)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.expr, err, c.want)
		}
	}
	// Eleven sessions are one too many.
	r := mustCompile(t, "r", "when CLIENT_ACCEPTED { for {set i 0} {$i < 11} {incr i} { AUTH::start pam lp } }")
	s := NewProgram(env, r).NewConnState(infoConn{newFakeConn()})
	defer s.Release()
	if err := s.Run(ClientAccepted); err == nil || !strings.Contains(err.Error(), "at most 10") {
		t.Errorf("eleven sessions: %v", err)
	}
}

// acctBackend is fakeBackend keeping accounting records: each start
// and stop is appended to events.
type acctBackend struct {
	fakeBackend
	events *[]string
}

func (b acctBackend) AccountStart(s authn.AcctSession) func() {
	*b.events = append(*b.events, "start "+s.User+" "+s.Port)
	return func() { *b.events = append(*b.events, "stop "+s.User) }
}

// TestAuthAccounting: an auth session's accounting starts at its first
// success only (a second success on the same session starts nothing),
// and stops at AUTH::abort or at the connection's end; a failure starts
// nothing.
func TestAuthAccounting(t *testing.T) {
	for _, c := range []struct {
		name, script string
		want         []string
	}{
		{"twice, ended with the connection", `when CLIENT_ACCEPTED {
    set sid [AUTH::start pam lp]
    AUTH::username_credential $sid ok
    AUTH::authenticate $sid
}
when AUTH_RESULT {
    if {![info exists again]} {
        set again 1
        AUTH::authenticate $sid
    }
}`, []string{"start ok /Common/vs_http", "stop ok"}},
		{"aborted", `when CLIENT_ACCEPTED {
    set sid [AUTH::start pam lp]
    AUTH::username_credential $sid ok
    AUTH::authenticate $sid
}
when AUTH_SUCCESS { AUTH::abort $sid ; log local0. "aborted" }`, []string{"start ok /Common/vs_http", "stop ok"}},
		{"failure", `when CLIENT_ACCEPTED {
    set sid [AUTH::start pam lp]
    AUTH::username_credential $sid bad
    AUTH::authenticate $sid
}`, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			var logs, events []string
			env := authEnv(&logs)
			p := authn.NewProfile("/Common/lp", "tacacs", acctBackend{events: &events}, 0, nil)
			env.Auth = func(vs, svc string) (*authn.Profile, bool) { return p, vs == "/Common/vs_http" && svc == "lp" }
			s := NewProgram(env, mustCompile(t, "r", c.script)).NewConnState(infoConn{newFakeConn()})
			if err := s.Run(ClientAccepted); err != nil {
				t.Fatal(err)
			}
			if c.name == "aborted" && len(events) != 2 {
				t.Errorf("after the abort: %q", events)
			}
			s.Release()
			if strings.Join(events, "|") != strings.Join(c.want, "|") {
				t.Errorf("got %q, want %q (log %q)", events, c.want, logs)
			}
		})
	}
}
