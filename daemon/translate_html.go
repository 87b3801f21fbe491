package daemon

import (
	"fmt"
	"strings"

	"github.com/openltm/openltm/dataplane/htmlfilter"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/rules"
)

var (
	profileHTML   = schema.MustKind("ltm profile html")
	htmlSelection = profileHTML.MustProp("content-selection")
	htmlRuleList  = profileHTML.MustProp("rules")
	// htmlRuleKinds are the ltm html-rule kinds, by htmlfilter.Kind.
	htmlRuleKinds = func() []*objects.Kind {
		var ks []*objects.Kind
		for k := htmlfilter.CommentRaiseEvent; k <= htmlfilter.TagRemoveAttribute; k++ {
			ks = append(ks, schema.MustKind("ltm html-rule "+k.String()))
		}
		return ks
	}()
)

// htmlRule reads an html rule object of kind k.
func htmlRule(o *objects.Object, k htmlfilter.Kind) htmlfilter.Rule {
	block := func(name, field string) string {
		v := o.Props[name]
		if v == nil || v.Sub == nil || v.Sub.Props[field] == nil {
			return ""
		}
		if s := v.Sub.Props[field].Str; s != "none" {
			return s
		}
		return ""
	}
	return htmlfilter.Rule{Name: o.Name, Kind: k,
		TagName: block("match", "tag-name"), AttrName: block("match", "attribute-name"), AttrValue: block("match", "attribute-value"),
		Text: block("action", "text"), RemoveAttr: block("action", "attribute-name")}
}

// htmlOptions is the virtual's html profile as the HTTP engine applies
// it: nil without one.
func (t *translator) htmlOptions(o *objects.Object) (*mblb.HTMLOptions, error) {
	p := t.profile(o, profileHTML)
	if p == nil {
		return nil, nil
	}
	return t.htmlCompile(p)
}

// htmlCompile reads a profile's content types and rules, in the order
// its rules list names them.
func (t *translator) htmlCompile(p *objects.Object) (*mblb.HTMLOptions, error) {
	opts := &mblb.HTMLOptions{Profile: p.Name}
	if v := t.cfg.Effective(p, htmlSelection.Name); v != nil {
		for _, ty := range v.List {
			opts.Types = append(opts.Types, strings.ToLower(ty))
		}
	}
	var rs []htmlfilter.Rule
	if v := t.cfg.Effective(p, htmlRuleList.Name); v != nil {
		for _, name := range v.List {
			found := false
			for i, k := range htmlRuleKinds {
				if r := t.cfg.Get(k, name); r != nil {
					rs, found = append(rs, htmlRule(r, htmlfilter.Kind(i))), true
					break
				}
			}
			if !found {
				return nil, fmt.Errorf("profile %s: html rule %s does not exist", p.Name, name)
			}
		}
	}
	c, err := htmlfilter.Compile(rs)
	if err != nil {
		return nil, fmt.Errorf("profile %s: %v", p.Name, err)
	}
	opts.Rules = c
	return opts, nil
}

// htmlChecks refuses an html rule the profile could not apply (a tag
// rule without a tag-name, an append without text) when it is made, as
// BIG-IP does [M: its messages are ours], and checks every html profile
// whether or not a virtual uses it.
func (t *translator) htmlChecks() {
	for i, k := range htmlRuleKinds {
		for _, o := range t.cfg.Of(k) {
			if _, err := htmlfilter.Compile([]htmlfilter.Rule{htmlRule(o, htmlfilter.Kind(i))}); err != nil {
				t.refuse("%v", err)
			}
		}
	}
	for _, o := range t.cfg.Of(profileHTML) {
		if _, err := t.htmlCompile(o); err != nil {
			t.refuse("%v", err)
		}
	}
}

// htmlNeedsHTTP refuses an html profile on a virtual server without an
// http profile: it reads HTTP response bodies, and BIG-IP refuses the
// combination [M: its message is ours].
func (t *translator) htmlNeedsHTTP(o *objects.Object) bool { return t.needsHTTPProfile(o, profileHTML) }

// htmlNeeds refuses a rule list whose HTML_ events need an html profile
// the virtual server lacks (01070394 [M]).
func (t *translator) htmlNeeds(o *objects.Object, list []*rules.Rule) bool {
	return t.profileNeeds(o, list, profileHTML, "HTML", (*rules.Rule).HTMLNeeds) // translate_stream.go
}
