package l4

import (
	"github.com/openltm/openltm/dataplane/mrf"
	"github.com/openltm/openltm/rules"
)

// mrfDiameterPersist applies DIAMETER::persist's sub-commands to m: use,
// replace, bypass or ignore and timeout to a request's routing; a delete
// action set over a request waits for its answer, one set over an answer
// (in DIAMETER_EGRESS) acts on it at once.
func mrfDiameterPersist(m *mrf.Message, out rules.DiameterOutcome) {
	if mode, ok := mrf.ParsePersistMode(out.PersistMode); ok && !m.Answer {
		m.PersistMode = mode
	}
	if out.PersistTimeout > 0 && !m.Answer {
		m.PersistTTL = out.PersistTimeout
	}
	d, ok := mrf.ParsePersistDelete(out.PersistDelete)
	if !ok {
		return
	}
	if !m.Answer {
		m.PersistDelete = d
		return
	}
	if o := m.Originator(); o != nil && m.Persist != "" {
		o.Router().Settle(m, d)
	}
}
