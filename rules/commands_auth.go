package rules

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"time"

	"github.com/openltm/openltm/dataplane/authn"
	"github.com/openltm/openltm/rules/tcl"
)

// The AUTH:: commands drive the ltm auth profiles (dataplane/authn), as
// BIG-IP's do: AUTH::start opens an auth session with a profile,
// AUTH::username_credential, password_credential, cert_credential and
// cert_issuer_credential give it what to check, AUTH::authenticate asks
// the profile's servers. The command returns at once; the servers are
// asked on a goroutine of their own, and AUTH_RESULT (then the older
// AUTH_SUCCESS, AUTH_FAILURE, AUTH_ERROR or AUTH_WANTCREDENTIAL) runs
// once the event that asked has finished, before the connection goes on:
// the request (or the handshake's connection) waits meanwhile, as
// NAME::lookup's does (commands_name.go), and the result events still
// have it in hand (HTTP::respond, HTTP::release, reject work there). A
// rule with AUTH::authenticate is one that waits: its connections run
// on goroutines of their own.

// AuthService finds the auth profile behind AUTH::start's SERVICE for a
// virtual server (its full path): default_TYPE names the virtual's auth
// profile of that type (default_ldap), any other the profile by name.
type AuthService func(virtual, service string) (*authn.Profile, bool)

const (
	// maxAuthSessions bounds a connection's open auth sessions, as
	// BIG-IP does (10).
	maxAuthSessions = 10
	// authWait bounds one AUTH::authenticate on a connection whose
	// events may wait [M: the servers' own timeouts end it sooner].
	authWait = 30 * time.Second
)

// authSession is one AUTH::start: its profile, credentials and result.
type authSession struct {
	id         int
	profile    *authn.Profile
	req        authn.Request
	subscribed bool
	// call is the question in flight, nil when none; res the last
	// answer.
	call *authCall
	res  authn.Result
	done bool // res holds an answer
	// acctStop records the end of the session's accounting, nil when
	// none was started: the first success starts it (a TACACS+
	// profile's START record), the session's end stops it.
	acctStop func()
}

// authCall is one AUTH::authenticate in flight: done closes when res is
// set.
type authCall struct {
	done   chan struct{}
	cancel context.CancelFunc
	res    authn.Result
	wait   time.Duration
}

// authState is a connection's auth sessions.
type authState struct {
	seq      int
	sessions map[int]*authSession
	// queue are the sessions whose answers the rules have not yet seen,
	// in the order asked; last is the session of the running result
	// event (AUTH::last_event_session_id).
	queue []*authSession
	last  int
}

func registerAuth(t *tcl.Commands) {
	t.Register("AUTH::start", cmdAuthStart)
	t.Register("AUTH::abort", cmdAuthAbort)
	t.Register("AUTH::authenticate", cmdAuthAuthenticate(false)).Compile = waitHook
	t.Register("AUTH::authenticate_continue", cmdAuthAuthenticate(true)).Compile = waitHook
	t.Register("AUTH::status", cmdAuthStatus)
	t.Register("AUTH::subscribe", cmdAuthSubscribe(true))
	t.Register("AUTH::unsubscribe", cmdAuthSubscribe(false))
	t.Register("AUTH::username_credential", cmdAuthCred("AUTH::username_credential", func(r *authn.Request, v tcl.Value) error { r.Username = v.String(); return nil }))
	t.Register("AUTH::password_credential", cmdAuthCred("AUTH::password_credential", func(r *authn.Request, v tcl.Value) error { r.Password = v.String(); return nil }))
	t.Register("AUTH::cert_credential", cmdAuthCred("AUTH::cert_credential", func(r *authn.Request, v tcl.Value) error {
		c, err := authCert(v)
		r.Cert = c
		return err
	}))
	t.Register("AUTH::cert_issuer_credential", cmdAuthCred("AUTH::cert_issuer_credential", func(r *authn.Request, v tcl.Value) error {
		c, err := authCert(v)
		r.Issuer = c
		return err
	}))
	t.Register("AUTH::response_data", cmdAuthResponseData)
	t.Register("AUTH::last_event_session_id", cmdAuthLastEvent)
	for _, w := range []string{"prompt", "prompt_style", "type"} {
		t.Register("AUTH::wantcredential_"+w, cmdAuthWant(w))
	}
	t.Register("AUTH::ssl_cc_ldap_username", cmdAuthSSLCCLDAP(false))
	t.Register("AUTH::ssl_cc_ldap_status", cmdAuthSSLCCLDAP(true))
}

