package l4

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/rstcause"
	"github.com/openltm/openltm/dataplane/tlsprof"
	"github.com/openltm/openltm/rules"
)

// The SSL::session family on a standard virtual (rules.SSLSessionConn):
// the client's session ticket, read and invalidated through a
// tlsprof.SessionControl set on the handshakes of virtuals whose rules
// name the commands (Program.ControlsSessions); the client's handshake
// held in CLIENTSSL_CLIENTHELLO, which crypto/tls runs on the flow's own
// goroutine inside GetConfigForClient and waits for, so that holding it
// blocks this flow alone; and each side's close with or without
// close_notify.

var _ rules.SSLSessionConn = (*proxied)(nil)

// sslSessionState is a flow's share of the rule state for these
// commands, under the rule lock.
type sslSessionState struct {
	// sessCtl is the client's session (nil: no rule names SSL::session).
	sessCtl *tlsprof.SessionControl
	// hold is closed to resume a held client handshake (nil: not held).
	hold chan struct{}
	// unclean is SSL::unclean_shutdown per side: closes without
	// close_notify, read by the closes without the rule lock.
	unclean [2]atomic.Bool
	// dynRecords is SSL::allow_dynamic_record_sizing (0: the profile's,
	// 1 on, -1 off).
	dynRecords int8
}

// ErrHandshakeHeld is the handshake's end when a rule held it and never
// resumed it within the profile's handshake-timeout.
var ErrHandshakeHeld = errors.New("the handshake held by SSL::handshake hold was not resumed within the handshake-timeout")

func (pr *proxied) tlsSide(s rules.Side, cmd string) error {
	tc := pr.tlsCfg()
	if tc == nil || (s == rules.ClientSide && tc.Client == nil) || (s == rules.ServerSide && tc.Server == nil) || pr.rs.sslOff[s] {
		return fmt.Errorf("%s: the %s of this connection does not speak TLS", cmd, s)
	}
	return nil
}

// SSLSessionInvalidate implements rules.SSLSessionConn: the client's
// session is revoked in its client-ssl profile; the member's leaves the
// server-ssl profile's session cache.
func (pr *proxied) SSLSessionInvalidate(s rules.Side) error {
	if err := pr.tlsSide(s, "SSL::session invalidate"); err != nil {
		return err
	}
	if s == rules.ServerSide {
		sc := pr.srv.Load()
		if sc == nil || sc.tls == nil {
			return errors.New("SSL::session invalidate: the server side's handshake is not done")
		}
		tlsprof.ForgetMemberSession(sc.tls, sc.tlsCfg)
		return nil
	}
	if pr.rs.sessCtl == nil {
		return errors.New("SSL::session invalidate: the client's session is not kept for this connection")
	}
	pr.rs.sessCtl.Invalidate()
	return nil
}

// SSLSessionTicket implements rules.SSLSessionConn: the client's ticket
// (issued, else resumed with); the server side reads none [M].
func (pr *proxied) SSLSessionTicket(s rules.Side) ([]byte, error) {
	if err := pr.tlsSide(s, "SSL::sessionticket"); err != nil {
		return nil, err
	}
	if s == rules.ServerSide || pr.rs.sessCtl == nil {
		return nil, nil
	}
	return pr.rs.sessCtl.Ticket(), nil
}

// SSLHandshakeHold implements rules.SSLSessionConn for the client's
// handshake (rules.go allows the hold in CLIENTSSL_CLIENTHELLO only).
func (pr *proxied) SSLHandshakeHold(s rules.Side, hold bool) error {
	if err := pr.tlsSide(s, "SSL::handshake"); err != nil {
		return err
	}
	rs := pr.rs
	if hold {
		if s != rules.ClientSide || pr.hello == nil {
			return errors.New("SSL::handshake hold: only the client's handshake is held, in CLIENTSSL_CLIENTHELLO")
		}
		if rs.hold == nil {
			rs.hold = make(chan struct{})
		}
		return nil
	}
	rs.resumeHold()
	return nil
}

