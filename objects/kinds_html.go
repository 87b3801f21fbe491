package objects

// The html profile and its rules (dataplane/htmlfilter): the profile
// names html rules of seven kinds, each its own tmsh kind as BIG-IP has
// them (ltm html-rule tag-append-html NAME { match { … } action { … } }).

// htmlRuleKinds are the html rule kinds with their blocks: match for the
// tag rules, action where the rule takes one.
var htmlRuleKinds = []struct {
	typ    string
	match  bool
	action string // the action block's setting ("" none)
	help   string
}{
	{"comment-raise-event", false, "", "runs the rules' HTML_COMMENT_MATCHED for every comment"},
	{"comment-remove", false, "", "removes every comment"},
	{"tag-append-html", true, "text", "puts action text (HTML) after each tag the match names"},
	{"tag-prepend-html", true, "text", "puts action text (HTML) before each tag the match names"},
	{"tag-raise-event", true, "", "runs the rules' HTML_TAG_MATCHED for each tag the match names"},
	{"tag-remove", true, "", "removes each tag the match names (what it encloses stays)"},
	{"tag-remove-attribute", true, "attribute-name", "removes action attribute-name from each tag the match names"},
}

func htmlKinds() []*Kind {
	var ks []*Kind
	prof := actOn(profileKind("html", "html", `
content-detection ed disabled
content-selection list text/html,text/xhtml
rules reflist ltm+html-rule+
`), "F5 ltm profile html: the html rules named in rules applied to HTML response bodies (content-selection's types) as they stream",
		"content-selection", "rules")
	prof.row("content-selection").Inline = false
	prof.row("rules").Checked = true
	ks = append(ks, prof)
	for _, r := range htmlRuleKinds {
		key := "ltm html-rule " + r.typ
		k := pk(key, "HTML Rule", "", tmshRef(key), "")
		if r.match {
			k.Props = append(k.Props, block("match", "Match", "the tag the rule applies to: tag-name (/name for an end tag), and optionally attribute-name and attribute-value",
				help(str("tag-name", "none"), "the tag's name (any case); /name matches the end tag"),
				help(str("attribute-name", "none"), "only tags with this attribute"),
				help(str("attribute-value", "none"), "only tags whose attribute-name has this value")))
		}
		if r.action != "" {
			h := "the HTML to insert"
			if r.action == "attribute-name" {
				h = "the attribute to remove"
			}
			k.Props = append(k.Props, block("action", "Action", h, help(str(r.action, "none"), h)))
		}
		ks = append(ks, acting(k, "F5 "+key+": "+r.help, func(string) bool { return true }))
	}
	return ks
}