// cmdAuthSSLCCLDAP is AUTH::ssl_cc_ldap_username and
// AUTH::ssl_cc_ldap_status ?ID?: the user an ssl-cc-ldap profile found
// the client certificate to belong to, and the lookup's answer (success,
// failure or error [M: openltm's words for AUTH::status's 0, 1 and -1]);
// empty while no answer is in, or for a session of another type.
func cmdAuthSSLCCLDAP(status bool) tcl.CmdFunc {
	cmd := "AUTH::ssl_cc_ldap_username"
	if status {
		cmd = "AUTH::ssl_cc_ldap_status"
	}
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		a, err := authLastOr(in, cmd, args)
		if err != nil {
			return tcl.Empty, err
		}
		if !a.done || a.profile.Type != "ssl-cc-ldap" {
			return tcl.Empty, nil
		}
		if status {
			return tcl.Str(a.res.Status.String()), nil
		}
		for _, d := range a.res.Data {
			if d.Name == "ssl_cc_ldap:username" {
				return tcl.Str(d.Value), nil
			}
		}
		return tcl.Empty, nil
	}
}

// authCert reads a certificate given as PEM (SSL::cert's form) or DER.
func authCert(v tcl.Value) (*x509.Certificate, error) {
	b := tcl.BytesOf(v)
	if len(b) == 0 {
		return nil, nil
	}
	if blk, _ := pem.Decode(b); blk != nil {
		b = blk.Bytes
	}
	c, err := x509.ParseCertificate(b)
	if err != nil {
		return nil, fmt.Errorf("not a certificate: %v", err)
	}
	return c, nil
}

// cmdAuthStart is `AUTH::start pam SERVICE`: a new auth session with the
// profile SERVICE names, its id returned.
func cmdAuthStart(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 3 {
		return tcl.Empty, tcl.WrongArgs("AUTH::start type service")
	}
	if args[1].String() != "pam" {
		return tcl.Empty, tcl.Errorf("AUTH::start: type %q: pam is the only type", args[1].String())
	}
	s, c, err := sess(in, "AUTH::start")
	if err != nil {
		return tcl.Empty, err
	}
	svc := args[2].String()
	find := s.prog.env.authService()
	li, ok := c.(LBInfo)
	if find == nil || !ok {
		return tcl.Empty, tcl.Errorf("AUTH::start: this connection's virtual server has no auth profiles")
	}
	p, ok := find(li.VirtualName(), svc)
	if !ok {
		return tcl.Empty, tcl.Errorf("AUTH::start: no auth profile %q: expected default_TYPE (default_ldap, default_radius, default_tacacs, default_ssl_ocsp, default_ssl_crldp, default_ssl_cc_ldap) for the virtual server's profile of that type, or an auth profile's name", svc)
	}
	a := s.auth
	if a == nil {
		a = &authState{sessions: map[int]*authSession{}}
		s.auth = a
	}
	if len(a.sessions) >= maxAuthSessions {
		return tcl.Empty, tcl.Errorf("AUTH::start: %d auth sessions are already open on this connection (at most %d)", len(a.sessions), maxAuthSessions)
	}
	a.seq++
	a.sessions[a.seq] = &authSession{id: a.seq, profile: p}
	return tcl.Int(int64(a.seq)), nil
}

// authSess is the session an AUTH:: command's id names.
func authSess(in *tcl.Interp, cmd string, id tcl.Value) (*ConnState, *authSession, error) {
	s, _, err := sess(in, cmd)
	if err != nil {
		return nil, nil, err
	}
	n, err := id.Int64()
	if err != nil {
		return nil, nil, tcl.Errorf("%s: bad auth session id %q", cmd, id.String())
	}
	if s.auth == nil || s.auth.sessions[int(n)] == nil {
		return nil, nil, tcl.Errorf("%s: no auth session %d on this connection", cmd, n)
	}
	return s, s.auth.sessions[int(n)], nil
}

// cmdAuthAbort is `AUTH::abort ID`: the session ends; a question in
// flight is dropped, and raises no event.
func cmdAuthAbort(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 2 {
		return tcl.Empty, tcl.WrongArgs("AUTH::abort auth_id")
	}
	s, a, err := authSess(in, "AUTH::abort", args[1])
	if err != nil {
		return tcl.Empty, err
	}
	s.auth.drop(a)
	return tcl.Empty, nil
}

// drop ends a session.
func (st *authState) drop(a *authSession) {
	if a.call != nil {
		a.call.cancel()
		a.call = nil
	}
	a.endAccounting()
	for i, q := range st.queue {
		if q == a {
			st.queue = append(st.queue[:i], st.queue[i+1:]...)
			break
		}
	}
	delete(st.sessions, a.id)
}

