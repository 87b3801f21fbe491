package daemon

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/openltm/openltm/dataplane/xmlcbr"
	"github.com/openltm/openltm/grammar"
	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/rules"
)

var (
	profileXML     = schema.MustKind("ltm profile xml")
	xmlMultiple    = profileXML.MustProp("multiple-query-matches")
	xmlNamespaces  = profileXML.MustProp("namespace-mappings")
	xmlQueriesProp = profileXML.MustProp("xpath-queries")
	xmlAbort       = profileXML.MustProp("abort-on-error")
	xmlMaxBuffer   = profileXML.MustProp("max-buffer-size")
	// xmlMaxBufferLimit bounds max-buffer-size [M: BIG-IP's bound is
	// not documented]; the HTTP engine holds a message of its
	// max-message-size (1 MB) at most, and a longer body streams on
	// unparsed whatever the setting.
	xmlMaxBufferLimit = 16 << 20
)

// xmlProfileOf is the virtual's xml profile compiled, as the HTTP engine
// applies it: nil without one. Profiles compile once per translation
// however many virtuals share them.
func (t *translator) xmlProfileOf(o *objects.Object) (*xmlcbr.Profile, error) {
	p := t.profile(o, profileXML)
	if p == nil {
		return nil, nil
	}
	return t.xmlCompile(p)
}

// xmlCompile compiles an xml profile (once per translation).
func (t *translator) xmlCompile(p *objects.Object) (*xmlcbr.Profile, error) {
	if c, ok := t.xmlProfiles[p]; ok {
		return c.prof, c.err
	}
	prof, err := t.xmlBuild(p)
	if err != nil {
		err = fmt.Errorf("profile %s: %w", p.Name, err)
	}
	if t.xmlProfiles == nil {
		t.xmlProfiles = map[*objects.Object]xmlCompiled{}
	}
	t.xmlProfiles[p] = xmlCompiled{prof, err}
	return prof, err
}

type xmlCompiled struct {
	prof *xmlcbr.Profile
	err  error
}

func (t *translator) xmlBuild(p *objects.Object) (*xmlcbr.Profile, error) {
	ns, err := xmlNamespaceMap(t.cfg.EffectiveStr(p, xmlNamespaces.Name))
	if err != nil {
		return nil, err
	}
	var queries []string
	if v := t.cfg.Effective(p, xmlQueriesProp.Name); v != nil {
		queries = v.List
	}
	v := xmlMaxBuffer.Effective(t.cfg, p)
	size, err := strconv.Atoi(v)
	if err != nil || size < 1 || size > xmlMaxBufferLimit {
		return nil, fmt.Errorf("max-buffer-size %q is out of range: 1 to %d", v, xmlMaxBufferLimit)
	}
	prof, err := xmlcbr.Compile(p.Name, ns, queries, xmlMultiple.Effective(t.cfg, p) == "enabled")
	if err != nil {
		return nil, err
	}
	prof.AbortOnError = xmlAbort.Effective(t.cfg, p) == "enabled"
	prof.MaxBufferSize = size
	return prof, nil
}

// xmlNamespaceMap reads namespace-mappings: entries written
// `{ mapping-prefix P mapping-namespace URI }` (REST's
// namespaceMappings), or keyed by their prefix,
// `P { mapping-namespace URI }` [M: both forms are taken].
func xmlNamespaceMap(raw string) (map[string]string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" || raw == "none" || strings.Trim(raw, "{} \t\n") == "" {
		return nil, nil
	}
	bad := fmt.Errorf("namespace-mappings is not a block of { mapping-prefix P mapping-namespace URI } entries: %s", raw)
	f, err := grammar.Parse("namespace-mappings", []byte("x "+raw))
	if err != nil || len(f.Statements) != 1 || len(f.Statements[0].Items) != 2 {
		return nil, bad
	}
	b, ok := f.Statements[0].Items[1].(*grammar.Block)
	if !ok {
		return nil, bad
	}
	out := map[string]string{}
	add := func(prefix string, e *grammar.Block) error {
		uri := ""
		for i := 0; i+1 < len(e.Items); i += 2 {
			k, ok1 := e.Items[i].(*grammar.Word)
			v, ok2 := e.Items[i+1].(*grammar.Word)
			if !ok1 || !ok2 {
				return bad
			}
			switch k.Text {
			case "mapping-prefix":
				prefix = v.Text
			case "mapping-namespace":
				uri = v.Text
			default:
				return fmt.Errorf("namespace-mappings: unknown setting %q: an entry has mapping-prefix and mapping-namespace", k.Text)
			}
		}
		if len(e.Items)%2 != 0 || prefix == "" || uri == "" {
			return fmt.Errorf("namespace-mappings: an entry needs both mapping-prefix and mapping-namespace")
		}
		if !xmlNCName(prefix) {
			return fmt.Errorf("namespace-mappings: %q is not a namespace prefix", prefix)
		}
		if old, dup := out[prefix]; dup && old != uri {
			return fmt.Errorf("namespace-mappings: prefix %q is mapped twice", prefix)
		}
		out[prefix] = uri
		return nil
	}
	for i := 0; i < len(b.Items); i++ {
		switch it := b.Items[i].(type) {
		case *grammar.Block:
			if err := add("", it); err != nil {
				return nil, err
			}
		case *grammar.Word:
			if i+1 >= len(b.Items) {
				return nil, bad
			}
			e, ok := b.Items[i+1].(*grammar.Block)
			if !ok {
				return nil, bad
			}
			if err := add(it.Text, e); err != nil {
				return nil, err
			}
			i++
		default:
			return nil, bad
		}
	}
	return out, nil
}

// xmlNCName reports whether s is an XML namespace prefix (an NCName).
func xmlNCName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80:
		case i > 0 && (c == '-' || c == '.' || c >= '0' && c <= '9'):
		default:
			return false
		}
	}
	return s != ""
}

// xmlProfile checks an xml profile whether or not a virtual uses it:
// a query that does not compile, or a namespace-mappings block that does
// not read, refuses the commit (BIG-IP validates the queries when the
// profile is saved [M: its message is ours]).
func (t *translator) xmlProfile(o *objects.Object) {
	if _, err := t.xmlCompile(o); err != nil {
		msg := about(o, "%v", errorsUnwrapProfile(err))
		t.skipped = append(t.skipped, msg)
		t.refused = append(t.refused, msg)
	}
}

// errorsUnwrapProfile drops the "profile NAME: " xmlCompile puts before
// the message, which about says already.
func errorsUnwrapProfile(err error) string {
	s := err.Error()
	if i := strings.Index(s, ": "); strings.HasPrefix(s, "profile ") && i > 0 {
		return s[i+2:]
	}
	return s
}

// xmlNeedsHTTP refuses an xml profile on a virtual server without an
// http profile: it reads HTTP request bodies, and BIG-IP refuses the
// combination too [M: its message is ours].
func (t *translator) xmlNeedsHTTP(o *objects.Object) bool { return t.needsHTTPProfile(o, profileXML) }

// xmlNeeds refuses a rule list whose XML_CONTENT_BASED_ROUTING needs an
// xml profile the virtual server lacks (01070394 [M]).
func (t *translator) xmlNeeds(o *objects.Object, list []*rules.Rule) bool {
	return t.profileNeeds(o, list, profileXML, "XML", (*rules.Rule).XMLNeeds) // translate_stream.go
}
