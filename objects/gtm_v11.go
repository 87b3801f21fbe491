package objects

import (
	"slices"

	"github.com/openltm/openltm/grammar"
)

// BIG-IP 11's GTM had no record types: `gtm pool NAME` and `gtm wideip
// NAME` answered A (and AAAA) queries from one pool. BIG-IP 12.0 typed
// them (`gtm pool a`, `gtm wideip a`, ...) and its upgrade converts the
// v11 objects, so a bigip_gtm.conf written by 11.x still loads. openltm
// reads such statements in a file being loaded the same way: the object
// becomes the A-typed one, its properties renamed where 12 renamed them,
// and it is listed and saved back typed, as BIG-IP 12 saves it. tmsh
// create on the command line refuses the untyped form, as BIG-IP 12+
// does. Sources: BIG-IP 11's iControl REST fields of tm/gtm/pool
// (fallbackIpv4, fallbackIpv6, maxAddressReturned, members' order,
// ratio, limits, monitor, dependsOn) and tm/gtm/wideip
// (ipv6NoErrorResponse, ipv6NoErrorNegTtl, persistence, persistCidrIpv4/6,
// poolLbMode, pools' order and ratio, rules, ttlPersistence), whose tmsh
// names are the same words hyphenated; the tmsh reference of `gtm pool
// a` and `gtm wideip a`
// (https://clouddocs.f5.com/cli/tmsh-reference/latest/modules/gtm/).
// [M]: F5 does not publish its upgrade's mapping; openltm makes an A
// object only (an AAAA one is not created beside it), and drops the
// v11 properties with no A-typed counterpart with a warning.

// gtmTypeWords are the record types BIG-IP 12+ writes after `gtm pool`
// and `gtm wideip`.
var gtmTypeWords = []string{"a", "aaaa", "cname", "mx", "naptr", "srv", "svcb", "https"}

// isV11GTM reports whether a statement's words are BIG-IP 11's untyped
// `gtm pool NAME` or `gtm wideip NAME`, and which.
func isV11GTM(words []string) (what string, ok bool) {
	if len(words) != 3 || words[0] != "gtm" || (words[1] != "pool" && words[1] != "wideip") {
		return "", false
	}
	if slices.Contains(gtmTypeWords, words[2]) {
		return "", false
	}
	return words[1], true
}

// v11Rename maps a v11 property to its BIG-IP 12 A-typed name.
var v11Rename = map[string]map[string]string{
	"pool": {
		"fallback-ipv4":        "fallback-ip",
		"max-address-returned": "max-answers-returned",
	},
	"member": {
		"order": "member-order",
	},
}

// v11Dropped are v11 properties an A-typed object has no place for, with
// their default (a value that says nothing: dropped without a warning)
// and why they are dropped.
var v11Dropped = map[string]map[string]struct {
	dflt []string
	why  string
}{
	"pool": {
		"fallback-ipv6": {[]string{"any6", "::"}, "the IPv6 fallback belongs to a gtm pool aaaa; the converted pool is an A pool"},
	},
	"wideip": {
		"ipv6-no-error-response": {[]string{"disabled"}, "BIG-IP 12 has no such property; an AAAA query for a name that has only an A wide IP is answered NOERROR with no answer, as this property asked, but without an SOA"},
		"ipv6-no-error-neg-ttl":  {[]string{"0"}, "it was the TTL of the SOA in ipv6-no-error-response's answer, which the converted wide IP's NOERROR answer does not carry"},
	},
}

// v11Statement rewrites a v11 untyped gtm pool or wide IP statement as
// the A-typed one BIG-IP 12's upgrade makes of it, warning once that it
// was converted and for each property dropped. The rewritten nodes keep
// their positions, so errors still point into the file.
func (r *Reader) v11Statement(st *grammar.Statement, what string) *grammar.Statement {
	name := ""
	if len(st.Items) > 2 {
		if w, ok := st.Items[2].(*grammar.Word); ok {
			name = w.Text
		}
	}
	r.warn(st, "gtm %s %s is a BIG-IP 11 untyped %s: read as gtm %s a %s, as BIG-IP 12's upgrade converts it, and listed and saved back typed", what, name, lowerOf(what), what, name)
	out := *st
	out.Items = make([]grammar.Node, 0, len(st.Items)+1)
	for i, n := range st.Items {
		switch n := n.(type) {
		case *grammar.Word:
			out.Items = append(out.Items, n)
			if i == 1 {
				out.Items = append(out.Items, &grammar.Word{Pos: n.Pos, Text: "a", Raw: "a"})
			}
		case *grammar.Block:
			out.Items = append(out.Items, r.v11Block(n, what))
		default:
			out.Items = append(out.Items, n)
		}
	}
	return &out
}

func lowerOf(what string) string {
	if what == "wideip" {
		return "wide IP"
	}
	return "pool"
}

// v11Block rewrites the property block of a v11 pool, wide IP or pool
// member.
func (r *Reader) v11Block(b *grammar.Block, what string) *grammar.Block {
	out := *b
	out.Items = make([]grammar.Node, 0, len(b.Items))
	for i := 0; i < len(b.Items); i++ {
		w, ok := b.Items[i].(*grammar.Word)
		if !ok {
			out.Items = append(out.Items, b.Items[i])
			continue
		}
		if d, ok := v11Dropped[what][w.Text]; ok && i+1 < len(b.Items) {
			if v, ok := b.Items[i+1].(*grammar.Word); ok {
				if !slices.Contains(d.dflt, v.Text) {
					r.warn(w, "property %q of a BIG-IP 11 %s is dropped by the conversion to BIG-IP 12's typed form: %s", w.Text, lowerOf(what), d.why)
				}
				i++
				continue
			}
		}
		if to, ok := v11Rename[what][w.Text]; ok {
			out.Items = append(out.Items, &grammar.Word{Pos: w.Pos, Text: to, Raw: to})
			continue
		}
		out.Items = append(out.Items, w)
		// A pool's members { SERVER:VS { order N ... } }: rename inside
		// each member's block.
		if what == "pool" && w.Text == "members" && i+1 < len(b.Items) {
			if mb, ok := b.Items[i+1].(*grammar.Block); ok {
				m := *mb
				m.Items = make([]grammar.Node, len(mb.Items))
				for j, n := range mb.Items {
					if nb, ok := n.(*grammar.Block); ok {
						n = r.v11Block(nb, "member")
					}
					m.Items[j] = n
				}
				out.Items = append(out.Items, &m)
				i++
			}
		}
	}
	return &out
}