// cmdAuthCred is AUTH::*_credential ID VALUE.
func cmdAuthCred(cmd string, set func(*authn.Request, tcl.Value) error) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 3 {
			return tcl.Empty, tcl.WrongArgs(cmd + " auth_id value")
		}
		_, a, err := authSess(in, cmd, args[1])
		if err != nil {
			return tcl.Empty, err
		}
		if err := set(&a.req, args[2]); err != nil {
			return tcl.Empty, tcl.Errorf("%s: %v", cmd, err)
		}
		return tcl.Empty, nil
	}
}

// cmdAuthAuthenticate is `AUTH::authenticate ID` (and
// AUTH::authenticate_continue, which answers a WantCredential with the
// credentials given since): the profile's servers are asked; the answer
// raises AUTH_RESULT once the running event has finished.
func cmdAuthAuthenticate(cont bool) tcl.CmdFunc {
	cmd := "AUTH::authenticate"
	if cont {
		cmd = "AUTH::authenticate_continue"
	}
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 2 {
			return tcl.Empty, tcl.WrongArgs(cmd + " auth_id")
		}
		s, a, err := authSess(in, cmd, args[1])
		if err != nil {
			return tcl.Empty, err
		}
		if a.call != nil {
			return tcl.Empty, tcl.Errorf("%s: auth session %d is already waiting for an answer", cmd, a.id)
		}
		req := a.req
		req.State = nil
		if cont && a.done && a.res.Status == authn.WantCredential {
			req.State = a.res.State
		}
		wait := maxLookupWait
		if mayBlock(in) {
			wait = authWait
		}
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		call := &authCall{done: make(chan struct{}), cancel: cancel, wait: wait}
		a.call, a.done = call, false
		s.auth.queue = append(s.auth.queue, a)
		p := a.profile
		go func() {
			defer close(call.done)
			defer cancel()
			call.res = p.Authenticate(ctx, req)
		}()
		return tcl.Empty, nil
	}
}

// waiting reports whether an answer is due to the rules.
func (st *authState) waiting() bool { return st != nil && len(st.queue) > 0 }

// raiseAuthResults runs the result events once for each answer the
// event from asked for, in the order asked, each when its answer is in:
// the connection waits meanwhile. A failure or an error is logged.
func (s *ConnState) raiseAuthResults(from Event) error {
	side := from.side()
	st := s.auth
	for n := 0; st.waiting() && n < 4*maxAuthSessions && !s.ended; n++ {
		a := st.queue[0]
		st.queue = st.queue[1:]
		call := a.call
		if call == nil {
			continue // aborted
		}
		t := time.NewTimer(call.wait + time.Second)
		select {
		case <-call.done:
		case <-t.C:
			call.cancel()
			<-call.done
		}
		t.Stop()
		if a.call != call { // aborted while waiting
			continue
		}
		a.call, a.res, a.done = nil, call.res, true
		if a.res.Err != nil && a.res.Status != authn.Success {
			s.prog.env.log("local0.notice", fmt.Sprintf("AUTH: %s profile %s: %s: %v", a.profile.Type, a.profile.Name, a.res.Status, a.res.Err))
		}
		st.last = a.id
		if a.res.Status == authn.Success && a.acctStop == nil {
			s.startAccounting(a)
		}
		if err := s.runAs(AuthResult, side); err != nil {
			s.cancelAuth()
			return err
		}
		if s.ended {
			break
		}
		old := AuthError
		switch a.res.Status {
		case authn.Success:
			old = AuthSuccess
		case authn.Failure:
			old = AuthFailure
		case authn.WantCredential:
			old = AuthWantCredential
		}
		if err := s.runAs(old, side); err != nil {
			s.cancelAuth()
			return err
		}
	}
	if s.ended {
		s.cancelAuth()
	}
	s.event = from
	return nil
}

// cancelAuth stops the questions still in flight (the connection ended,
// or its event failed).
func (s *ConnState) cancelAuth() {
	if s.auth == nil {
		return
	}
	for _, a := range s.auth.sessions {
		if a.call != nil {
			a.call.cancel()
			a.call = nil
		}
	}
	s.auth.queue = nil
}

// startAccounting starts the accounting of a session the profile let
// in [M: one accounting session per auth session, from its first
// success to its end (AUTH::abort, or the connection's), however many
// requests it authenticates on a kept-alive connection, as a PAM
// session opens once]: the user, the virtual server as the port, the
// client's address as the remote address.
func (s *ConnState) startAccounting(a *authSession) {
	if _, ok := a.profile.Backend.(authn.Accounter); !ok {
		return // most back ends keep no records: nothing to build
	}
	as := authn.AcctSession{User: a.req.Username, Data: a.res.Data}
	if s.conn != nil {
		if li, ok := s.conn.(LBInfo); ok {
			as.Port = li.VirtualName()
		}
		if ap := s.conn.Addr(EndClient); ap.IsValid() {
			as.Remote = ap.Addr().Unmap().String()
		}
	}
	a.acctStop = a.profile.AccountStart(as)
}

