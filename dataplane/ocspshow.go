package dataplane

import (
	"sort"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/tlsprof"
)

// StapledOCSP is an OCSP answer a running client-ssl profile staples
// for one of its certificates (show ltm clientssl
// ocsp-stapling-responses), or one a running server-ssl profile checked a
// member's certificate by (show ltm serverssl ocsp-responses), with the
// virtual servers that serve the profile.
type StapledOCSP struct {
	Profile  string
	Virtuals []string
	tlsprof.OCSPResponse
}

// OCSPStapling lists the answers the client-ssl profiles of the running
// virtual servers staple, by profile and then in cert-key-chain order.
// It reads the shared answers only: no exchange is started.
func (p *Plane) OCSPStapling() []StapledOCSP {
	return p.ocspByProfile(func(tc *config.TLS, add func(string, *tlsprof.Built)) {
		for i, b := range tc.ClientBuilt {
			if i < len(tc.ClientProfiles) {
				add(tc.ClientProfiles[i], b)
			}
		}
	}, (*tlsprof.Built).OCSPResponses)
}

// OCSPMembers lists the answers the server-ssl profiles of the running
// virtual servers checked their members' certificates by, by profile and
// then by the certificate's subject. It reads the shared answers only.
func (p *Plane) OCSPMembers() []StapledOCSP {
	return p.ocspByProfile(func(tc *config.TLS, add func(string, *tlsprof.Built)) {
		if tc.Server != nil {
			add(tc.ServerProfile, tc.Server)
		}
	}, (*tlsprof.Built).MemberOCSPResponses)
}

// ocspByProfile gathers the profiles each running virtual's TLS names
// (profiles), under the plane's lock, then lists each profile's answers
// (answers) with the virtuals serving it.
func (p *Plane) ocspByProfile(profiles func(*config.TLS, func(string, *tlsprof.Built)), answers func(*tlsprof.Built) []tlsprof.OCSPResponse) []StapledOCSP {
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
		profiles(sn.Cfg.TLS, func(profile string, b *tlsprof.Built) {
			byProfile[profile] = append(byProfile[profile], use{name, b})
		})
	}
	p.mu.Unlock()
	names := make([]string, 0, len(byProfile))
	for n := range byProfile {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []StapledOCSP
	for _, n := range names {
		uses := byProfile[n]
		sort.Slice(uses, func(i, j int) bool { return uses[i].virtual < uses[j].virtual })
		var vs []string
		for _, u := range uses {
			vs = append(vs, u.virtual)
		}
		// Each virtual builds the profile anew; the answers are shared
		// (one cache entry per validator and certificate), so the
		// first virtual's list stands for all.
		for _, r := range answers(uses[0].b) {
			out = append(out, StapledOCSP{Profile: n, Virtuals: vs, OCSPResponse: r})
		}
	}
	return out
}
