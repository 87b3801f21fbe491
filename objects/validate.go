package objects

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Ref is one reference from an object to another, found by walking the
// schema: what kinds it may name, and the name.
type Ref struct {
	Spec []string // kind keys or prefixes ("ltm monitor ")
	Name string
	Prop string
}

// Refs lists everything o references.
func Refs(o *Object) []Ref {
	if o.Kind == nil {
		return nil
	}
	var out []Ref
	walkRefs(o.Kind, o.Props, &out)
	for i := range out {
		if out[i].Prop == certKeyChainProp {
			out[i].Name = FullPath(refFolder(o.Name), out[i].Name)
		}
	}
	return out
}

// refFolder is the folder an object's relative references resolve in.
func refFolder(name string) string {
	if i := strings.LastIndexByte(name, '/'); i > 0 {
		return name[:i]
	}
	return "/Common"
}

func walkRefs(k *Kind, props map[string]*Value, out *[]Ref) {
	for _, p := range k.Props {
		v := props[p.Name]
		if v == nil || (p.Passive && !p.Checked) {
			continue
		}
		switch p.Type {
		case TRef:
			if v.Str != "none" && v.Str != "" {
				*out = append(*out, Ref{p.Ref, v.Str, p.Name})
			}
		case TMonitor:
			for _, n := range MonitorNames(v.Str) {
				*out = append(*out, Ref{p.Ref, n, p.Name})
			}
		case TList:
			if len(p.Ref) > 0 {
				for _, n := range v.List {
					if _, ok := NodeAddr(n); ok && p.Format == "ip" {
						continue // an address, not a name (a snatpool member)
					}
					*out = append(*out, Ref{p.Ref, n, p.Name})
				}
			}
		case TColl:
			for _, it := range v.Items {
				if p.Items == ItemRef && len(p.Ref) > 0 {
					*out = append(*out, Ref{typedRef(p, it.Props), it.Name, p.Name})
				}
				if p.Items == ItemMember {
					if node, _, err := SplitMember(it.Name); err == nil {
						*out = append(*out, Ref{[]string{"ltm node"}, node, p.Name})
					}
				}
				walkRefs(p.Sub, it.Props, out)
			}
		case TStruct:
			if v.Sub != nil {
				walkRefs(p.Sub, v.Sub.Props, out)
			}
		case TRaw:
			if p.Name == certKeyChainProp {
				*out = append(*out, certKeyChainRefs(v.Str)...)
			}
		}
	}
}

// typedRef narrows the kinds an item of a reference collection may name
// to the one its type property says, when the kinds differ by their last
// word and the item has a type (or its default): `disabled-contexts {
// s1 { type server } }` names a gtm server, so a missing one is reported
// as "The requested server ... was not found", not as the first kind's.
func typedRef(p *Prop, props map[string]*Value) []string {
	if len(p.Ref) < 2 || p.Sub == nil {
		return p.Ref
	}
	tp := p.Sub.Prop("type")
	if tp == nil || tp.Type != TEnum {
		return p.Ref
	}
	typ := tp.Default
	if v := props["type"]; v != nil && v.Str != "" {
		typ = v.Str
	}
	for i, r := range p.Ref {
		if strings.HasSuffix(r, " "+typ) {
			return p.Ref[i : i+1]
		}
	}
	return p.Ref
}

// Lookup resolves a reference: the exact path, else the same name in
// /Common (where shared objects live, as BIG-IP resolves them). Kinds are
// tried in the order spec names them (ltm monitors before gtm monitors
// when a spec says so).
func (c *Config) Lookup(s *Schema, spec []string, name string) *Object {
	for _, k := range s.refKinds(spec) {
		if o := c.Get(k, name); o != nil {
			return o
		}
	}
	for _, o := range c.unknown[name] {
		if len(o.Words) >= 2 && refMatches(spec, strings.Join(o.Words[:len(o.Words)-1], " ")) {
			return o
		}
	}
	if !strings.HasPrefix(name, "/Common/") {
		base := name[strings.LastIndexByte(name, '/')+1:]
		if base != name {
			return c.Lookup(s, spec, "/Common/"+base)
		}
	}
	return nil
}