// resumeHold lets a held handshake go on (under the rule lock).
func (rs *ruleState) resumeHold() {
	if rs.hold != nil {
		close(rs.hold)
		rs.hold = nil
	}
}

// awaitResume waits, after CLIENTSSL_CLIENTHELLO, until a rule resumes
// the handshake it held, no later than deadline (the handshake-timeout);
// false means the flow is over.
func (pr *proxied) awaitResume(deadline time.Time) bool {
	rs := pr.rs
	rs.mu.Lock()
	ch := rs.hold
	rs.mu.Unlock()
	if ch == nil {
		return true
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-ch:
		return !pr.ended.Load()
	case <-t.C:
		rs.mu.Lock()
		rs.hold = nil
		rs.mu.Unlock()
		pr.e.env.Log.Warn("ssl handshake held", "virtual", pr.vs.Name, "error", ErrHandshakeHeld)
		pr.because(rstcause.TLSHandshake)
		return false
	}
}

// SSLUncleanShutdown implements rules.SSLSessionConn.
func (pr *proxied) SSLUncleanShutdown(s rules.Side, on bool) error {
	if err := pr.tlsSide(s, "SSL::unclean_shutdown"); err != nil {
		return err
	}
	pr.rs.unclean[s].Store(on)
	return nil
}

// SSLRenegotiationSecure implements rules.SSLSessionConn: the client's
// hello offered RFC 5746's renegotiation_info or its signalling suite.
// The member's hello is not seen [M: an error on the server side].
func (pr *proxied) SSLRenegotiationSecure(s rules.Side) (bool, error) {
	if err := pr.tlsSide(s, "SSL::is_renegotiation_secure"); err != nil {
		return false, err
	}
	if s == rules.ServerSide {
		return false, errors.New("SSL::is_renegotiation_secure: only the client's hello is read")
	}
	if h := pr.hello; h != nil {
		return tlsprof.OffersSecureRenegotiation(h), nil
	}
	if pr.rs.sessCtl == nil {
		return false, errors.New("SSL::is_renegotiation_secure: the client's hello is not kept for this connection")
	}
	return pr.rs.sessCtl.SecureRenegotiation(), nil
}

// uncleanTo reports whether the close toward a side goes without
// close_notify (SSL::unclean_shutdown enable): a nil check for flows
// without rules.
func (pr *proxied) uncleanTo(s rules.Side) bool {
	rs := pr.rs
	if rs == nil {
		return false
	}
	return rs.unclean[s].Load()
}

// SSLDynamicRecords implements rules.SSLSessionConn: allow-dynamic-record-sizing
// for this client, set before the handshake's configuration is fixed
// (CLIENT_ACCEPTED, CLIENTSSL_CLIENTHELLO).
func (pr *proxied) SSLDynamicRecords(set, on bool) (bool, error) {
	if err := pr.tlsSide(rules.ClientSide, "SSL::allow_dynamic_record_sizing"); err != nil {
		return false, err
	}
	rs := pr.rs
	if !set {
		if rs.dynRecords != 0 {
			return rs.dynRecords > 0, nil
		}
		return !pr.tlsCfg().Client.DynamicRecordSizingDisabled, nil
	}
	if pr.ctls != nil || (rs.ev != config.EventClientAccepted && pr.hello == nil) {
		return false, errors.New("SSL::allow_dynamic_record_sizing: set it in CLIENT_ACCEPTED or CLIENTSSL_CLIENTHELLO, before the handshake's configuration is fixed")
	}
	rs.dynRecords = -1
	if on {
		rs.dynRecords = 1
	}
	return on, nil
}

// dynRecordsChoice is SSL::allow_dynamic_record_sizing's choice, read by
// the handshake once the hello's rules ran.
func (pr *proxied) dynRecordsChoice() int8 {
	pr.rs.mu.Lock()
	defer pr.rs.mu.Unlock()
	return pr.rs.dynRecords
}
