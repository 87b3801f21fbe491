package objects

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/openltm/openltm/grammar"
)

// RegionMemberKinds are the match kinds BIG-IP takes in a gtm region's
// region-members and on each side of a gtm topology record.
var RegionMemberKinds = []string{"subnet", "region", "datacenter", "pool", "continent", "country", "state", "isp", "geoip-isp"}

// regionMember reads one `[not] KIND VALUE` item from the start of nodes
// and returns its canonical name and how many words it took. Region,
// datacenter and pool values become full paths under folder, a subnet its
// masked prefix (an address alone is a host prefix), so one member typed
// two ways is one item.
func regionMember(folder string, nodes []grammar.Node) (string, int, error) {
	var ws []*grammar.Word
	for _, n := range nodes {
		w, ok := n.(*grammar.Word)
		if !ok || len(ws) == 3 || (len(ws) == 2 && ws[0].Text != "not") {
			break
		}
		ws = append(ws, w)
	}
	if len(ws) == 0 {
		return "", 0, synErr(nodes[0], []string{"[not] " + strings.Join(RegionMemberKinds, "|") + " VALUE"}, "a { } block where a region member was expected")
	}
	not := ws[0].Text == "not"
	kw := ws[0]
	if not {
		if len(ws) < 2 {
			return "", 0, synErr(ws[0], RegionMemberKinds, "%q needs a match kind and a value", "not")
		}
		kw = ws[1]
	}
	if !contains(RegionMemberKinds, kw.Text) {
		return "", 0, synErr(kw, RegionMemberKinds, "%q is not a region member kind", kw.Text)
	}
	used := 2
	if not {
		used = 3
	}
	if len(ws) < used {
		return "", 0, synErr(kw, []string{"a value"}, "%q needs a value", kw.Text)
	}
	vw := ws[used-1]
	v, err := RegionMemberValue(folder, kw.Text, vw.Text)
	if err != nil {
		return "", 0, synErr(vw, nil, "%v", err)
	}
	name := kw.Text + " " + grammar.Quote(v)
	if not {
		name = "not " + name
	}
	return name, used, nil
}

// RegionMemberValue canonicalises the value of one region member or
// topology side of the given kind: the masked prefix of a subnet, the full
// path of a region, datacenter or pool, other values as written.
func RegionMemberValue(folder, kind, v string) (string, error) {
	switch kind {
	case "subnet":
		p, err := netip.ParsePrefix(v)
		if err != nil {
			a, aerr := netip.ParseAddr(v)
			if aerr != nil {
				return "", fmt.Errorf("subnet %s is not an address/prefix (e.g. 10.0.0.0/8)", v)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		return p.Masked().String(), nil
	case "region", "datacenter", "pool":
		return FullPath(folder, v), nil
	}
	return v, nil
}

// MatchWords splits a region member's or a topology record's canonical
// name into its words, a quoted value (`state "US/New York"`) as one:
// the readers quote a value with spaces so that the name reads back as
// the record BIG-IP saved, and everything that takes the name apart
// again (the printer, the GSLB translation) must not split the value.
func MatchWords(name string) []string {
	if !strings.Contains(name, `"`) {
		return strings.Fields(name)
	}
	st, err := grammar.ParseStatement(name, grammar.Options{})
	if err != nil {
		return strings.Fields(name)
	}
	ws := make([]string, 0, len(st.Items))
	for _, n := range st.Items {
		if w, ok := n.(*grammar.Word); ok {
			ws = append(ws, w.Text)
		}
	}
	return ws
}

// TopologyName reads a gtm topology record's name from the start of words,
// `ldns: [not] KIND VALUE server: [not] KIND VALUE`, and returns it in
// canonical form (values as RegionMemberValue gives them) with the number
// of words it took: what follows (`score 100`) is the record's properties.
// bad is the index of the word an error is about.
func TopologyName(folder string, words []string) (name string, used, bad int, err error) {
	var out []string
	i := 0
	for _, side := range []string{"ldns:", "server:"} {
		if i >= len(words) || words[i] != side {
			return "", 0, min(i, len(words)-1), fmt.Errorf("a topology record is written ldns: [not] KIND VALUE server: [not] KIND VALUE; %s expected here", side)
		}
		out = append(out, side)
		i++
		if i < len(words) && words[i] == "not" {
			out = append(out, "not")
			i++
		}
		if i >= len(words) || !contains(RegionMemberKinds, words[i]) {
			return "", 0, min(i, len(words)-1), fmt.Errorf("%s needs one of %s", side, strings.Join(RegionMemberKinds, ", "))
		}
		if i+1 >= len(words) {
			return "", 0, i, fmt.Errorf("%s %s needs a value", side, words[i])
		}
		v, verr := RegionMemberValue(folder, words[i], words[i+1])
		if verr != nil {
			return "", 0, i + 1, verr
		}
		out = append(out, words[i], grammar.Quote(v))
		i += 2
	}
	return strings.Join(out, " "), i, 0, nil
}
