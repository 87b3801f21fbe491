// Package aaa sends the RADIUS requests of the iRules' AAA:: commands
// (AAA::auth_send, AAA::acct_send) through an internal virtual server
// with a `pem profile radius-aaa`, as BIG-IP does: the profile gives the
// shared secret and the timers, the internal virtual's pool the RADIUS
// servers (balanced by its method and its monitors), and its rules
// RADIUS_AAA_AUTH_REQUEST / RADIUS_AAA_ACCT_REQUEST over the request
// about to leave and RADIUS_AAA_AUTH_RESPONSE / RADIUS_AAA_ACCT_RESPONSE
// over the server's answer (Hooks). A request is sent again each
// retransmission-timeout, to the member the pool chooses then, until an
// answer comes or transaction-timeout passes.
//
// An exchange runs on the caller's goroutine and blocks; the rules run
// it on one of their own (rules/commands_aaa.go).
package aaa

import (
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/openltm/openltm/dataplane/radius"
)

// Outcome is an answer as AAA::auth_result and AAA::acct_result give
// it.
type Outcome int

// The outcomes, with F5's words.
const (
	// InProgress: no answer yet.
	InProgress Outcome = iota
	// OK: Access-Accept, or Accounting-Response.
	OK
	// Fail: Access-Reject (or Access-Challenge, which a sideband
	// request cannot answer [M]).
	Fail
	// Error: no server answered within transaction-timeout, none was
	// available, or the rules ended the exchange.
	Error
)

func (o Outcome) String() string {
	switch o {
	case OK:
		return "OK"
	case Fail:
		return "FAIL"
	case Error:
		return "ERROR"
	}
	return "INPROGRESS"
}

// Hooks runs the internal virtual server's rules over an exchange. Each
// returns the packet as the rules left it; an error is one of the
// rules' (a Tcl error, reject, drop): the exchange ends in Error.
type Hooks interface {
	Request(acct bool, pkt []byte) ([]byte, error)
	Response(acct bool, pkt []byte, server netip.AddrPort) ([]byte, error)
}

// Service is one internal virtual server with a radius-aaa profile.
type Service struct {
	// Name is the internal virtual server's full path.
	Name string
	// Secret is the profile's shared-secret.
	Secret []byte
	// Password is sent when AAA::auth_send gives none (the profile's
	// password) [M: F5 documents the property, not its use].
	Password string
	// Retransmit is retransmission-timeout (5 seconds by default),
	// Transaction transaction-timeout (30 seconds by default).
	Retransmit, Transaction time.Duration
	// Pick is the member of the internal virtual's pool its method
	// chooses now; nil or false: none is available.
	Pick func() (netip.AddrPort, bool)
	// Hooks, when set, runs the internal virtual's rules.
	Hooks Hooks
}

// Result is an exchange's end: its outcome, the answer as the rules
// left it (nil without one), the server that gave it and, for Error,
// why.
type Result struct {
	Outcome Outcome
	Answer  []byte
	Server  netip.AddrPort
	Err     error
}

// Attr is one attribute of an accounting request.
type Attr struct {
	Type  uint8
	Value []byte
}

// maxAttr is the most an attribute's value may hold.
const maxAttr = 253

// Auth sends an Access-Request for user (with password, else the
// profile's).
func (s *Service) Auth(ctx context.Context, user, password string) Result {
	if password == "" {
		password = s.Password
	}
	if len(user) > maxAttr {
		return Result{Outcome: Error, Err: fmt.Errorf("user name of %d bytes (at most %d)", len(user), maxAttr)}
	}
	if len(password) > 128 {
		return Result{Outcome: Error, Err: errors.New("password of more than 128 bytes")}
	}
	var auth [16]byte
	rand.Read(auth[:])
	b := header(radius.AccessRequest, auth)
	b = appendAttr(b, radius.AttrUserName, []byte(user))
	if password != "" {
		b = appendAttr(b, 2, hidePassword([]byte(password), auth, s.Secret))
	}
	return s.exchange(ctx, false, b)
}

// Acct sends an Accounting-Request with attrs.
func (s *Service) Acct(ctx context.Context, attrs []Attr) Result {
	b := header(radius.AccountingRequest, [16]byte{})
	for _, a := range attrs {
		if len(a.Value) > maxAttr {
			return Result{Outcome: Error, Err: fmt.Errorf("attribute %d of %d bytes (at most %d)", a.Type, len(a.Value), maxAttr)}
		}
		b = appendAttr(b, a.Type, a.Value)
	}
	if len(b) > radius.MaxLen {
		return Result{Outcome: Error, Err: fmt.Errorf("request of %d bytes (at most %d)", len(b), radius.MaxLen)}
	}
	return s.exchange(ctx, true, b)
}

// header starts a packet of code with authenticator auth.
func header(code uint8, auth [16]byte) []byte {
	b := make([]byte, radius.HeaderLen, 128)
	b[0] = code
	copy(b[4:], auth[:])
	binary.BigEndian.PutUint16(b[2:], radius.HeaderLen)
	return b
}

