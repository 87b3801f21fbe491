// Package objects is the schema of every configuration object openltm knows
// (one table per kind: properties, types, defaults, enums, references), the
// typed objects read from grammar trees against it, validation of a whole
// configuration, and the canonical bigip.conf text written back. One schema
// drives parsing, validation, storage, list output and completion, so adding
// a property is one table row.
//
// The schema also holds what F5 has and openltm does not act on: every tmsh
// kind by name (vocab_kinds.go), F5's built-in objects (vocab.go), and the
// property tables of the kinds openltm keeps without acting on
// (kinds_f5.go), each row with its source. Reading a text sorts what it
// finds by that vocabulary (findings.go, load.go): what BIG-IP refuses is
// refused with its position (category 1); what BIG-IP accepts and openltm
// does not act on is kept, listed and saved back with a warning
// (category 2), which a strict load refuses too.
package objects

import (
	"sort"
	"strings"
	"sync"
)

// Type says how a property's value is written and read.
type Type int

const (
	// TString is one word or quoted string.
	TString Type = iota
	// TInt is an unsigned integer, optionally bounded by Prop.Min/Max.
	TInt
	// TEnum is one word from Prop.Enum.
	TEnum
	// TRef names another object (Prop.Ref kinds) or "none".
	TRef
	// TList is { word word ... }; elements are references when Prop.Ref is
	// set, else plain words.
	TList
	// TColl is a collection of named items, each with sub-properties
	// (Prop.Sub): pool members, virtual profiles, data-group records.
	TColl
	// TStruct is a nested block of sub-properties (Prop.Sub), such as
	// source-address-translation { type automap }.
	TStruct
	// TFlag is a bare word that is its own value (enabled/disabled,
	// vlans-enabled/vlans-disabled); Prop.Enum lists the words, the first is
	// the default.
	TFlag
	// TMonitor is a monitor rule: `a`, `a and b`, or `min N of { a b }`.
	TMonitor
	// TRaw keeps the rest of the line verbatim (a word, or a block).
	TRaw
	// TTcl is a rule body: the whole block, byte for byte.
	TTcl
)

// ItemNames says how a collection normalises the names of its items.
type ItemNames int

const (
	// ItemPlain keeps item names as typed (data-group records).
	ItemPlain ItemNames = iota
	// ItemRef names objects of Prop.Ref kinds (profiles, persist, pools):
	// stored as full paths.
	ItemRef
	// ItemMember is `node:port` (pool members): stored as /Folder/node:port
	// with a numeric port.
	ItemMember
	// ItemGTMMember is `server:virtual-server` (gtm pool members).
	ItemGTMMember
	// ItemAddress is an IP address (gtm server addresses, gtm link
	// router-addresses): stored as netip prints it, so 10.0.0.01 and
	// 10.0.0.1 are one item.
	ItemAddress
	// ItemListAddress is an address list's entry, a host, range or prefix
	// (netlists.go), stored in canonical form.
	ItemListAddress
	// ItemListPort is a port list's entry, a port or range, stored as
	// numbers (http is 80).
	ItemListPort
	// ItemRegionMember is `[not] KIND VALUE` (gtm region-members): several
	// words make one item, stored as `not subnet 10.0.0.0/8` or `datacenter
	// /Common/dc1` (region, datacenter and pool values as full paths).
	ItemRegionMember
)

// Prop is one property row of a kind's schema.
type Prop struct {
	Name    string
	Type    Type
	Default string   // value shown by all-properties when unset; "" = none shown
	Enum    []string // TEnum and TFlag words
	Ref     []string // kind keys (or key prefixes ending in " ") a reference may name
	Sub     *Kind    // item / struct schema for TColl and TStruct
	// Quoted values are written in quotes whatever they hold, as BIG-IP
	// writes sys db values (value "disable").
	Quoted bool
	Items  ItemNames
	Min    int64
	Max    int64 // 0 = no upper bound
	// Passive marks an F5 property openltm accepts, keeps and saves back but
	// does not act on; loading one logs a warning naming it.
	Passive bool
	// Checked marks a passive reference that must still resolve: BIG-IP
	// refuses it dangling (a log destination's pool), unlike references to
	// files openltm does not keep (certificates, keys).
	Checked bool
	// ReadOnly properties are written by the system (creation-time, vs-index)
	// and refused in create/modify.
	ReadOnly bool
	// Secret marks a value BIG-IP keeps encrypted with the device's master
	// key (passwords, pass phrases): the configuration holds it sealed
	// ($M$...) and only the runtimes see it in clear (objects/vault).
	Secret bool
	// Pairs marks a TRaw property BIG-IP writes as repeated `name NAME
	// VALUE` lines (an external monitor's user-defined variables): each
	// pair read joins the { NAME VALUE ... } block it is kept as.
	Pairs bool
	// Inline marks a TList BIG-IP writes on one line, `values { a b }`
	// (a policy's controls, requires and condition values).
	Inline bool
	Help   string
	// Format checks a TString's words further: "ip" (an address, optionally
	// with %route-domain, or any, any6, none), "network" (default,
	// default-inet6 or address/prefix); on a TList, "ip" asks each
	// element to be an address (optionally in a folder, with
	// %route-domain).
	Format string
	// Source says where the row comes from (F5's tmsh reference page, a
	// device's REST output, bigip.conf files saved by BIG-IP, or "openltm
	// extension"). A row without one takes its kind's.
	Source string
}

