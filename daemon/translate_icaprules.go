package daemon

import (
	"fmt"
	"log/slog"
	"net/netip"
	"strings"
	"sync/atomic"

	"github.com/openltm/openltm/dataplane/icap"
	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/rules"
)

// icapRules are an internal virtual server's rules as its ICAP exchanges
// run them (ICAP_REQUEST, ICAP_RESPONSE). The program is set when the
// translation goes in service (ruleRuntime.start), as a virtual's is.
type icapRules struct {
	prog atomic.Pointer[rules.Program]
}

// RunICAP implements mblb.ICAPRules.
func (r *icapRules) RunICAP(resp bool, h *icap.Head, server netip.AddrPort) error {
	p := r.prog.Load()
	if p == nil {
		return nil
	}
	ev := rules.ICAPRequest
	if resp {
		ev = rules.ICAPResponse
	}
	m := rules.ICAPMessage{Method: h.Method, URI: h.URI, Status: h.Status, Fields: h.Fields, ReadOnly: h.ReadOnly}
	// HTTP:: commands act on the encapsulated message (a head that does
	// not parse is left out: they then find none).
	if h.Request != nil {
		m.HTTPRequest = &rules.HTTPHead{}
		if m.HTTPRequest.Reset(h.Request, false) != nil {
			m.HTTPRequest = nil
		}
	}
	if h.Response != nil {
		m.HTTPResponse = &rules.HTTPHead{}
		if m.HTTPResponse.Reset(h.Response, true) != nil {
			m.HTTPResponse = nil
		}
	}
	if err := p.RunICAP(ev, &m, server); err != nil {
		return fmt.Errorf("%s: %w", ev, err)
	}
	h.URI, h.Fields = m.URI, m.Fields
	if m.HTTPRequest != nil && m.HTTPRequest.Modified() {
		h.Request = m.HTTPRequest.AppendTo(nil)
	}
	if m.HTTPResponse != nil && m.HTTPResponse.Modified() {
		h.Response = m.HTTPResponse.AppendTo(nil)
	}
	return nil
}

// icapRulesOf compiles an internal virtual server's rules for its ICAP
// exchanges: nil when none of them has an ICAP_REQUEST or ICAP_RESPONSE
// event (no exchange pays for them). One internal virtual gets one
// icapRules per translation, whichever adapt profiles name it.
func (b *ruleBinder) icapRulesOf(s *objects.Schema, cfg *objects.Config, vs *objects.Object) (*icapRules, error) {
	if r, ok := b.icapBy[vs.Name]; ok {
		return r, nil
	}
	rv := virtualRules.Get(vs)
	if rv == nil || len(rv.List) == 0 {
		return nil, nil
	}
	var list []*rules.Rule
	var key strings.Builder
	icapEvents := false
	for _, n := range rv.List {
		r, key1, err := b.compileNamed(s, cfg, n)
		if kept, ok := err.(*keptRuleError); ok {
			return nil, kept.error // the note, as any other refusal here
		}
		if err != nil {
			return nil, err
		}
		icapEvents = icapEvents || r.Handles(rules.ICAPRequest) || r.Handles(rules.ICAPResponse)
		list = append(list, r)
		key.WriteString(key1)
	}
	if b.icapBy == nil {
		b.icapBy = map[string]*icapRules{}
	}
	if !icapEvents {
		b.icapBy[vs.Name] = nil
		return nil, nil
	}
	ir := &icapRules{}
	b.icapBy[vs.Name] = ir
	if b.e != nil {
		if b.icap == nil {
			b.icap = map[*icapRules]ruleList{}
		}
		b.icap[ir] = ruleList{key: key.String(), list: list}
		return ir, nil
	}
	if b.env == nil {
		b.env = &rules.Env{Log: func(f, l string) { logRule(slog.Default(), f, l) }}
	}
	p := rules.NewProgram(b.env, list...)
	p.Init()
	ir.prog.Store(p)
	return ir, nil
}
