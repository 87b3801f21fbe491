package objects

import (
	"cmp"
	"path"
	"slices"
	"strings"
)

// DefaultTrafficGroup is the traffic group of the root folder, and so of
// every folder and inheriting virtual address below it that names none.
const DefaultTrafficGroup = "/Common/traffic-group-1"

// CompleteTrafficGroups writes the effective traffic group of every sys
// folder and ltm virtual-address whose inherited-traffic-group is true, as
// BIG-IP saves it: a folder takes its parent folder's (the partition's top
// folder, which has no object here, has traffic-group-1), and a virtual
// address its folder's. Why: the daemon floats a virtual address with
// its traffic group, so an inheriting address must follow its folder when
// the folder's traffic group changes, and tmsh users list the value in
// force. Setting traffic-group by itself on an inheriting object (the
// value changed to one inheritance does not give, inherited-traffic-group
// left true) stops the inheritance [M: as BIG-IP's GUI does when a
// traffic group is chosen; tmsh's behaviour is not documented]; a new folder created with a traffic-group
// and no inherited-traffic-group inherits nothing either. old is the
// configuration before the change (nil on a load).
func CompleteTrafficGroups(s *Schema, old, cfg *Config) {
	fk, ak := s.Kind("sys folder"), s.Kind("ltm virtual-address")
	if fk == nil || ak == nil {
		return
	}
	// One pass over the objects, as CompleteVirtualAddresses makes: a
	// commit of a big configuration pays this every time.
	var folders, inheriting []*Object
	for _, o := range cfg.objs {
		switch {
		case o.Kind == fk:
			folders = append(folders, o)
		case o.Kind == ak && o.Str("inherited-traffic-group") == "true":
			inheriting = append(inheriting, o)
		}
	}
	// Parents before their sub-folders: a folder's effective value is
	// read only once the folder itself is settled.
	slices.SortFunc(folders, func(a, b *Object) int {
		if c := cmp.Compare(strings.Count(a.Name, "/"), strings.Count(b.Name, "/")); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	memo := map[string]string{}
	var eff func(folder string) string
	eff = func(folder string) string {
		if tg, ok := memo[folder]; ok {
			return tg
		}
		tg := DefaultTrafficGroup
		if f := cfg.Get(fk, folder); f != nil {
			if cfg.EffectiveStr(f, "inherited-traffic-group") == "false" {
				if tg = f.Str("traffic-group"); tg == "" {
					tg = DefaultTrafficGroup
				}
			} else if parent := path.Dir(folder); parent != folder {
				tg = eff(parent)
			}
		}
		memo[folder] = tg
		return tg
	}
	// follow settles one inheriting object: a traffic group set by hand
	// (not the one inheritance gives: a peer's change already followed
	// is) ends its inheritance, else it takes from.
	follow := func(o *Object, def, from string) {
		if stop := explicitTrafficGroup(old, o.Kind, o, def); stop != nil {
			if !sameTG(o.Str("traffic-group"), from) {
				cfg.Put(stop)
				return
			}
		}
		if cfg.EffectiveStr(o, "inherited-traffic-group") != "true" {
			return
		}
		if o.Str("traffic-group") != from {
			o = o.Clone()
			o.Props["traffic-group"] = &Value{Str: from}
			cfg.Put(o)
		}
	}
	for _, f := range folders {
		follow(f, "true", eff(path.Dir(f.Name)))
	}
	for _, a := range inheriting {
		follow(a, "false", eff(path.Dir(a.Name)))
	}
}

// explicitTrafficGroup returns o with inherited-traffic-group false when
// its traffic group was set by hand: changed from old's while old
// inherited too, or, on a new folder (def "true", the folder's default),
// given with no inherited-traffic-group. nil when o inherits.
func explicitTrafficGroup(old *Config, k *Kind, o *Object, def string) *Object {
	inh := o.Str("inherited-traffic-group")
	if inh == "" {
		inh = def
	}
	if inh != "true" {
		return nil
	}
	var was *Object
	if old != nil {
		was = old.Get(k, o.Name)
	}
	tg := o.Str("traffic-group")
	switch {
	case was == nil:
		if o.Get("inherited-traffic-group") != nil || tg == "" {
			return nil
		}
	case was.Str("inherited-traffic-group") != "" && was.Str("inherited-traffic-group") != "true",
		was.Str("inherited-traffic-group") == "" && def != "true",
		sameTG(was.Str("traffic-group"), tg):
		return nil
	}
	o = o.Clone()
	o.Props["inherited-traffic-group"] = &Value{Str: "false"}
	return o
}

// sameTG compares traffic group names written with or without their
// folder (traffic-group-1 is /Common/traffic-group-1).
func sameTG(a, b string) bool {
	full := func(n string) string {
		if n != "" && !strings.HasPrefix(n, "/") {
			return "/Common/" + n
		}
		return n
	}
	return full(a) == full(b)
}
