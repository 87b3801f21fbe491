package objects

import (
	"net/netip"
	"sort"
	"strings"
)

// CompleteSNATTranslations keeps an ltm snat-translation object for
// every translation address, as BIG-IP does: a snatpool's members, a
// snat's translation and a nat's translation-address that no
// snat-translation stands for yet get one, named for the address in the
// user's partition (`ltm snat-translation /Common/10.1.1.1 { address
// 10.1.1.1 traffic-group /Common/traffic-group-1 }`, as BIG-IP writes
// it). Why: tmsh users list the translation addresses BIG-IP made for
// them and modify their settings (connection-limit, idle timeouts,
// enabled), and a saved configuration holds them. Taking away the last
// user leaves the object [M: as the cleanup scripts written for BIG-IP
// imply, which delete a snatpool's translations after it; not verified
// on a device]. A snat-translation created by name alone gets its
// address written, as a virtual-address does. Deleting one a user
// still names is refused by CheckDelete (snatTranslationUser).
func CompleteSNATTranslations(s *Schema, cfg *Config) {
	xk := s.Kind("ltm snat-translation")
	if xk == nil {
		return
	}
	users, xlats := snatTranslationUsers(s, cfg)
	if len(users) == 0 && len(xlats) == 0 {
		return
	}
	have := map[string]bool{}
	for _, x := range xlats {
		if x.Str("address") == "" {
			if a := lastPart(x.Name); isAddr(a) {
				x = x.Clone()
				if x.Props == nil {
					x.Props = map[string]*Value{}
				}
				x.Props["address"] = &Value{Str: a}
				cfg.Put(x)
			}
		}
		have[snatXlatKey(x)] = true
	}
	for _, u := range users {
		if have[u.key] || cfg.Get(xk, u.name) != nil || CheckName(xk, u.name) != nil {
			continue
		}
		have[u.key] = true
		cfg.Put(&Object{Kind: xk, Name: u.name, Props: map[string]*Value{
			"address": {Str: lastPart(u.name)}, "traffic-group": {Str: DefaultTrafficGroup},
		}})
	}
}

// snatUser is one use of a translation address: the key its
// snat-translation has (snatXlatKey), the name BIG-IP gives the object
// it makes for it, and the object using it.
type snatUser struct {
	key, name string
	by        *Object
}

// snatTranslationUsers lists every use of a translation address (the
// members of each ltm snatpool, each ltm snat's translation and each
// ltm nat's translation-address; by the user's name) and the ltm
// snat-translation objects, in one pass over the objects: a commit of a
// big configuration pays this every time.
func snatTranslationUsers(s *Schema, cfg *Config) (users []snatUser, xlats []*Object) {
	xk, pk, sk, nk := s.Kind("ltm snat-translation"), s.Kind("ltm snatpool"), s.Kind("ltm snat"), s.Kind("ltm nat")
	add := func(by *Object, addr string) {
		addr = strings.TrimSpace(addr)
		if addr == "" || addr == "none" {
			return
		}
		name := addr
		if !strings.HasPrefix(name, "/") {
			name = "/" + Partition(by.Name) + "/" + addr
		}
		if !isAddr(lastPart(name)) {
			return
		}
		users = append(users, snatUser{key: Partition(name) + " " + canonAddr(lastPart(name)), name: name, by: by})
	}
	for _, o := range cfg.objs {
		switch {
		case o.Kind == nil:
		case o.Kind == xk:
			xlats = append(xlats, o)
		case o.Kind == pk:
			if v := o.Props["members"]; v != nil {
				for _, m := range v.List {
					add(o, m)
				}
			}
		case o.Kind == sk:
			add(o, o.Str("translation"))
		case o.Kind == nk:
			add(o, o.Str("translation-address"))
		}
	}
	sort.SliceStable(users, func(i, j int) bool { return lessObj(users[i].by, users[j].by) })
	return users, xlats
}

// snatTranslationUser is the first object that uses the translation
// address of the snat-translation x, or nil.
func snatTranslationUser(s *Schema, cfg *Config, x *Object) *Object {
	key := snatXlatKey(x)
	users, _ := snatTranslationUsers(s, cfg)
	for _, u := range users {
		if u.key == key {
			return u.by
		}
	}
	return nil
}

// snatXlatInUse is the refusal to delete a snat-translation that by
// still uses [M: "is still referenced by a snat pool" is BIG-IP's
// phrase, which client libraries match on; the code and the rest of
// the words are ours].
func snatXlatInUse(x, by *Object) error {
	what := map[string]string{"ltm snatpool": "a snat pool", "ltm snat": "a snat", "ltm nat": "a nat"}[by.Kind.Key()]
	return Invalid("SNAT translation address (%s) is still referenced by %s (%s).", x.Name, what, by.Name)
}

// snatXlatKey is a snat-translation's partition and address (its
// address property, else its name's last part), written one way.
func snatXlatKey(x *Object) string {
	a := x.Str("address")
	if a == "" {
		a = lastPart(x.Name)
	}
	return Partition(x.Name) + " " + canonAddr(a)
}

func lastPart(name string) string { return name[strings.LastIndexByte(name, '/')+1:] }

// isAddr: a is an address, with a route domain or not (10.1.1.1%2).
func isAddr(a string) bool {
	_, err := netip.ParseAddr(strings.SplitN(a, "%", 2)[0])
	return err == nil
}

// canonAddr writes an address one way (::0:1 as ::1), its route
// domain kept; anything else as it is.
func canonAddr(a string) string {
	base, rd, _ := strings.Cut(a, "%")
	ip, err := netip.ParseAddr(base)
	if err != nil {
		return a
	}
	if rd != "" {
		return ip.String() + "%" + rd
	}
	return ip.String()
}
