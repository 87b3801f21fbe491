package objects

import (
	"slices"
	"strconv"
	"strings"

	"github.com/openltm/openltm/grammar"
)

// Port lockdown: a self IP's `allow-service` says which protocols and
// ports it accepts connections on (none, all, default, or a list of
// PROTOCOL:PORT entries that may hold `default`), and the `net self-allow`
// singleton's `defaults` list is what `default` stands for. Both are read
// here, each entry checked at its line and column; the daemon acts on
// them where openltm serves on self IPs (daemon/selfallow.go).
//
// Sources: F5's tmsh reference of net self and net self-allow; K17333,
// "Overview of port lockdown behavior (12.x - 17.x)"
// (https://my.f5.com/manage/s/article/K17333): a self IP created with
// tmsh or the Configuration utility allows none; the defaults are
// BIG-IP's own list (SelfAllowDefaults).

// SelfAllowDefaults is the `net self-allow defaults` list a BIG-IP ships
// with (bigip_base.conf of BIG-IP 13 to 17, sorted as it lists them): the
// routing protocols, SNMP, SSH, DNS, HTTPS, iQuery and config sync on
// 4353, network failover on UDP 1026 and RIP. A configuration that does
// not set it gets this, as on BIG-IP.
const SelfAllowDefaults = "{ igmp:0 ospf:0 pim:0 tcp:161 tcp:22 tcp:4353 tcp:443 tcp:53 udp:1026 udp:161 udp:4353 udp:520 udp:53 }"

// selfAllowKind is `net self-allow`, a singleton holding the defaults.
func selfAllowKind() *Kind {
	return &Kind{Words: []string{"net", "self-allow"}, Title: "Self Allow", Lower: "self allow", Singleton: true,
		Source: tmshRef("net self-allow") + "; defaults: bigip_base.conf of BIG-IP 15.1 and K17333",
		Help:   "the protocols and ports a self IP whose allow-service is default accepts connections on",
		Props: []*Prop{
			help(&Prop{Name: "defaults", Type: TRaw, Default: SelfAllowDefaults, Format: "service-list"},
				"PROTOCOL:PORT entries, { tcp:22 udp:53 ospf:0 }: what allow-service default admits on every self IP"),
		}}
}

// actSelfAllow makes `net self`'s allow-service a checked, acted-on row
// (it was kept verbatim): none (BIG-IP's default for a new self IP),
// all, default, or { default tcp:22 ... }.
func actSelfAllow(ks []*Kind) {
	for _, k := range ks {
		if k.Key() != "net self" {
			continue
		}
		for i, p := range k.Props {
			if p.Name == "allow-service" {
				k.Props[i] = help(&Prop{Name: "allow-service", Type: TRaw, Default: "none", Format: "service",
					Source: tmshRef("net self") + "; default none: K17333"},
					"port lockdown: none, all, default (the net self-allow defaults) or { default tcp:4353 udp:53 ... }; openltm acts on it for iQuery (tcp:4353)")
			}
		}
	}
}

// ipProtocols are the protocol names a port lockdown entry may give,
// besides a number from 0 to 255 (BIG-IP's /etc/protocols names).
var ipProtocols = map[string]bool{
	"tcp": true, "udp": true, "sctp": true, "icmp": true, "icmpv6": true, "igmp": true, "ospf": true, "pim": true,
	"gre": true, "esp": true, "ah": true, "vrrp": true, "egp": true, "ipip": true, "eigrp": true, "rsvp": true,
}

// ServiceEntry reads one port lockdown entry, PROTOCOL:PORT, as BIG-IP
// lists them (tcp:4353, ospf:0); a protocol by name or number, a port
// from 0 to 65535 (0: every port, the only one for protocols without
// ports). ok is false when s is not one.
func ServiceEntry(s string) (proto string, port int, ok bool) {
	p, q, found := strings.Cut(s, ":")
	if !found || p == "" || q == "" {
		return "", 0, false
	}
	p = strings.ToLower(p)
	if !ipProtocols[p] {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n > 255 {
			return "", 0, false
		}
	}
	n, err := strconv.Atoi(q)
	if err != nil || n < 0 || n > 65535 {
		return "", 0, false
	}
	return p, n, true
}