func specLower(s *Schema, spec []string) *Kind {
	for _, sp := range spec {
		if k := s.Kind(sp); k != nil {
			return k
		}
		for _, k := range s.kinds {
			if refMatches([]string{sp}, k.Key()) {
				return k
			}
		}
	}
	return nil
}

// Complete fills what BIG-IP fills by itself: nodes for pool members named
// by address or written with an fqdn block, and each member's address. It
// works on a cloned config.
func (c *Config) Complete(s *Schema) error { return c.completeNodes(s, false) }

// completeNodes is Complete; tolerant skips members it cannot complete
// (their missing nodes are then reported as references to nothing).
func (c *Config) completeNodes(s *Schema, tolerant bool) error {
	nodeKind := s.Kind("ltm node")
	for _, pool := range c.Of(s.Kind("ltm pool")) {
		mv := pool.Props["members"]
		if mv == nil {
			continue
		}
		changed := false
		np := pool.Clone()
		for _, it := range np.Props["members"].Items {
			node, _, err := SplitMember(it.Name)
			if err != nil {
				if tolerant {
					continue
				}
				return Invalid("%v", err)
			}
			n := c.Get(nodeKind, node)
			fqdn := it.Props["fqdn"]
			if n == nil {
				// The node the member creates takes a node's name rules.
				if err := CheckName(nodeKind, node); err != nil {
					if tolerant {
						continue
					}
					return err
				}
				addr := ""
				props := map[string]*Value{}
				if a := it.Props["address"]; a != nil && a.Str != "" && a.Str != "any6" {
					addr = a.Str
				} else if ip, ok := NodeAddr(node); ok {
					addr = ip.String()
					if i := strings.IndexByte(node, '%'); i >= 0 {
						addr = node[strings.LastIndexByte(node, '/')+1:]
					}
				} else if fqdn != nil {
					// BIG-IP creates the FQDN node itself; it has no address
					// of its own (any6) until the name resolves.
					addr = "any6"
					props["fqdn"] = fqdn.clone()
				} else {
					if tolerant {
						continue
					}
					return NotFound(nodeKind, node)
				}
				props["address"] = &Value{Str: addr}
				n = &Object{Kind: nodeKind, Name: node, Props: props}
				c.Put(n)
			}
			want := n.Str("address")
			if want == "any6" || (want == "" && n.Props["fqdn"] != nil) {
				continue // an FQDN member's address is whatever its name resolves to
			}
			if a := it.Props["address"]; a == nil || a.Str != want {
				if a != nil && a.Str != "" && a.Str != want {
					if tolerant {
						continue
					}
					return Invalid("Pool member %s has address %s but its node %s has address %s", it.Name, a.Str, node, want)
				}
				it.Props["address"] = &Value{Str: want}
				changed = true
			}
		}
		if changed {
			c.Put(np)
		}
	}
	return nil
}

// Dangle is a reference to an object that does not exist.
type Dangle struct {
	From *Object
	Ref  Ref
}

// Key identifies the dangling reference across generations.
func (d Dangle) Key() string { return d.From.Key() + "\x00" + d.Ref.Prop + "\x00" + d.Ref.Name }

// Error is the BIG-IP error for it.
func (d Dangle) Error(s *Schema) error { return NotFound(specLower(s, d.Ref.Spec), d.Ref.Name) }

// Warning describes it for a load that keeps it.
func (d Dangle) Warning(s *Schema) string {
	lower := "object"
	if k := specLower(s, d.Ref.Spec); k != nil {
		lower = k.Lower
	}
	return fmt.Sprintf("%s %s refers to %s %s, which does not exist; kept, and not acted on until it does", d.From.Kind.Key(), d.From.Name, lower, d.Ref.Name)
}

// Dangling lists references that resolve to nothing (an F5 built-in of a
// kind openltm keeps resolves, as on a BIG-IP: KeptBuiltin). Loading a file that
// is part of a bigger configuration keeps them (with a warning); a tmsh
// command may not add new ones.
func (c *Config) Dangling(s *Schema) []Dangle {
	var out []Dangle
	for _, o := range c.Objects() {
		if o.Kind == nil {
			continue
		}
		for _, r := range Refs(o) {
			if c.Lookup(s, r.Spec, r.Name) == nil && KeptBuiltin(s, r) == "" {
				out = append(out, Dangle{From: o, Ref: r})
			}
		}
	}
	return out
}