// endAccounting records the end of the session's accounting, if one
// was started.
func (a *authSession) endAccounting() {
	if a.acctStop != nil {
		a.acctStop()
		a.acctStop = nil
	}
}

// endAuth ends the connection's auth sessions: the questions in flight
// are dropped and the accounting sessions end.
func (s *ConnState) endAuth() {
	s.cancelAuth()
	if s.auth == nil {
		return
	}
	for _, a := range s.auth.sessions {
		a.endAccounting()
	}
	s.auth = nil
}

// authLastOr is the session a command without an id reads: the running
// result event's.
func authLastOr(in *tcl.Interp, cmd string, args []tcl.Value) (*authSession, error) {
	if len(args) > 2 {
		return nil, tcl.WrongArgs(cmd + " ?auth_id?")
	}
	if len(args) == 2 {
		_, a, err := authSess(in, cmd, args[1])
		return a, err
	}
	s, _, err := sess(in, cmd)
	if err != nil {
		return nil, err
	}
	if s.auth == nil || s.auth.sessions[s.auth.last] == nil {
		return nil, tcl.Errorf("%s: no auth session has answered on this connection", cmd)
	}
	return s.auth.sessions[s.auth.last], nil
}

// cmdAuthStatus is `AUTH::status ?ID?`: 0 success, 1 failure, -1 error,
// 2 the server wants a credential; -1 too while no answer is in.
func cmdAuthStatus(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	a, err := authLastOr(in, "AUTH::status", args)
	if err != nil {
		return tcl.Empty, err
	}
	if !a.done {
		return tcl.Int(int64(authn.Error)), nil
	}
	return tcl.Int(int64(a.res.Status)), nil
}

// cmdAuthSubscribe is AUTH::subscribe and AUTH::unsubscribe ID: whether
// AUTH::response_data gives the session's answer data.
func cmdAuthSubscribe(on bool) tcl.CmdFunc {
	cmd := "AUTH::unsubscribe"
	if on {
		cmd = "AUTH::subscribe"
	}
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 2 {
			return tcl.Empty, tcl.WrongArgs(cmd + " auth_id")
		}
		_, a, err := authSess(in, cmd, args[1])
		if err != nil {
			return tcl.Empty, err
		}
		a.subscribed = on
		return tcl.Empty, nil
	}
}

// cmdAuthResponseData is `AUTH::response_data ?ID?`: the answer's data
// as a list of name value pairs (for `array set`): ldap:attr:NAME for
// the user's LDAP entry, radius:attr:TYPE for the RADIUS reply's
// attributes; empty unless the session is subscribed.
func cmdAuthResponseData(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	a, err := authLastOr(in, "AUTH::response_data", args)
	if err != nil {
		return tcl.Empty, err
	}
	if !a.subscribed || !a.done {
		return tcl.Empty, nil
	}
	out := make([]tcl.Value, 0, 2*len(a.res.Data))
	for _, d := range a.res.Data {
		out = append(out, tcl.Str(d.Name), tcl.Str(d.Value))
	}
	return tcl.List(out...), nil
}

// cmdAuthLastEvent is AUTH::last_event_session_id: the session whose
// answer the running result event is about.
func cmdAuthLastEvent(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs("AUTH::last_event_session_id")
	}
	s, _, err := sess(in, "AUTH::last_event_session_id")
	if err != nil {
		return tcl.Empty, err
	}
	if s.auth == nil || s.auth.last == 0 {
		return tcl.Int(-1), nil
	}
	return tcl.Int(int64(s.auth.last)), nil
}

// cmdAuthWant is AUTH::wantcredential_prompt, _prompt_style and _type
// ?ID?: what a WantCredential answer asks for (a RADIUS challenge's
// Reply-Message; echo_off; password).
func cmdAuthWant(what string) tcl.CmdFunc {
	cmd := "AUTH::wantcredential_" + what
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		a, err := authLastOr(in, cmd, args)
		if err != nil {
			return tcl.Empty, err
		}
		if !a.done || a.res.Status != authn.WantCredential {
			return tcl.Empty, nil
		}
		switch what {
		case "prompt":
			return tcl.Str(a.res.Prompt), nil
		case "prompt_style":
			return tcl.Str(a.res.PromptStyle), nil
		}
		return tcl.Str(a.res.CredType), nil
	}
}

func (e *Env) authService() AuthService {
	if e == nil {
		return nil
	}
	return e.Auth
}