// Kind is one object type, e.g. `ltm pool` or `ltm monitor http`.
type Kind struct {
	Words []string // ["ltm", "pool"]
	// Title is the word BIG-IP uses in "already exists" messages ("Pool");
	// Lower is used in "was not found" messages ("pool").
	Title, Lower string
	Help         string
	Singleton    bool // `sys global-settings`: no name
	// PlainNames kinds are named by a word that is not a path: sys db
	// keys, auth users, partitions, management addresses.
	PlainNames bool
	// Implicit kinds have an object for every name, as BIG-IP has a value
	// for every sys db key: tmsh modifies them without creating them.
	Implicit bool
	Parent   string // defaults-from parent of new objects, e.g. "/Common/http"
	Props    []*Prop
	// Passive marks a kind F5 has and openltm keeps, lists and saves back
	// but does not act on (sys ntp, ltm profile client-ssl, ...).
	Passive bool
	// secrets is set when a property (or an item's) is Secret.
	secrets bool
	// Source says where the kind's property table comes from; rows without
	// their own source take it.
	Source string
	// Ordered keeps Props in the order written instead of sorting them by
	// name: a policy's condition and action words print in F5's order
	// (operand, event, selector, ..., values), which is not alphabetical.
	Ordered bool
	byName  map[string]*Prop
	key     string // Words joined, computed once: lookups use it constantly
	rank    int    // place in save order (kindRank), computed once
}

// Key is the kind's words joined by spaces, e.g. "ltm monitor http".
func (k *Kind) Key() string {
	if k.key == "" && len(k.Words) > 0 {
		return strings.Join(k.Words, " ")
	}
	return k.key
}

// Prop finds a property by name or, for flags, by any of its words.
func (k *Kind) Prop(name string) *Prop {
	if k == nil {
		return nil
	}
	return k.byName[name]
}

func (k *Kind) index() {
	k.key = strings.Join(k.Words, " ")
	k.rank = kindRankOf(k)
	if !k.Ordered {
		sort.SliceStable(k.Props, func(i, j int) bool { return k.Props[i].Name < k.Props[j].Name })
	}
	k.byName = map[string]*Prop{}
	for _, p := range k.Props {
		if p.Source == "" && strings.HasPrefix(p.Help, "openltm extension") {
			p.Source = "openltm extension"
		}
		if p.Source == "" {
			p.Source = k.Source
		}
		if k.Passive {
			p.Passive = true
		}
		markSecret(k, p)
		k.byName[p.Name] = p
		if p.Type == TFlag {
			for _, w := range p.Enum {
				k.byName[w] = p
			}
		}
		if p.Sub != nil {
			if p.Sub.Lower == "" {
				p.Sub.Lower = strings.ToLower(p.Sub.Title)
			}
			if p.Sub.Source == "" {
				p.Sub.Source = p.Source
			}
			p.Sub.Passive = p.Sub.Passive || k.Passive
			p.Sub.index()
		}
		k.secrets = k.secrets || p.Secret || p.Sub != nil && p.Sub.secrets
	}
}

// Schema is the registry of kinds.
type Schema struct {
	kinds []*Kind
	byKey map[string]*Kind
	// refs caches, per reference spec, the kinds it may name, in the
	// spec's order: references are resolved on every commit.
	refs sync.Map // string -> []*Kind
}

// refKinds lists the kinds a reference spec may name: for each entry in
// turn, the kind it names or the kinds its prefix matches, by key.
func (s *Schema) refKinds(spec []string) []*Kind {
	key := strings.Join(spec, "\x00")
	if ks, ok := s.refs.Load(key); ok {
		return ks.([]*Kind)
	}
	var ks []*Kind
	seen := map[*Kind]bool{}
	for _, sp := range spec {
		for _, k := range s.kinds {
			if !seen[k] && refMatches([]string{sp}, k.Key()) {
				seen[k] = true
				ks = append(ks, k)
			}
		}
	}
	s.refs.Store(key, ks)
	return ks
}

// Kinds returns every kind, sorted by key.
func (s *Schema) Kinds() []*Kind { return s.kinds }

// Kind looks a kind up by its key ("ltm pool").
func (s *Schema) Kind(key string) *Kind { return s.byKey[key] }

// Match finds the longest kind whose words prefix ws, returning it and how
// many words it used.
func (s *Schema) Match(ws []string) (*Kind, int) {
	for n := len(ws); n > 0; n-- {
		if k := s.byKey[strings.Join(ws[:n], " ")]; k != nil {
			return k, n
		}
	}
	return nil, 0
}