// checkServiceValue checks an allow-service (list false: a word none,
// all or default, or a block of entries and default) or a self-allow
// defaults value (list true: a block of entries, or none) before it is
// kept, refusing the first bad word at its line and column.
func checkServiceValue(p *Prop, n grammar.Node) error {
	list := p.Format == "service-list"
	words := []string{"none", "all", "default", "{ tcp:22 udp:53 ... }"}
	if list {
		words = []string{"none", "{ tcp:22 udp:53 ... }"}
	}
	switch v := n.(type) {
	case *grammar.Word:
		if v.Text == "none" || (!list && (v.Text == "all" || v.Text == "default")) {
			return nil
		}
		return synErr(v, words, "%q is not a valid value for %q", v.Text, p.Name)
	case *grammar.Block:
		for _, it := range v.Items {
			w, ok := it.(*grammar.Word)
			if !ok {
				if b, ok := it.(*grammar.Block); ok && len(b.Items) == 0 {
					continue // old-style lists: entry { }
				}
				return synErr(it, nil, "a { } block inside the %q list", p.Name)
			}
			if !list && w.Text == "default" {
				continue
			}
			if _, _, ok := ServiceEntry(w.Text); !ok {
				return synErr(w, []string{"PROTOCOL:PORT, such as tcp:4353 or ospf:0"}, "%q is not a port lockdown entry: use PROTOCOL:PORT, a protocol (tcp, udp, ospf, ... or 0 to 255) and a port from 0 to 65535 (0: every port)", w.Text)
			}
		}
		return nil
	}
	return synErr(n, words, "%q needs a value", p.Name)
}

// ServiceAllowed reports whether a self IP whose allow-service is
// allow admits proto (tcp, udp, ...) on port, given the net self-allow
// defaults: none admits nothing, all everything, default the defaults,
// and a list its entries (an entry of port 0 admits every port of its
// protocol) and, when it holds default, the defaults too.
func ServiceAllowed(allow, defaults, proto string, port int) bool {
	allow = strings.TrimSpace(allow)
	switch allow {
	case "", "none":
		return false
	case "all":
		return true
	case "default":
		return entriesAllow(defaults, proto, port)
	}
	if entriesAllow(allow, proto, port) {
		return true
	}
	for _, w := range strings.Fields(strings.Trim(allow, "{}")) {
		if w == "default" {
			return entriesAllow(defaults, proto, port)
		}
	}
	return false
}

func entriesAllow(list, proto string, port int) bool {
	for _, w := range strings.Fields(strings.NewReplacer("{", " ", "}", " ").Replace(list)) {
		if p, n, ok := ServiceEntry(w); ok && p == proto && (n == 0 || n == port) {
			return true
		}
	}
	return false
}

// serviceValue reads an allow-service or self-allow defaults value: a
// word or block (checked, kept as written), or tmsh's add, delete and
// replace-all-with edits of the entries, applied to the current value
// (a word such as default becomes the first entry of the list, as
// BIG-IP keeps allow-service as a list).
func (r *Reader) serviceValue(p *Prop, item *Item, rest []grammar.Node) (int, error) {
	w, ok := rest[0].(*grammar.Word)
	if !ok || len(rest) < 2 || (w.Text != "add" && w.Text != "delete" && w.Text != "replace-all-with") {
		if err := checkServiceValue(p, rest[0]); err != nil {
			return 0, err
		}
		item.Props[p.Name] = &Value{Str: r.text(rest[0], rest[0])}
		return 1, nil
	}
	b, isBlock := rest[1].(*grammar.Block)
	if !isBlock {
		return 0, synErr(rest[1], []string{"{ tcp:22 udp:53 ... }"}, "%s needs a { } list", w.Text)
	}
	if err := checkServiceValue(p, b); err != nil {
		return 0, err
	}
	var cur []string
	if old := item.Props[p.Name]; old != nil {
		for _, x := range strings.Fields(strings.NewReplacer("{", " ", "}", " ").Replace(old.Str)) {
			if x != "none" && x != "all" || w.Text != "add" {
				cur = append(cur, x)
			}
		}
	}
	var edits []string
	for _, it := range b.Items {
		if x, ok := it.(*grammar.Word); ok {
			edits = append(edits, x.Text)
		}
	}
	switch w.Text {
	case "replace-all-with":
		cur = edits
	case "add":
		for _, x := range edits {
			if !slices.Contains(cur, x) {
				cur = append(cur, x)
			}
		}
	case "delete":
		for _, x := range edits {
			i := slices.Index(cur, x)
			if i < 0 {
				return 0, synErr(b, nil, "%q is not in the %q list", x, p.Name)
			}
			cur = slices.Delete(cur, i, i+1)
		}
	}
	text := "none"
	if len(cur) > 0 {
		text = "{ " + strings.Join(cur, " ") + " }"
	}
	item.Props[p.Name] = &Value{Str: text}
	return 2, nil
}
