package dataplane

import (
	"sort"

	"github.com/openltm/openltm/dataplane/tlsprof"
)

// StapledOCSP is an OCSP answer a running client-ssl profile staples
// for one of its certificates, with the virtual servers that serve the
// profile: show ltm clientssl ocsp-stapling-responses.
type StapledOCSP struct {
	Profile  string
	Virtuals []string
	tlsprof.OCSPResponse
}

// OCSPStapling lists the answers the client-ssl profiles of the running
// virtual servers staple, by profile and then in cert-key-chain order.
// It reads the shared answers only: no exchange is started.
func (p *Plane) OCSPStapling() []StapledOCSP {
	type use struct {
		virtual string
		b       *tlsprof.Built
	}
	byProfile := map[string][]use{}
	p.mu.Lock()
	for name, v := range p.virtuals {
		sn := v.Snap.Load()
		if sn == nil || sn.Cfg == nil || sn.Cfg.TLS == nil {
			continue
		}
		tc := sn.Cfg.TLS
		for i, b := range tc.ClientBuilt {
			if i < len(tc.ClientProfiles) {
				byProfile[tc.ClientProfiles[i]] = append(byProfile[tc.ClientProfiles[i]], use{name, b})
			}
		}
	}
	p.mu.Unlock()
	profiles := make([]string, 0, len(byProfile))
	for n := range byProfile {
		profiles = append(profiles, n)
	}
	sort.Strings(profiles)
	var out []StapledOCSP
	for _, n := range profiles {
		uses := byProfile[n]
		sort.Slice(uses, func(i, j int) bool { return uses[i].virtual < uses[j].virtual })
		var vs []string
		for _, u := range uses {
			vs = append(vs, u.virtual)
		}
		// Each virtual builds the profile anew; the answers are shared
		// (one cache entry per validator and certificate), so the
		// first virtual's list stands for all.
		for _, r := range uses[0].b.OCSPResponses() {
			out = append(out, StapledOCSP{Profile: n, Virtuals: vs, OCSPResponse: r})
		}
	}
	return out
}
