package daemon

import "github.com/openltm/openltm/objects"

// warnKeptRefs adds, for tmsh create/modify, the warning a loaded file
// gives (objects.KeptRefs) for each reference of o, as it now is in cfg,
// to an object openltm keeps and does not act on. old is o before a modify
// (nil for create): a reference it already held was warned of when it was
// made and is not warned of again.
func (s *Session) warnKeptRefs(cfg *objects.Config, old, o *objects.Object) {
	kept := objects.KeptRefs(s.e.schema, cfg, o)
	if len(kept) == 0 {
		return
	}
	had := map[[2]string]bool{}
	if old != nil {
		for _, r := range objects.Refs(old) {
			had[refKey(r)] = true
		}
	}
	for _, k := range kept {
		if !had[refKey(k.Ref)] {
			s.warnings = append(s.warnings, k.Msg)
		}
	}
}

// refKey is r's property and name: a reference without its Spec (a
// slice), so that it can key a map.
func refKey(r objects.Ref) [2]string { return [2]string{r.Prop, r.Name} }
