package daemon

import (
	"strings"

	"github.com/openltm/openltm/control"
	"github.com/openltm/openltm/objects"
)

// completeGTM completes what the schema alone cannot: a gtm topology
// record's several-word name and a region's `[not] KIND VALUE` members.
// ok is false when the words are not one of those.
func (s *Session) completeGTM(k *objects.Kind, verb string, after []string) ([]control.Suggestion, bool) {
	if k == gtmTopology {
		return s.completeTopology(verb, after), true
	}
	// Inside region-members add|delete|replace-all-with { ... }.
	for i := len(after) - 1; i >= 2; i-- {
		if after[i] == "}" {
			return nil, false
		}
		if after[i] == "{" && after[i-2] == "region-members" {
			return s.completeMatch(after[i+1:], true), true
		}
	}
	return nil, false
}

// completeTopology walks `ldns: [not] KIND VALUE server: [not] KIND VALUE`
// and offers what comes next, then the record's properties.
func (s *Session) completeTopology(verb string, after []string) []control.Suggestion {
	i := 0
	for _, side := range []string{"ldns:", "server:"} {
		if i >= len(after) {
			return []control.Suggestion{{Text: side, Description: side + " [not] KIND VALUE", Group: "Objects"}}
		}
		i++ // the side word
		j := i
		if j < len(after) && after[j] == "not" {
			j++
		}
		if j+2 > len(after) {
			return s.completeMatch(after[i:], false)
		}
		i = j + 2
	}
	if verb == "create" || verb == "modify" {
		return s.props(gtmTopology)
	}
	return nil
}

// completeMatch offers the next word of `[not] KIND VALUE ...` items:
// not and the kinds, or a kind's values (existing regions, datacenters and
// pools). many is true where items repeat (region members).
func (s *Session) completeMatch(ws []string, many bool) []control.Suggestion {
	for len(ws) > 0 {
		n := 2
		if ws[0] == "not" {
			n = 3
		}
		if len(ws) < n {
			break
		}
		if !many {
			return nil
		}
		ws = ws[n:]
	}
	if len(ws) == 0 || (len(ws) == 1 && ws[0] == "not") {
		m := map[string]string{}
		for _, kd := range objects.RegionMemberKinds {
			m[kd] = "match by " + kd
		}
		if len(ws) == 0 {
			m["not"] = "negate the next match"
		}
		return sugs("Values", m)
	}
	switch kind := ws[len(ws)-1]; kind {
	case "region":
		return s.names(gtmRegion)
	case "datacenter":
		return s.names(gtmDatacenter)
	case "pool":
		var out []control.Suggestion
		for _, pk := range s.e.schema.Kinds() {
			if strings.HasPrefix(pk.Key(), "gtm pool ") {
				out = append(out, s.names(pk)...)
			}
		}
		return out
	case "subnet":
		return []control.Suggestion{{Text: "", Description: "<address/prefix>", Group: "Values"}}
	case "continent":
		return sugs("Values", map[string]string{"AF": "Africa", "AN": "Antarctica", "AS": "Asia", "EU": "Europe", "NA": "North America", "OC": "Oceania", "SA": "South America"})
	}
	return []control.Suggestion{{Text: "", Description: "<" + ws[len(ws)-1] + ">", Group: "Values"}}
}

// runOnly are the runtime targets only `run` takes, left out of the
// other verbs' completion.
var runOnly = map[string]bool{"gtm trust-exchange": true}

// completeRun completes `run`: the operations a runtime answers (run gtm
// trust-exchange), then their options.
func (s *Session) completeRun(path []string) []control.Suggestion {
	for _, kw := range runtimeTargets {
		key := strings.Join(kw, " ")
		if s.e.runtimeFunc("run", key) == nil {
			continue
		}
		if hasPrefix(path, kw) {
			if key == "gtm trust-exchange" {
				return sugs("Options", map[string]string{"address": "the peer's address", "port": "the peer's iQuery port (default 4353)", "fingerprint": "the SHA-256 the peer shows in show gtm iquery, to confirm"})
			}
			return nil
		}
	}
	m := map[string]string{}
	for _, kw := range runtimeTargets {
		if s.e.runtimeFunc("run", strings.Join(kw, " ")) != nil && hasPrefix(kw, path) && len(kw) > len(path) {
			m[kw[len(path)]] = strings.Join(kw, " ")
		}
	}
	return sugs("Components", m)
}
