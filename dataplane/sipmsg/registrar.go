package sipmsg

import "time"

// RegLimits are a sip profile's registration bounds, which its TCP and
// UDP virtuals apply alike.
type RegLimits struct {
	// Max is max-registrations: live registrations at once (0: no bound).
	Max int
	// Timeout is registration-timeout: the longest a registration lasts
	// whatever it asks (0: as asked).
	Timeout time.Duration
	// SessionsPer is max-sessions-per-registration: the dialogs one
	// registration may have open (0: no bound).
	SessionsPer int
}

// Registrar counts one client's registrations and their open dialogs,
// so that a TCP connection and a UDP flow bound them with the same rules.
// Its caller serialises the calls (each holds the lock of its own SIP
// state); the zero value is not usable, make one with NewRegistrar.
type Registrar struct {
	regs map[string]registration
}

// registration is one address of record: until when it lasts (Unix ns)
// and its open dialogs.
type registration struct {
	until    int64
	sessions int
}

// NewRegistrar makes an empty Registrar.
func NewRegistrar() *Registrar { return &Registrar{regs: map[string]registration{}} }

// Admit applies the bounds to a client's request at now (Unix ns): nil
// lets it go on, otherwise the virtual's 503 answer to send instead. A
// REGISTER lasts what it asks (RegisterExpires, 3600 s when it says
// nothing), at most lim.Timeout, and 0 ends it. An INVITE outside a
// dialog (no To tag) from a live registration (its From address) opens
// one of its sessions, unless inDialog says its Call-ID already has one
// (a retransmission); aor is then that registration, for Release when
// the dialog ends. A request from an address not registered here is not
// bounded [M].
func (g *Registrar) Admit(m *Message, lim RegLimits, now int64, inDialog func(callID []byte) bool) (reject []byte, aor string) {
	switch string(m.Method) {
	case "REGISTER":
		to, _ := m.Header(To)
		a := AddrOfRecord(to)
		if len(a) == 0 {
			return nil, ""
		}
		exp := m.RegisterExpires(3600)
		r, known := g.regs[string(a)]
		if known && r.until < now && r.sessions == 0 {
			delete(g.regs, string(a))
			known = false
		}
		if exp == 0 {
			if known {
				r.until = 0
				if r.sessions == 0 {
					delete(g.regs, string(a))
				} else {
					g.regs[string(a)] = r
				}
			}
			return nil, ""
		}
		if !known && lim.Max > 0 && g.live(now) >= lim.Max {
			return Reject(m, 503, "Service Unavailable"), ""
		}
		d := time.Duration(min(exp, 1<<31)) * time.Second
		if lim.Timeout > 0 && d > lim.Timeout {
			d = lim.Timeout
		}
		r.until = now + int64(d)
		g.regs[string(a)] = r
	case "INVITE":
		if lim.SessionsPer <= 0 || m.HasToTag() {
			return nil, ""
		}
		from, _ := m.Header(From)
		a := AddrOfRecord(from)
		r, ok := g.regs[string(a)]
		if !ok || r.until < now {
			return nil, ""
		}
		if cid, ok := m.Header(CallID); ok && inDialog(cid) {
			return nil, "" // a retransmission: its session is counted
		}
		if r.sessions >= lim.SessionsPer {
			return Reject(m, 503, "Service Unavailable"), ""
		}
		r.sessions++
		g.regs[string(a)] = r
		return nil, string(a)
	}
	return nil, ""
}

// Release frees a session Admit counted against aor ("" frees nothing,
// as does a nil Registrar: a profile without bounds).
func (g *Registrar) Release(aor string) {
	if g == nil || aor == "" {
		return
	}
	if r, ok := g.regs[aor]; ok && r.sessions > 0 {
		r.sessions--
		g.regs[aor] = r
	}
}

// live counts the registrations still lasting at now, forgetting the
// others that hold no session. It runs only for a new registration.
func (g *Registrar) live(now int64) int {
	n := 0
	for k, r := range g.regs {
		switch {
		case r.until >= now:
			n++
		case r.sessions == 0:
			delete(g.regs, k)
		}
	}
	return n
}