// Children lists the words that may follow the given prefix of kind words
// (for completion and module navigation), with whether each completes a kind.
func (s *Schema) Children(prefix []string) map[string]bool {
	out := map[string]bool{}
	for _, k := range s.kinds {
		if len(k.Words) <= len(prefix) {
			continue
		}
		ok := true
		for i, w := range prefix {
			if k.Words[i] != w {
				ok = false
				break
			}
		}
		if ok {
			w := k.Words[len(prefix)]
			out[w] = out[w] || len(k.Words) == len(prefix)+1
		}
	}
	return out
}

// IsModulePath reports whether ws names a module or sub-module level (ltm,
// ltm monitor) rather than a kind or nothing.
func (s *Schema) IsModulePath(ws []string) bool {
	return len(s.Children(ws)) > 0
}

func newSchema(kinds ...*Kind) *Schema {
	s := &Schema{byKey: map[string]*Kind{}}
	for _, k := range kinds {
		k.index()
		if k.Lower == "" {
			k.Lower = strings.ToLower(k.Title)
		}
		s.kinds = append(s.kinds, k)
		s.byKey[k.Key()] = k
	}
	sort.Slice(s.kinds, func(i, j int) bool { return s.kinds[i].Key() < s.kinds[j].Key() })
	return s
}

// Default is the schema of everything openltm knows.
var Default = newSchema(allKinds()...)

func allKinds() []*Kind {
	var ks []*Kind
	ks = append(ks, ltmKinds()...)
	ks = append(ks, policyKind())
	ks = append(ks, gtmKinds()...)
	ks = append(ks, netSysKinds()...)
	ks = append(ks, sflowKinds()...)       // kinds_sflow.go
	ks = append(ks, ltmGlobalKinds()...)   // kinds_ltmglobals.go
	ks = append(ks, netListKinds()...)     // netlists.go
	ks = append(ks, bwcKinds()...)         // kinds_bwc.go
	ks = append(ks, rateShapingKinds()...) // kinds_rateshaping.go
	ks = append(ks, lsnKinds()...)         // kinds_lsn.go
	ks = append(ks, ilxKinds()...)         // kinds_ilx.go
	ks = append(ks, fileLogKinds()...)
	describeModeled(ks)
	ks = append(ks, f5Kinds()...)
	ks = append(ks, authKinds()...) // kinds_auth.go
	ks = append(ks, gtmMonitorKinds()...)
	ks = append(ks, htmlKinds()...) // kinds_html.go
	ks = append(ks, mrfKinds()...)  // kinds_mrf.go
	ks = append(ks, mrfSIPKinds()...)
	ks = append(ks, mrfDiameterKinds()...)
	ks = append(ks, mrfMQTTKinds()...)
	ks = append(ks, sslFileKinds()...)
	ks = append(ks, tlsOldKinds()...) // kinds_tlsold.go
	ks = append(ks, packetFilterKinds()...)
	ks = append(ks, radiusAAAKind())  // kinds_aaa.go
	ks = append(ks, scriptKinds()...) // kinds_script.go
	ks = append(ks, haGroupKind())    // kinds_hagroup.go
	ks = append(ks, evictionKind())   // kinds_eviction.go
	actSocketRows(ks)                 // kinds_tcpopts.go
	// kinds_timerpol.go: net timer-policy and net service-policy.
	ks = append(ks, timerPolicyKinds()...)
	// kinds_selfallow.go, kinds_trafficclass.go: net self-allow with
	// net self's allow-service, ltm traffic-class with a virtual's
	// traffic-classes, gtm global-settings metrics-exclusions.
	ks = append(ks, selfAllowKind(), trafficClassKind(), metricsExclusionsKind())
	actSelfAllow(ks)
	actTrafficClasses(ks)
	return ks
}

// refMatches reports whether kind key k satisfies the reference spec list.
func refMatches(spec []string, k string) bool {
	for _, s := range spec {
		if s == k || (strings.HasSuffix(s, " ") && strings.HasPrefix(k, s)) {
			return true
		}
	}
	return false
}

// helpers for the kind tables

func str(name, def string) *Prop { return &Prop{Name: name, Type: TString, Default: def} }
func num(name, def string) *Prop { return &Prop{Name: name, Type: TInt, Default: def} }
func enum(name string, def string, vals ...string) *Prop {
	return &Prop{Name: name, Type: TEnum, Default: def, Enum: vals}
}
func ref(name string, kinds ...string) *Prop {
	return &Prop{Name: name, Type: TRef, Default: "none", Ref: kinds}
}
func passive(p *Prop) *Prop { p.Passive = true; return p }
func ro(p *Prop) *Prop      { p.ReadOnly = true; p.Passive = true; return p }
func raw(name string) *Prop { return &Prop{Name: name, Type: TRaw, Passive: true} }

// bare is a flag that is present or absent (ip-forward, internal): a word
// with no value and no opposite word.
func bare(word string) *Prop {
	return &Prop{Name: word, Type: TFlag, Enum: []string{"", word}, Passive: true}
}

// refDefault is a reference whose default names an object (a built-in)
// rather than none.
func refDefault(name, def string, kinds ...string) *Prop {
	p := ref(name, kinds...)
	p.Default = def
	return p
}

func help(p *Prop, h string) *Prop {
	p.Help = h
	return p
}

func joinWords(ws []string) string { return strings.Join(ws, " ") }
