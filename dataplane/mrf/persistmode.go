package mrf

import "time"

// PersistMode is what a rule asked of a request's persistence record
// (DIAMETER::persist use|replace|bypass|ignore).
type PersistMode uint8

// The persistence modes. PersistUse (the default) routes by the key's
// record when there is one and records where a request with none went;
// PersistReplace routes by the routes and records the new destination
// over the old; PersistBypass routes by the routes and records only
// where no record is; PersistIgnore routes by the routes and records
// nothing.
const (
	PersistUse PersistMode = iota
	PersistReplace
	PersistBypass
	PersistIgnore
)

// PersistDelete is when a request's persistence record is forgotten as
// its transaction completes (DIAMETER::persist delete-on-success,
// delete-on-failure, delete-on-any; PersistKeep: delete-none, the
// default).
type PersistDelete uint8

// The delete actions.
const (
	PersistKeep PersistDelete = iota
	PersistDeleteOnSuccess
	PersistDeleteOnFailure
	PersistDeleteOnAny
)

// Due says whether a transaction that succeeded (ok) or failed deletes
// the record.
func (d PersistDelete) Due(ok bool) bool {
	switch d {
	case PersistDeleteOnAny:
		return true
	case PersistDeleteOnSuccess:
		return ok
	case PersistDeleteOnFailure:
		return !ok
	}
	return false
}

// AnswerJudge is a protocol whose answers say whether their request
// succeeded (Diameter's Result-Code), for PersistDelete.
type AnswerJudge interface {
	Succeeded(answer []byte) bool
}

// persistWanted says whether request m, routed, records where it went:
// not with PersistIgnore, and with PersistBypass only where its key has
// no live record.
func (r *Router) persistWanted(m *Message) bool {
	switch m.PersistMode {
	case PersistIgnore:
		return false
	case PersistBypass:
		if _, ok := r.persistedKey(m.Persist); ok {
			return false
		}
	}
	return true
}

// persistedKey is key's live record.
func (r *Router) persistedKey(key string) (persistRec, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec, ok := r.persists[key]
	return rec, ok && nowBefore(rec.exp)
}

// settle forgets request req's persistence record as its transaction
// completes with answer (nil: it failed without one), when its delete
// action says so.
func (r *Router) settle(req *Message, answer []byte) {
	if req.PersistDelete == PersistKeep || req.Persist == "" {
		return
	}
	ok := false
	if answer != nil {
		ok = true
		if j, is := r.cfg.Proto.(AnswerJudge); is {
			ok = j.Succeeded(answer)
		}
	}
	if req.PersistDelete.Due(ok) {
		r.unpersist(req.Persist)
	}
}

func nowBefore(t time.Time) bool { return time.Now().Before(t) }

// Settle forgets the record of answer a's request's key (a.Persist)
// when d says so of the transaction a completes: a rule's
// delete-on-success, delete-on-failure or delete-on-any over the answer.
func (r *Router) Settle(a *Message, d PersistDelete) {
	r.settle(&Message{Persist: a.Persist, PersistDelete: d}, a.Data)
}

// ParsePersistMode reads use, replace, bypass or ignore.
func ParsePersistMode(s string) (PersistMode, bool) {
	switch s {
	case "use":
		return PersistUse, true
	case "replace":
		return PersistReplace, true
	case "bypass":
		return PersistBypass, true
	case "ignore":
		return PersistIgnore, true
	}
	return PersistUse, false
}

// ParsePersistDelete reads delete-none, delete-on-success,
// delete-on-failure or delete-on-any.
func ParsePersistDelete(s string) (PersistDelete, bool) {
	switch s {
	case "delete-none":
		return PersistKeep, true
	case "delete-on-success":
		return PersistDeleteOnSuccess, true
	case "delete-on-failure":
		return PersistDeleteOnFailure, true
	case "delete-on-any":
		return PersistDeleteOnAny, true
	}
	return PersistKeep, false
}