// Validate checks a whole configuration apart from dangling references
// (see Dangling): objects are in partitions that exist, monitors and
// profiles do not default from themselves, and each kind's required
// properties are there. Names are checked where they are typed (Reader), so
// an object an earlier openltm stored under a name BIG-IP refuses can still
// be deleted.
func (c *Config) Validate(s *Schema) error {
	if err := c.CheckPartitions(s); err != nil {
		return err
	}
	for _, o := range c.Objects() {
		if o.Kind == nil {
			continue
		}
		for _, r := range Refs(o) {
			if r.Prop == "defaults-from" && r.Name == o.Name && !o.BuiltIn {
				return Invalid("A %s may not default from itself %q", o.Kind.Lower, o.Name)
			}
		}
		if err := checkRequired(o); err != nil {
			return err
		}
		if err := checkCookieEncryption(c, o); err != nil { // persist_cookie.go
			return err
		}
		if err := checkHashPayload(c, o); err != nil { // persist_hash.go
			return err
		}
		if err := checkNetList(c, s, o); err != nil { // netlists.go
			return err
		}
		if err := checkTMCInline(o); err != nil { // netlists.go
			return err
		}
		if err := checkAdapt(s, c, o); err != nil { // adapt.go
			return err
		}
		if err := checkAuth(c, s, o); err != nil { // kinds_auth.go
			return err
		}
		if err := checkOCSPParams(o); err != nil { // kinds_tlsold.go
			return err
		}
		if err := checkLSNPool(c, o); err != nil { // kinds_lsn.go
			return err
		}
		if err := checkLSNVirtual(c, s, o); err != nil { // kinds_lsn.go
			return err
		}
		if err := checkHAGroup(o); err != nil { // kinds_hagroup.go
			return err
		}
		if err := checkEviction(c, s, o); err != nil { // kinds_eviction.go
			return err
		}
		if err := checkTimerPolicy(o); err != nil { // kinds_timerpol.go
			return err
		}
		if err := checkRouteDomainParent(c, s, o); err != nil { // kinds_timerpol.go
			return err
		}
		if err := checkPacketFilter(c, o); err != nil { // kinds_pktfilter.go
			return err
		}
		if err := checkTrafficClass(o); err != nil { // kinds_trafficclass.go
			return err
		}
	}
	return nil
}

