package htmlfilter

import (
	"fmt"
	"strings"
)

// Kind is the type of an html rule, as its tmsh kind names it (ltm
// html-rule KIND).
type Kind int

// The html rule kinds, in the order of tmsh's list.
const (
	CommentRaiseEvent Kind = iota
	CommentRemove
	TagAppendHTML
	TagPrependHTML
	TagRaiseEvent
	TagRemove
	TagRemoveAttribute
)

var kindNames = [...]string{"comment-raise-event", "comment-remove", "tag-append-html", "tag-prepend-html", "tag-raise-event", "tag-remove", "tag-remove-attribute"}

// String is the kind's tmsh name.
func (k Kind) String() string { return kindNames[k] }

// ParseKind reads a kind's tmsh name, so that the translator need not
// keep a second list.
func ParseKind(s string) (Kind, bool) {
	for i, n := range kindNames {
		if n == s {
			return Kind(i), true
		}
	}
	return 0, false
}

// Rule is one html rule as the profile applies it.
type Rule struct {
	Name string
	Kind Kind
	// TagName, AttrName and AttrValue are the rule's match block (tag
	// rules only). TagName "/name" matches the end tag </name> [M]; an
	// empty AttrName matches any tag of the name, an empty AttrValue any
	// value of the attribute. Names match without regard to case,
	// values exactly.
	TagName, AttrName, AttrValue string
	// Text is the HTML tag-append-html and tag-prepend-html put after
	// or before the tag.
	Text string
	// RemoveAttr is the attribute tag-remove-attribute removes.
	RemoveAttr string
}

// Rules are a profile's rules ready to match, shared by every response
// of the virtual servers that use the profile.
type Rules struct {
	rules    []Rule
	tags     map[string][]int // lower-case tag name ("/x" for end tags) → rule indexes
	comments []int
	// TagEvents and CommentEvents say whether a tag-raise-event or
	// comment-raise-event rule is among them: the host then runs
	// HTML_TAG_MATCHED or HTML_COMMENT_MATCHED.
	TagEvents, CommentEvents bool
}

// Compile checks and indexes a profile's rules. A tag rule needs a
// tag-name, an append or prepend rule its text and tag-remove-attribute
// the attribute to remove, as BIG-IP requires [M: its messages are ours].
func Compile(rs []Rule) (*Rules, error) {
	c := &Rules{rules: rs, tags: map[string][]int{}}
	for i, r := range rs {
		switch r.Kind {
		case CommentRaiseEvent, CommentRemove:
			c.comments = append(c.comments, i)
			c.CommentEvents = c.CommentEvents || r.Kind == CommentRaiseEvent
			continue
		}
		name := strings.ToLower(strings.TrimSpace(r.TagName))
		if name == "" || name == "/" || name == "none" {
			return nil, fmt.Errorf("html rule %s (%s): match needs a tag-name", r.Name, r.Kind)
		}
		if strings.ContainsAny(name, " \t\r\n<>") {
			return nil, fmt.Errorf("html rule %s (%s): tag-name %q is not a tag name", r.Name, r.Kind, r.TagName)
		}
		switch r.Kind {
		case TagAppendHTML, TagPrependHTML:
			if r.Text == "" {
				return nil, fmt.Errorf("html rule %s (%s): action needs a text", r.Name, r.Kind)
			}
		case TagRemoveAttribute:
			if r.RemoveAttr == "" {
				return nil, fmt.Errorf("html rule %s (%s): action needs an attribute-name", r.Name, r.Kind)
			}
		case TagRaiseEvent:
			c.TagEvents = true
		}
		c.tags[name] = append(c.tags[name], i)
	}
	return c, nil
}

// Len is how many rules there are.
func (c *Rules) Len() int { return len(c.rules) }
