package daemon

import (
	"strings"

	"github.com/openltm/openltm/grammar"
	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/rules/policy"
)

// A local traffic policy's life on BIG-IP (12.1 and later): it is created
// as a draft in a Drafts folder (`create ltm policy Drafts/p ...`), edited
// there, and published (`publish ltm policy Drafts/p`), which makes
// /Common/p, replacing the published policy of that name; only a
// published policy can be attached to a virtual server, and only a draft
// can be changed (`modify ltm policy p create-draft` makes a draft of a
// published one). `create ltm policy p legacy ...` creates a published
// policy at once, as scripts written for older versions do.

// policyCreateWords takes the `legacy` keyword and `copy-from POLICY` out
// of a create's words, and refuses a policy created outside a Drafts
// folder without legacy. copyFrom is the policy named, as written.
func policyCreateWords(at grammar.Node, name string, rest []grammar.Node) (out []grammar.Node, legacy bool, copyFrom *grammar.Word, err error) {
	out = make([]grammar.Node, 0, len(rest))
	for i := 0; i < len(rest); i++ {
		n := rest[i]
		w, ok := n.(*grammar.Word)
		switch {
		case !ok || valueFollows(rest, i): // a property's value (description legacy)
		case w.Text == "legacy":
			legacy = true
			continue
		case w.Text == "copy-from":
			if i+1 == len(rest) {
				return nil, false, nil, synErr(w, []string{"a policy name"}, "copy-from needs the policy to copy")
			}
			src, ok := rest[i+1].(*grammar.Word)
			if !ok {
				return nil, false, nil, synErr(rest[i+1], []string{"a policy name"}, "copy-from needs the policy to copy")
			}
			copyFrom = src
			i++
			continue
		}
		out = append(out, n)
	}
	if !legacy && !inDrafts(name) {
		base := name[strings.LastIndexByte(name, '/')+1:]
		return nil, false, nil, synErr(at, []string{"Drafts/" + base, "legacy"},
			"policy %s must be created as a draft (create ltm policy Drafts/%s ..., then publish ltm policy Drafts/%s) or published at once with the legacy keyword",
			name, base, base)
	}
	return out, legacy, copyFrom, nil
}

// policyCopy starts a new policy from the one copy-from names: its rules,
// strategy, requires, controls and description; the new policy's own
// words then change them.
func policyCopy(cfg *objects.Config, folder string, o *objects.Object, from *grammar.Word) error {
	src := cfg.Get(ltmPolicy, objects.FullPath(folder, from.Text))
	if src == nil {
		return objects.NotFound(ltmPolicy, objects.FullPath(folder, from.Text))
	}
	c := src.Clone()
	for k, v := range c.Props {
		if k != policyStatus.Name {
			o.Props[k] = v
		}
	}
	return nil
}

// valueFollows reports whether rest[i] is the value of the property named
// just before it.
func valueFollows(rest []grammar.Node, i int) bool {
	if i == 0 {
		return false
	}
	w, ok := rest[i-1].(*grammar.Word)
	if !ok {
		return false
	}
	p := ltmPolicy.Prop(w.Text)
	return p != nil && p.Type != objects.TFlag
}

// policyCreated sets a new policy's status (draft in a Drafts folder,
// legacy when created published) and its strategy, first-match unless
// given, which BIG-IP always lists.
func policyCreated(o *objects.Object, legacy bool) {
	switch {
	case inDrafts(o.Name):
		o.Props[policyStatus.Name] = &objects.Value{Str: "draft"}
	case legacy:
		o.Props[policyStatus.Name] = &objects.Value{Str: "legacy"}
	}
	if o.Props[policyStrategy.Name] == nil {
		o.Props[policyStrategy.Name] = &objects.Value{Str: policyStrategy.Default}
	}
	policyNeeds(o)
}

// policyNeeds adds to a policy's requires and controls what its rules
// need (policy.Needs), keeping what was written.
func policyNeeds(o *objects.Object) {
	req, ctl := policy.Needs(policyOf(o))
	add := func(p *objects.Prop, words []string) {
		var list []string
		have := map[string]bool{}
		if v := p.Get(o); v != nil {
			list = append(list, v.List...)
			for _, w := range v.List {
				have[w] = true
			}
		}
		n := len(list)
		for _, w := range words {
			if !have[w] {
				list = append(list, w)
			}
		}
		if len(list) > n {
			o.Props[p.Name] = &objects.Value{List: list}
		}
	}
	add(policyRequires, req)
	add(policyControls, ctl)
}

// publishedName is the policy a draft publishes to: the draft's name
// without its Drafts folder.
func publishedName(draft string) string {
	i := strings.LastIndexByte(draft, '/')
	return strings.TrimSuffix(draft[:i], "/Drafts") + draft[i:]
}

// draftName is the draft of a published policy.
func draftName(published string) string {
	i := strings.LastIndexByte(published, '/')
	return published[:i] + "/Drafts" + published[i:]
}

// policyCreateDraft handles `modify ltm policy NAME create-draft`, which
// makes a draft of a published policy. It reports whether the statement
// was that.
func policyCreateDraft(cfg *objects.Config, name string, rest []grammar.Node) (bool, error) {
	if len(rest) != 1 {
		return false, nil
	}
	w, ok := rest[0].(*grammar.Word)
	if !ok || w.Text != "create-draft" {
		return false, nil
	}
	old := cfg.Get(ltmPolicy, name)
	if old == nil {
		return true, objects.NotFound(ltmPolicy, name)
	}
	if policyIsDraft(old) {
		return true, synErr(w, nil, "policy %s is a draft already", name)
	}
	d := old.Clone()
	d.Name = draftName(name)
	if cfg.Get(ltmPolicy, d.Name) != nil {
		return true, objects.Exists(ltmPolicy, d.Name)
	}
	d.Props[policyStatus.Name] = &objects.Value{Str: "draft"}
	cfg.Put(d)
	return true, nil
}

// policyModifiable refuses a change of a published policy: only drafts
// are changed.
func policyModifiable(at grammar.Node, o *objects.Object) error {
	if o.Kind != ltmPolicy || policyIsDraft(o) {
		return nil
	}
	return synErr(at, []string{"create-draft"}, "policy %s is published and cannot be modified: modify ltm policy %s create-draft, change the draft %s, then publish ltm policy %s",
		o.Name, o.Name, draftName(o.Name), draftName(o.Name))
}

// publishPolicy publishes a draft: the draft goes, and the published
// policy of its name is made or replaced (the virtual servers using it
// take the new rules with the commit).
func publishPolicy(cfg *objects.Config, k *objects.Kind, at grammar.Node, name string, rest []grammar.Node) error {
	if k != ltmPolicy {
		return synErr(at, []string{"ltm policy"}, "only an ltm policy is published, not %s", k.Key())
	}
	if len(rest) > 0 {
		return synErr(rest[0], nil, "publish ltm policy takes the draft's name only")
	}
	d := cfg.Get(ltmPolicy, name)
	if d == nil {
		return objects.NotFound(ltmPolicy, name)
	}
	if !inDrafts(name) {
		return synErr(at, []string{draftName(name)}, "policy %s is not a draft: publish its draft, %s", name, draftName(name))
	}
	p := d.Clone()
	p.Name = publishedName(name)
	p.Props[policyStatus.Name] = &objects.Value{Str: "published"} // BIG-IP lists it
	cfg.Delete(d)
	if old := cfg.Get(ltmPolicy, p.Name); old != nil {
		cfg.Delete(old)
	}
	cfg.Put(p)
	return nil
}