func checkRequired(o *Object) error {
	switch o.Kind.Key() {
	case "ltm virtual":
		if err := checkVirtualType(o); err != nil { // virtual_types.go
			return err
		}
		// No destination line is BIG-IP's default, 0.0.0.0:any (bigip.conf
		// leaves defaults out): valid, though it listens nowhere here.
		if sat := o.Props["source-address-translation"]; sat != nil && sat.Sub != nil {
			t, p := sat.Sub.Props["type"], sat.Sub.Props["pool"]
			if t != nil && t.Str == "snat" && (p == nil || p.Str == "none") {
				return Invalid("The virtual server (%s) uses source-address-translation type snat without a snatpool.", o.Name)
			}
			if t != nil && t.Str == "lsn" && (p == nil || p.Str == "none") {
				return Invalid("The virtual server (%s) uses source-address-translation type lsn without an LSN pool.", o.Name)
			}
		}
	case "ltm profile http":
		if v := o.Props["fallback-status-codes"]; v != nil {
			if _, err := ParseStatusCodes(v.List); err != nil {
				return Invalid("The HTTP profile (%s): %v.", o.Name, err)
			}
		}
		if v := o.Props["lws-separator"]; v != nil {
			if _, err := ParseLWSSeparator(v.Str); err != nil {
				return Invalid("The HTTP profile (%s): %v.", o.Name, err)
			}
		}
		if v := o.Props["lws-width"]; v != nil && (len(v.Str) > 6 || v.Str == "0" || strings.HasPrefix(v.Str, "-")) {
			return Invalid("The HTTP profile (%s): lws-width %s: columns from 1 to 999999.", o.Name, v.Str)
		}
	case "ltm profile mblb":
		for _, side := range []string{"ingress", "egress"} {
			hi, lo := o.Props[side+"-high"], o.Props[side+"-low"]
			if hi == nil || lo == nil {
				continue // against an inherited mark, the daemon checks
			}
			h, err1 := strconv.ParseInt(hi.Str, 10, 64)
			l, err2 := strconv.ParseInt(lo.Str, 10, 64)
			if err1 == nil && err2 == nil && l > h {
				return Invalid("The MBLB profile (%s): %s-low %d is above %s-high %d.", o.Name, side, l, side, h)
			}
		}
		// Counts BIG-IP keeps unsigned; min-conn at most one source
		// address's ports [M].
		for _, c := range []struct {
			name string
			max  uint64
		}{{"min-conn", 65535}, {"shutdown-timeout", 1<<32 - 1}, {"tag-ttl", 1<<32 - 1}} {
			if v := o.Props[c.name]; v != nil {
				if n, err := strconv.ParseUint(v.Str, 10, 64); err != nil || n > c.max {
					return Invalid("The MBLB profile (%s): %s %s: want a number from 0 to %d.", o.Name, c.name, v.Str, c.max)
				}
			}
		}
	case "ltm node":
		if o.Str("address") == "" && o.Props["fqdn"] == nil {
			return Invalid("The node (%s) has no address.", o.Name)
		}
	case "net self":
		if o.Str("address") == "" {
			return Invalid("The self IP (%s) has no address.", o.Name)
		}
	}
	return nil
}

// Referrers lists the objects that reference target, sorted by name.
func (c *Config) Referrers(s *Schema, target *Object) []*Object {
	var out []*Object
	for _, o := range c.objs {
		if o == target || o.Kind == nil {
			continue
		}
		for _, r := range Refs(o) {
			if !refMatches(r.Spec, target.Kind.Key()) {
				continue
			}
			if r.Name == target.Name || c.Lookup(s, r.Spec, r.Name) == target {
				out = append(out, o)
				break
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return lessObj(out[i], out[j]) })
	return out
}

// CheckDelete refuses to delete an object something still uses, or a
// built-in one.
func (c *Config) CheckDelete(s *Schema, o *Object) error {
	if o.BuiltIn || (o.Kind != nil && shipped(o)) {
		return Invalid("%s (%s) is a built-in object and cannot be deleted.", o.Kind.Title, o.Name)
	}
	by := c.Referrers(s, o)
	if o.Kind != nil && o.Kind.Key() == "ltm virtual-address" {
		// Virtual servers use their address by destination, not by name.
		if v := virtualOn(s, c, AddressKey(o)); v != nil {
			by = append(by, v)
		}
	}
	if o.Kind != nil && o.Kind.Key() == "ltm snat-translation" && len(by) == 0 {
		// Snatpools, snats and nats use their translation addresses by
		// address, not by name (snatxlats.go).
		if u := snatTranslationUser(s, c, o); u != nil {
			return snatXlatInUse(o, u)
		}
	}
	if len(by) == 0 {
		return nil
	}
	if o.Kind.Key() == "ltm snat-translation" {
		return snatXlatInUse(o, by[0]) // a snatpool naming it
	}
	if o.Kind.Key() == "ltm node" && by[0].Kind.Key() == "ltm pool" {
		return &ConfigError{Code: "01070110", Msg: fmt.Sprintf("Node address '%s' is referenced by a member of pool '%s'.", o.Name, by[0].Name)}
	}
	return InUse(o.Kind, o.Name, by[0])
}

// Category says what loading should do with a dangling reference: a
// reference to one of F5's built-in objects that openltm does not ship is
// kept with a warning (BIG-IP resolves it); any other is refused, as BIG-IP
// refuses it (01020036).
func (d Dangle) Category() Category {
	if IsF5Builtin(d.Ref.Spec, d.Ref.Name) {
		return NotActedOn
	}
	return Refused
}