// appendAttr adds an attribute and keeps the length field.
func appendAttr(b []byte, t uint8, v []byte) []byte {
	b = append(b, t, byte(2+len(v)))
	b = append(b, v...)
	binary.BigEndian.PutUint16(b[2:], uint16(len(b)))
	return b
}

// hidePassword is User-Password's value (RFC 2865 §5.2).
func hidePassword(p []byte, auth [16]byte, secret []byte) []byte {
	n := (len(p) + 15) / 16 * 16
	if n == 0 {
		n = 16
	}
	out := make([]byte, n)
	copy(out, p)
	last := auth[:]
	for i := 0; i < n; i += 16 {
		h := md5Sum(secret, last)
		for j := 0; j < 16; j++ {
			out[i+j] ^= h[j]
		}
		last = out[i : i+16]
	}
	return out
}

// exchange runs the request's rules, sends it and waits for the answer.
func (s *Service) exchange(ctx context.Context, acct bool, b []byte) Result {
	var id [1]byte
	rand.Read(id[:])
	b[1] = id[0]
	if acct {
		radius.SignRequest(b, s.Secret)
	}
	if s.Hooks != nil {
		out, err := s.Hooks.Request(acct, b)
		if err != nil {
			return Result{Outcome: Error, Err: err}
		}
		if _, err := radius.Check(out); err != nil {
			return Result{Outcome: Error, Err: fmt.Errorf("the request as the rules left it: %v", err)}
		}
		b = out
		radius.SignRequest(b, s.Secret)
	}
	total := s.Transaction
	if total <= 0 {
		total = 30 * time.Second
	}
	every := s.Retransmit
	if every <= 0 || every > total {
		every = min(5*time.Second, total)
	}
	ctx, cancel := context.WithTimeout(ctx, total)
	defer cancel()
	answer := make(chan Result, 1)
	var last error = errors.New("no RADIUS server answered")
	for try := 0; ; try++ {
		server, ok := netip.AddrPort{}, false
		if s.Pick != nil {
			server, ok = s.Pick()
		}
		if !ok {
			last = fmt.Errorf("no member of internal virtual server %s's pool is available", s.Name)
		} else {
			go s.ask(ctx, server, b, answer)
		}
		t := time.NewTimer(every)
		select {
		case r := <-answer:
			t.Stop()
			if r.Outcome == Error && r.Err != nil && ctx.Err() == nil {
				last = r.Err
				// An answer that is not one (a bad authenticator) waits
				// for the next try.
				select {
				case <-t.C:
				case <-ctx.Done():
				}
				if ctx.Err() != nil {
					return Result{Outcome: Error, Err: last}
				}
				continue
			}
			return s.answered(acct, r)
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			select {
			case r := <-answer:
				if r.Outcome != Error {
					return s.answered(acct, r)
				}
			default:
			}
			if ok {
				last = fmt.Errorf("no answer from %s within %s", server, total)
			}
			return Result{Outcome: Error, Err: last}
		}
	}
}

// answered runs the answer's rules and reads its outcome.
func (s *Service) answered(acct bool, r Result) Result {
	if s.Hooks != nil {
		out, err := s.Hooks.Response(acct, r.Answer, r.Server)
		if err != nil {
			return Result{Outcome: Error, Server: r.Server, Err: err}
		}
		if _, err := radius.Check(out); err == nil {
			r.Answer = out
		}
	}
	switch radius.Code(r.Answer) {
	case radius.AccessAccept, radius.AccountingResponse:
		r.Outcome = OK
	case radius.AccessReject, radius.AccessChallenge:
		r.Outcome = Fail
	default:
		r.Outcome, r.Err = Error, fmt.Errorf("answer of code %d", radius.Code(r.Answer))
	}
	return r
}

// ask sends b to server once and hands on its answer; a reply that does
// not match (another id, a bad authenticator) is an Error with a reason.
func (s *Service) ask(ctx context.Context, server netip.AddrPort, b []byte, answer chan<- Result) {
	send := func(r Result) {
		select {
		case answer <- r:
		default:
		}
	}
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(server))
	if err != nil {
		send(Result{Outcome: Error, Server: server, Err: err})
		return
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()
	if _, err := c.Write(b); err != nil {
		send(Result{Outcome: Error, Server: server, Err: err})
		return
	}
	buf := make([]byte, radius.MaxLen)
	for i := 0; i < 8; i++ {
		n, err := c.Read(buf)
		if err != nil {
			return // the exchange's end, or the next try's
		}
		p := buf[:n]
		m, err := radius.Check(p)
		if err != nil || radius.ID(p) != radius.ID(b) {
			continue
		}
		p = p[:m]
		if !radius.VerifyResponse(p, radius.Authenticator(b), s.Secret) {
			send(Result{Outcome: Error, Server: server, Err: fmt.Errorf("answer from %s not signed with the shared secret", server)})
			return
		}
		send(Result{Answer: append([]byte(nil), p...), Server: server})
		return
	}
}

func md5Sum(a, b []byte) [16]byte {
	h := md5.New()
	h.Write(a)
	h.Write(b)
	var out [16]byte
	h.Sum(out[:0])
	return out
}
