package daemon

import (
	"log/slog"
	"strings"

	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/rules"
)

// A message-routing transport-config's rules run on the peer
// connections it makes (dataplane/internal/l4/mrfpeer.go). Their
// program is built when the translation goes in service, in the same
// holder and by the same start as an internal virtual server's ICAP
// rules (translate_icaprules.go): the dataplane reads it through
// Program as each peer connection opens.

// Program is the rules' program (nil before the translation is in
// service): what a peer connection's hooks run.
func (r *icapRules) Program() *rules.Program { return r.prog.Load() }

// transportRulesOf compiles a transport-config's rule list for its peer
// connections: nil (no connection pays for them) when the list is empty
// or none of its rules handles an event a peer connection raises; key
// tells one list from another. A rule that does not compile, or uses
// what openltm lacks, leaves the list out with the error.
func (b *ruleBinder) transportRulesOf(s *objects.Schema, cfg *objects.Config, names []string) (ir *icapRules, key string, err error) {
	var list []*rules.Rule
	var kb strings.Builder
	used := false
	for _, n := range names {
		r, key1, err := b.compileNamed(s, cfg, n)
		if kept, ok := err.(*keptRuleError); ok {
			return nil, "", kept.error
		}
		if err != nil {
			return nil, "", err
		}
		for _, ev := range peerEvents {
			used = used || r.Handles(ev)
		}
		list = append(list, r)
		kb.WriteString(key1)
	}
	if !used {
		return nil, "", nil
	}
	ir = &icapRules{}
	if b.e != nil {
		if b.icap == nil {
			b.icap = map[*icapRules]ruleList{}
		}
		b.icap[ir] = ruleList{key: kb.String(), list: list}
		return ir, kb.String(), nil
	}
	if b.env == nil {
		b.env = &rules.Env{Log: func(f, l string) { logRule(slog.Default(), f, l) }}
	}
	p := rules.NewProgram(b.env, list...)
	p.Init()
	ir.prog.Store(p)
	return ir, kb.String(), nil
}

// peerEvents are the events a message-routing peer connection raises.
var peerEvents = []rules.Event{rules.ClientAccepted, rules.ClientClosed, rules.MRIngress, rules.MREgress, rules.MRFailed,
	rules.GenericMessageIngress, rules.GenericMessageEgress, rules.SIPRequest, rules.SIPResponse, rules.SIPRequestSend,
	rules.SIPResponseSend, rules.DiameterIngress, rules.DiameterEgress,
	rules.MQTTServerIngress, rules.MQTTServerData, rules.MQTTServerEgress}
