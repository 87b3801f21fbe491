package sipmsg

import "time"

// Dialogs follows the dialogs of one client (a TCP connection, a UDP
// flow) for a dialog-aware proxy: the member each went to, and the
// registration it counts against, so that a TCP and a UDP virtual keep
// requests of a dialog on its member by the same rules. M is what the
// proxy calls a member. Its caller serialises the calls (each holds the
// lock of its own SIP state). The clock is the caller's, read per
// message: a janitor's second would stretch a short timeout.
type Dialogs[M any] struct {
	m     map[string]dialog[M]
	limit int
	regs  *Registrar // nil: the profile bounds no registrations
}

// dialog is one dialog: its member, whether a 2xx established it, until
// when it is kept (Unix ns, 0: for ever), and the registration it counts
// against (max-sessions-per-registration; "" for none).
type dialog[M any] struct {
	member      M
	established bool
	until       int64
	aor         string
}

// NewDialogs makes the dialogs of one client, at most limit of them
// (about half forgotten past it); regs adds the registration bounds.
func NewDialogs[M any](limit int, regs bool) *Dialogs[M] {
	ds := &Dialogs[M]{m: map[string]dialog[M]{}, limit: limit}
	if regs {
		ds.regs = NewRegistrar()
	}
	return ds
}

// Bounded reports whether registrations are bounded (Admit acts).
func (ds *Dialogs[M]) Bounded() bool { return ds.regs != nil }

// Admit applies the registration bounds to a client's request
// (Registrar.Admit): the reject to send instead, or the registration an
// INVITE's dialog counts against, for Begin (and Release when no member
// takes it).
func (ds *Dialogs[M]) Admit(m *Message, lim RegLimits, now int64) (reject []byte, aor string) {
	if ds.regs == nil {
		return nil, ""
	}
	return ds.regs.Admit(m, lim, now, func(cid []byte) bool {
		_, again := ds.m[string(cid)]
		return again
	})
}

// Release frees the session Admit counted for a request no member took.
func (ds *Dialogs[M]) Release(aor string) { ds.regs.Release(aor) }

// Member is the member of the dialog a request belongs to (by Call-ID),
// false when none is known or its timer ran out at now (the dialog is
// then forgotten and its request balanced afresh).
func (ds *Dialogs[M]) Member(m *Message, now int64) (M, bool) {
	var none M
	cid, ok := m.Header(CallID)
	if !ok {
		return none, false
	}
	d, ok := ds.m[string(cid)]
	if !ok {
		return none, false
	}
	if d.until != 0 && now > d.until {
		ds.drop(cid, d)
		return none, false
	}
	return d.member, true
}

// Begin remembers the member a request that opens a dialog went to, kept
// for timeout (dialog-establishment-timeout; 0: for ever) until a 2xx
// establishes it. A retransmission, or another try after a member
// failed, is the same dialog: its member becomes the one now sent to.
func (ds *Dialogs[M]) Begin(m *Message, member M, aor string, timeout time.Duration, now int64) {
	cid, ok := m.Header(CallID)
	if !ok || !OpensDialog(m) {
		return
	}
	if old, ok := ds.m[string(cid)]; ok {
		old.member = member
		ds.m[string(cid)] = old
		return
	}
	d := dialog[M]{member: member, aor: aor}
	if timeout > 0 {
		d.until = now + int64(timeout)
	}
	if len(ds.m) >= ds.limit {
		ForgetHalf(ds.m)
	}
	ds.m[string(cid)] = d
}

// Seen follows a dialog through a message either way: a 2xx to the
// request that opened it establishes it (kept for session, the
// sip-session-timeout, from then and from each later message; 0: for
// ever); a failure before that, or a BYE's final answer, forgets it.
func (ds *Dialogs[M]) Seen(m *Message, session time.Duration, now int64) {
	cid, ok := m.Header(CallID)
	if !ok {
		return
	}
	var meth []byte
	if !m.Request {
		if m.Code < 200 {
			return
		}
		meth = m.CSeqMethod()
	}
	d, ok := ds.m[string(cid)]
	if !ok {
		return
	}
	if d.until != 0 && now > d.until {
		ds.drop(cid, d)
		return
	}
	if !m.Request {
		switch {
		case string(meth) == "BYE":
			ds.drop(cid, d)
			return
		case !d.established && IsDialogMethod(meth) && m.Code < 300:
			d.established = true
		case !d.established && IsDialogMethod(meth):
			ds.drop(cid, d)
			return
		}
	}
	if d.established {
		d.until = 0
		if session > 0 {
			d.until = now + int64(session)
		}
	}
	ds.m[string(cid)] = d
}

// drop forgets a dialog and frees its registration's session.
func (ds *Dialogs[M]) drop(cid []byte, d dialog[M]) {
	delete(ds.m, string(cid))
	ds.regs.Release(d.aor)
}
