package gslb

import (
	"fmt"
	"strconv"
	"strings"
)

// DecisionLog is a wide IP's load-balancing-decision-log-verbosity: a set
// of the steps of each decision the server log gets. Operators turn it on
// for one wide IP to see why the answers go where they go.
type DecisionLog uint8

// The steps, as BIG-IP DNS names them.
const (
	// LogPoolSelection logs the pool that answered and the method that
	// chose it.
	LogPoolSelection DecisionLog = 1 << iota
	// LogPoolTraversal logs every pool of the wide IP looked at, with its
	// state, and each tried pool that gave no answer.
	LogPoolTraversal
	// LogMemberSelection logs the member (or fallback-ip, or end) the
	// pool's methods chose, and at which level.
	LogMemberSelection
	// LogMemberTraversal logs every member of each tried pool with its
	// state, and each method level that gave no answer.
	LogMemberTraversal
)

var decisionLogWords = [...]string{"pool-selection", "pool-traversal", "pool-member-selection", "pool-member-traversal"}

// ParseDecisionLog reads the verbosity's words; an unknown one is an
// error naming the valid ones, so a typo does not silently log nothing.
func ParseDecisionLog(words []string) (DecisionLog, error) {
	var v DecisionLog
next:
	for _, w := range words {
		for i, n := range decisionLogWords {
			if w == n {
				v |= 1 << i
				continue next
			}
		}
		return 0, fmt.Errorf("load-balancing-decision-log-verbosity: %q is not one of %s", w, strings.Join(decisionLogWords[:], ", "))
	}
	return v, nil
}

// String lists the verbosity's words.
func (v DecisionLog) String() string {
	var out []string
	for i, n := range decisionLogWords {
		if v&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return strings.Join(out, " ")
}

// lbTrace collects one decision's log line. It exists only for a query of
// a wide IP with a DecisionLog, so the answer path without one pays a nil
// check.
type lbTrace struct {
	mask DecisionLog
	b    []byte
}

func (t *lbTrace) on(f DecisionLog) bool { return t != nil && t.mask&f != 0 }

// seg appends one bracketed segment.
func (t *lbTrace) seg(parts ...string) {
	t.b = append(t.b, " ["...)
	for _, p := range parts {
		t.b = append(t.b, p...)
	}
	t.b = append(t.b, ']')
}

var levelWords = [...]string{"preferred", "alternate", "fallback"}

func levelWord(level int) string {
	if level < 0 || level >= len(levelWords) {
		return "persisted"
	}
	return levelWords[level]
}

// memberID is how a member is named in the log: server:virtual-server and
// its destination.
func memberID(m *member) string {
	return m.name + " " + m.vs.cfg.Destination.String()
}

func (t *lbTrace) poolCheck(pl *pool, ok bool, why string) {
	if !t.on(LogPoolTraversal) {
		return
	}
	if ok {
		t.seg("pool (", pl.full, ") check succeeded - pool state is available")
		return
	}
	t.seg("pool (", pl.full, ") check failed - ", why)
}

func (t *lbTrace) poolScore(pl *pool, score int) {
	if t.on(LogPoolTraversal) {
		t.seg("pool (", pl.full, ") topology score ", strconv.Itoa(score))
	}
}

// poolEnd logs how a tried pool ended: chosen by how (pool selection),
// or giving nothing (pool traversal).
func (t *lbTrace) poolEnd(pl *pool, how string, d *decision) {
	switch {
	case d.out == outNone:
		if t.on(LogPoolTraversal) {
			t.seg("pool (", pl.full, ") skipped - no load balancing method gave an answer")
		}
	case t.on(LogPoolSelection):
		t.seg(how, " selected pool (", pl.full, ")")
	}
}

func (t *lbTrace) memberChecks(pl *pool) {
	if !t.on(LogMemberTraversal) {
		return
	}
	if pl.typ.named() {
		for _, m := range pl.names {
			if ok, why := nameState(m); ok {
				t.seg("pool member check succeeded (", m.target, ") - pool member state is available")
			} else {
				t.seg("pool member check failed (", m.target, ") - ", why)
			}
		}
		return
	}
	for _, m := range pl.members {
		if ok, why := memberState(m); ok {
			t.seg("pool member check succeeded (", memberID(m), ") - pool member state is available")
		} else {
			t.seg("pool member check failed (", memberID(m), ") - ", why)
		}
	}
}

// levelSkipped logs a method level that gave no answer.
func (t *lbTrace) levelSkipped(mode Mode, level int, why string) {
	if t.on(LogMemberTraversal) {
		t.seg(string(mode), " (", levelWord(level), " method) gave no answer - ", why)
	}
}

// chosen logs what a pool's methods decided.
func (t *lbTrace) chosen(d *decision, mode Mode) {
	if !t.on(LogMemberSelection) {
		return
	}
	lv := levelWord(d.level)
	switch {
	case d.out == outReturnToDNS:
		t.seg(string(mode), " (", lv, " method) returned the query to DNS")
	case d.out == outDrop:
		t.seg(string(mode), " (", lv, " method) dropped the query")
	case d.member != nil:
		t.seg(string(mode), " selected pool member (", memberID(d.member), ") - ", lv, " method")
	case len(d.targets) > 0:
		t.seg(string(mode), " selected pool member (", d.targets[0].target, ") - ", lv, " method")
	case d.n > 0:
		t.seg(string(mode), " selected (", d.inline[0].String(), ") - ", lv, " method")
	}
}

// resolveLogged is resolve for a wide IP with a decision log: the same
// decision, its steps written to the server log as one line.
func (s *Server) resolveLogged(rq *request, w *wideIP, d *decision, pl *pool) {
	t := &lbTrace{mask: w.dlog, b: make([]byte, 0, 256)}
	rq.trace = t
	t.b = append(t.b, "gslb: lb decision: from "...)
	t.b = append(t.b, rq.ldns.String()...)
	t.seg(strings.TrimSuffix(w.name, "."), " ", strings.ToUpper(string(w.typ)))
	if rq.ecs != nil {
		t.seg("client subnet ", rq.topoAddr.String(), "/", strconv.Itoa(int(rq.ecs.SourceNetmask)))
	}
	if pl != nil {
		s.resolveInLB(rq, w, pl, d)
	} else {
		s.resolveLB(rq, w, d)
	}
	rq.trace = nil
	switch d.out {
	case outReturnToDNS:
		t.seg("no pool answered - returned to DNS")
	case outDrop:
		t.seg("dropped")
	}
	s.log.Info(string(t.b))
}
