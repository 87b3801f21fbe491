package l4

import (
	"errors"
	"net/netip"

	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/rules"
)

// The LB:: commands that act on how the server side is made (rules
// commands_lb.go): LB::prime and LB::connect, translate, LB::snat,
// LB::persist and LB::enable_decisionlog.

// lbChoices are a flow's rule choices about its server connection beyond
// the Target's (which holds translate's); they live in ruleState, so a
// flow without rules pays nothing.
type lbChoices struct {
	// prime: open the server connection when the event ends.
	prime bool
	// decisionLog: LB::enable_decisionlog.
	decisionLog bool
}

var (
	_ rules.LBConnector    = (*proxied)(nil)
	_ rules.Translator     = (*proxied)(nil)
	_ rules.SNATReader     = (*proxied)(nil)
	_ rules.LBPersister    = (*proxied)(nil)
	_ rules.DecisionLogger = (*proxied)(nil)
)

// LBConnect implements rules.LBConnector. The virtual's persistence must
// not need the client's first bytes (ssl, msrdp, a payload hash): those
// are read before the member is chosen.
func (pr *proxied) LBConnect() error {
	if pr.srv.Load() != nil {
		return errors.New("the server side is connected already")
	}
	cfg := pr.snap.Cfg
	if cfg.Persist.Peeks() || cfg.FallbackPersist.Peeks() {
		return errors.New("the virtual server's persistence reads the client's first bytes before choosing a member")
	}
	pr.rs.prime = true
	return nil
}

// primed connects the server side after an event that asked for it
// (LB::prime), unless it exists already; it reports whether the flow
// goes on.
func (pr *proxied) primed() bool {
	if pr.srv.Load() != nil {
		return true
	}
	return pr.bind()
}

// Translation implements rules.Translator.
func (pr *proxied) Translation() (addr, port bool) { return pr.rs.Translation(pr.snap.Cfg) }

// SetTranslation implements rules.Translator: for the next server
// connection, so not once one exists.
func (pr *proxied) SetTranslation(addr, port bool) error {
	if pr.srv.Load() != nil {
		return errors.New("the server side is connected already")
	}
	pr.rs.Xlate = irules.Translation{Set: true, Addr: addr, Port: port}
	return nil
}

// translated is target's answer for a flow with rules (a translate
// command's choice, else the virtual's).
func (fl *flow) translated(member netip.AddrPort) netip.AddrPort {
	rs := fl.rs
	rs.mu.Lock()
	dst := rs.Translate(fl.snap.Cfg, member, fl.Local)
	rs.mu.Unlock()
	return dst
}

// SNATDecision implements rules.SNATReader.
func (pr *proxied) SNATDecision() string { return pr.rs.SNATDecision(pr.snap.Cfg) }

// LBPersist implements rules.LBPersister: the key the flow persists on
// now (a persist command's, else the virtual's profiles') and the
// member its record names in the pool the flow goes to, without
// making a record or reserving the member.
func (pr *proxied) LBPersist() (key, pool string, member netip.AddrPort, ok bool, err error) {
	d, persists := pr.persistKey()
	if !persists {
		return "", "", netip.AddrPort{}, false, nil
	}
	key = d.key.String()
	p := pr.lbPool()
	if p == nil {
		return key, "", netip.AddrPort{}, false, nil
	}
	q, m := pr.persistLookup(&d, p)
	if m == nil {
		return key, "", netip.AddrPort{}, false, nil
	}
	return key, q.Name, m.Cfg.Load().Addr, true, nil
}

// EnableDecisionLog implements rules.DecisionLogger.
func (pr *proxied) EnableDecisionLog() error {
	pr.rs.decisionLog = true
	return nil
}

// logDecision writes the flow's load-balancing decision to the ltm log
// when a rule asked for it (LB::enable_decisionlog).
func (pr *proxied) logDecision(pool *state.Pool, m *state.Member, how state.ChosenBy, dst netip.AddrPort) {
	rs := pr.rs
	if rs == nil {
		return
	}
	rs.mu.Lock()
	on := rs.decisionLog
	rs.mu.Unlock()
	if !on {
		return
	}
	by := "load balancing"
	switch how {
	case state.ByName:
		by = "the rule"
	case state.ByPersistence:
		by = "persistence"
	}
	pr.e.env.Log.Info("LB decision: virtual " + pr.Virtual + " client " + pr.Client.String() +
		" pool " + pool.Name + " member " + m.Name + " (" + m.Cfg.Load().Addr.String() + ") chosen by " + by +
		", connecting to " + dst.String())
}
