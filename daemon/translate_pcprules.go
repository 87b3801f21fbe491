package daemon

import (
	"encoding/binary"
	"fmt"
	"log/slog"
	"net/netip"
	"sync/atomic"

	"github.com/openltm/openltm/dataplane/pcp"
	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/rules"
)

// pcpRules are a pcp profile's rule as the PCP servers of the lsn pools
// that use the profile run it (PCP_REQUEST, PCP_RESPONSE: rules/
// commands_pcp.go). The program is set when the translation goes in
// service (ruleRuntime.start), as a virtual's is; pools whose profiles
// name the same rule share one.
type pcpRules struct {
	prog atomic.Pointer[rules.Program]
}

// pcpMessage is r as the rule reads it.
func pcpMessage(r *pcp.Request) rules.PCPMessage {
	m := rules.PCPMessage{Version: r.Version, Opcode: r.Opcode, Lifetime: r.Lifetime, Client: r.Client,
		Nonce: r.Nonce, Protocol: r.Protocol, InternalPort: r.InternalPort, SuggestedPort: r.ExtPort,
		SuggestedAddr: r.ExtAddr, PreferFailure: r.PreferFailure, ThirdParty: r.ThirdParty}
	for o := r.Options; len(o) >= 4; {
		m.Options = append(m.Options, o[0])
		n := 4 + (int(binary.BigEndian.Uint16(o[2:]))+3)&^3
		if n > len(o) {
			break
		}
		o = o[n:]
	}
	return m
}

// PCPRequest implements config.PCPRules.
func (r *pcpRules) PCPRequest(req *pcp.Request, client, server netip.AddrPort) (uint8, bool) {
	p := r.prog.Load()
	if p == nil {
		return 0, false
	}
	m := pcpMessage(req)
	if err := p.RunPCP(rules.PCPRequest, &m, client, server); err != nil {
		return 0, true // logged by the engine; the request is dropped
	}
	if m.Rejected {
		return m.RejectCode, false
	}
	return 0, false
}

// PCPResponse implements config.PCPRules.
func (r *pcpRules) PCPResponse(req *pcp.Request, resp *pcp.Response, client, server netip.AddrPort) {
	p := r.prog.Load()
	if p == nil {
		return
	}
	m := pcpMessage(req)
	m.RespVersion, m.Result, m.RespLifetime = pcp.Version, resp.Result, resp.Lifetime
	m.AssignedAddr, m.AssignedPort = resp.ExtAddr, resp.ExtPort
	if !resp.ExtAddr.IsValid() { // the answer carries the request's suggestion back (pcp.Response.Append)
		m.AssignedAddr, m.AssignedPort = req.ExtAddr, req.ExtPort
	}
	p.RunPCP(rules.PCPResponse, &m, client, server) // an error is logged; the answer leaves as it is
}

// pcpRulesOf compiles a pcp profile's rule for the PCP servers: nil when
// it has neither PCP_REQUEST nor PCP_RESPONSE (note says so: nothing of
// it would run there). A rule that uses only what openltm lacks is a
// *keptRuleError, as for a virtual's.
func (b *ruleBinder) pcpRulesOf(s *objects.Schema, cfg *objects.Config, name string) (pr *pcpRules, note string, err error) {
	r, key, err := b.compileNamed(s, cfg, name)
	if err != nil {
		return nil, "", err
	}
	if !r.Handles(rules.PCPRequest) && !r.Handles(rules.PCPResponse) {
		return nil, fmt.Sprintf("rule %s has no PCP_REQUEST or PCP_RESPONSE event: none of it runs in the PCP server", r.Name), nil
	}
	if pr := b.pcpBy[r.Name]; pr != nil {
		return pr, "", nil
	}
	pr = &pcpRules{}
	if b.pcpBy == nil {
		b.pcpBy = map[string]*pcpRules{}
	}
	b.pcpBy[r.Name] = pr
	if b.e != nil {
		if b.pcp == nil {
			b.pcp = map[*pcpRules]ruleList{}
		}
		b.pcp[pr] = ruleList{key: key, list: []*rules.Rule{r}}
		return pr, "", nil
	}
	if b.env == nil {
		b.env = &rules.Env{Log: func(f, l string) { logRule(slog.Default(), f, l) }}
	}
	p := rules.NewProgram(b.env, r)
	p.Init()
	pr.prog.Store(p)
	return pr, "", nil
}
