package rules

import (
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/openltm/openltm/rules/tcl"
)

// PersistMethod is the persistence type a persist command names.
type PersistMethod uint8

// The persist methods the engine understands.
const (
	PersistNone       PersistMethod = iota // persist none
	PersistSourceAddr                      // source_addr (simple, sticky)
	PersistUniversal                       // uie, universal
	PersistHash                            // hash: a key like uie's, in records of its own mode
	PersistDestAddr                        // dest_addr: the address the client connected to
	PersistCookie                          // cookie: the http profile's cookie persistence, as Persist.Cookie says
	PersistSIP                             // SIP::persist: a key in the sip (sip_info) records
)

// CookieMethod is the method word of `persist cookie`.
type CookieMethod uint8

// The methods of `persist cookie`.
const (
	CookieProfile CookieMethod = iota // `persist cookie`: the cookie profile's settings
	CookieInsert                      // insert ?name? ?expiration?
	CookieRewrite                     // rewrite ?name? ?expiration?
	CookiePassive                     // passive ?name?
	CookieHash                        // hash name ?{offset ?length?}? ?timeout?
)

// PersistCookieArgs are `persist cookie`'s arguments; what they leave out
// comes from the virtual's cookie persistence profile.
type PersistCookieArgs struct {
	Method CookieMethod
	// Name is the cookie's name; "" keeps the profile's.
	Name string
	// Expiration is insert's and rewrite's cookie lifetime (0: a session
	// cookie); negative when the rule gave none.
	Expiration time.Duration
	// HashOffset and HashLength select the part of the cookie's value
	// the hash method keys on (HashLength 0: the rest).
	HashOffset, HashLength int
}

// Persist is one persist command's arguments, passed by value.
type Persist struct {
	Method PersistMethod
	// Key is the uie or hash key; for source_addr and dest_addr in
	// add/lookup/delete it is the address written in the rule ("" in
	// `persist source_addr` and `persist dest_addr`: the client's address,
	// the address it connected to).
	Key string
	// Mask is source_addr's and dest_addr's mask; the zero Addr keeps the whole address.
	Mask netip.Addr
	// Timeout is the record's timeout; negative when the rule gave none
	// (the profile's applies).
	Timeout time.Duration
	// AnyVirtual, AnyService and AnyPool come from the key list form
	// `{key any virtual|service|pool [pool name]}`: the lookup reaches
	// records of other virtuals, services or pools.
	AnyVirtual, AnyService, AnyPool bool
	// Pool scopes add/lookup/delete to a pool other than the flow's.
	Pool string
	// Cookie is `persist cookie`'s arguments (Method PersistCookie);
	// the hash method's record timeout is Timeout.
	Cookie PersistCookieArgs
}

// PersistTarget is what a persistence record points at.
type PersistTarget struct {
	Pool   string
	Member netip.AddrPort
}

// PersistConn is the part of a connection the persist command needs: the
// persistence table. It is optional (checked with a type assertion), so
// Conn implementations without persistence keep compiling; on them persist
// fails with a Tcl error.
type PersistConn interface {
	// Persist sets what the connection persists on (persist uie,
	// persist source_addr, persist none).
	Persist(p Persist) error
	// PersistAdd makes a record for the key pointing at the connection's
	// selected member.
	PersistAdd(p Persist) error
	// PersistLookup finds the record for the key.
	PersistLookup(p Persist) (PersistTarget, bool, error)
	// PersistDelete removes the record for the key.
	PersistDelete(p Persist) error
}

const persistUsage = "persist none | source_addr|dest_addr ?mask? ?timeout? | uie|hash key ?timeout? | cookie ?insert|rewrite ?name? ?expiration?? | cookie passive ?name? | cookie hash name ?{offset ?length?}? ?timeout? | add|lookup|delete source_addr|dest_addr|uie|hash key ..."

// persistMethod reads a mode word: supported, or an error naming it.
func persistMethod(w string) (PersistMethod, error) {
	switch w {
	case "source_addr", "simple", "sticky":
		return PersistSourceAddr, nil
	case "uie", "universal":
		return PersistUniversal, nil
	case "hash":
		return PersistHash, nil
	case "dest_addr":
		return PersistDestAddr, nil
	case "cookie":
		return PersistCookie, nil
	case "ssl", "msrdp", "carp", "sip", "host":
		return 0, tcl.Errorf("persist %s is not supported (supported: none, source_addr, dest_addr, uie, hash, cookie)", w)
	}
	return 0, tcl.Errorf("bad persist mode %q: %s", w, persistUsage)
}

func persistTimeout(v tcl.Value) (time.Duration, error) {
	n, err := v.Int64()
	if err != nil || n < 0 {
		return 0, tcl.Errorf("bad persist timeout %q: expected seconds", v.String())
	}
	return time.Duration(n) * time.Second, nil
}

// persistKey reads a key word, in plain form or the list form
// `{value any virtual|service|pool [pool name]}`.
func persistKey(v tcl.Value, p *Persist) error {
	l, err := tcl.AsList(v)
	if err != nil || len(l) < 3 || l[1].String() != "any" {
		p.Key = v.String()
		return nil
	}
	p.Key = l[0].String()
	switch l[2].String() {
	case "virtual":
		p.AnyVirtual = true
	case "service":
		p.AnyService = true
	case "pool":
		p.AnyPool = true
	default:
		return tcl.Errorf("bad persist key scope %q: expected any virtual, any service or any pool", l[2].String())
	}
	if len(l) == 5 && l[3].String() == "pool" {
		p.Pool = l[4].String()
	} else if len(l) != 3 {
		return tcl.Errorf("bad persist key %q: expected {key any virtual|service|pool ?pool name?}", v.String())
	}
	return nil
}

func cmdPersist(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	_, c, err := sess(in, "persist")
	if err != nil {
		return tcl.Empty, err
	}
	if gc, ok := c.(GTMPersistConn); ok {
		if _, ltm := c.(PersistConn); !ltm {
			return gtmPersist(gc, args) // commands_gtm.go
		}
	}
	if len(args) < 2 {
		return tcl.Empty, tcl.WrongArgs(persistUsage)
	}
	pc, ok := c.(PersistConn)
	if !ok {
		return tcl.Empty, tcl.Errorf("persist: this connection has no persistence table")
	}
	p := Persist{Timeout: -1}
	a := args[2:]
	switch op := args[1].String(); op {
	case "none":
		if len(a) != 0 {
			return tcl.Empty, tcl.WrongArgs("persist none")
		}
		return tcl.Empty, tclErr(pc.Persist(p))
	case "add", "lookup", "delete":
		if len(a) < 2 {
			return tcl.Empty, tcl.WrongArgs("persist " + op + " mode key ...")
		}
		if p.Method, err = persistMethod(a[0].String()); err != nil {
			return tcl.Empty, err
		}
		if p.Method == PersistCookie {
			// BIG-IP's persist add|lookup|delete take no cookie mode:
			// the cookie itself is the record.
			return tcl.Empty, tcl.Errorf("bad persist %s mode \"cookie\": must be source_addr, dest_addr, uie or hash", op)
		}
		if err := persistKey(a[1], &p); err != nil {
			return tcl.Empty, err
		}
		if p.Method == PersistSourceAddr || p.Method == PersistDestAddr {
			if _, err := netip.ParseAddr(p.Key); err != nil {
				return tcl.Empty, tcl.Errorf("bad persist %s key %q: expected an address", a[0].String(), p.Key)
			}
		}
		rest := a[2:]
		switch op {
		case "add":
			if len(rest) > 1 {
				return tcl.Empty, tcl.WrongArgs("persist add mode key ?timeout?")
			}
			if len(rest) == 1 {
				if p.Timeout, err = persistTimeout(rest[0]); err != nil {
					return tcl.Empty, err
				}
			}
			return tcl.Empty, tclErr(pc.PersistAdd(p))
		case "delete":
			if len(rest) != 0 {
				return tcl.Empty, tcl.WrongArgs("persist delete mode key")
			}
			return tcl.Empty, tclErr(pc.PersistDelete(p))
		}
		what := "all"
		if len(rest) == 1 {
			what = rest[0].String()
		} else if len(rest) > 1 {
			return tcl.Empty, tcl.WrongArgs("persist lookup mode key ?all|node|port|pool?")
		}
		if what != "all" && what != "node" && what != "port" && what != "pool" {
			return tcl.Empty, tcl.Errorf("bad persist lookup option %q: must be all, node, port or pool", what)
		}
		t, found, err := pc.PersistLookup(p)
		if err != nil {
			return tcl.Empty, tclErr(err)
		}
		if !found {
			return tcl.Empty, nil
		}
		switch what {
		case "node":
			return tcl.Str(t.Member.Addr().String()), nil
		case "port":
			return tcl.Str(strconv.Itoa(int(t.Member.Port()))), nil
		case "pool":
			return tcl.Str(t.Pool), nil
		}
		return tcl.List(tcl.Str(t.Pool), tcl.Str(t.Member.Addr().String()), tcl.Str(strconv.Itoa(int(t.Member.Port())))), nil
	}
	// persist <mode> ...
	if p.Method, err = persistMethod(args[1].String()); err != nil {
		return tcl.Empty, err
	}
	switch p.Method {
	case PersistUniversal, PersistHash:
		if len(a) < 1 || len(a) > 2 {
			return tcl.Empty, tcl.WrongArgs("persist " + args[1].String() + " key ?timeout?")
		}
		if err := persistKey(a[0], &p); err != nil {
			return tcl.Empty, err
		}
		if len(a) == 2 {
			if p.Timeout, err = persistTimeout(a[1]); err != nil {
				return tcl.Empty, err
			}
		}
	case PersistCookie:
		if err := persistCookieArgs(a, &p); err != nil {
			return tcl.Empty, err
		}
	case PersistSourceAddr, PersistDestAddr:
		if len(a) > 2 {
			return tcl.Empty, tcl.WrongArgs("persist " + args[1].String() + " ?mask? ?timeout?")
		}
		for i, w := range a {
			if m, err := netip.ParseAddr(w.String()); err == nil && i == 0 {
				p.Mask = m
				continue
			}
			if p.Timeout, err = persistTimeout(w); err != nil {
				return tcl.Empty, err
			}
		}
	}
	return tcl.Empty, tclErr(pc.Persist(p))
}

// persistCookieArgs reads `persist cookie`'s words after "cookie", in the
// forms of F5's reference:
//
//	persist cookie
//	persist cookie insert ?name? ?expiration?
//	persist cookie rewrite ?name? ?expiration?
//	persist cookie passive ?name?
//	persist cookie hash name ?{offset ?length?}? ?timeout?
//
// An expiration is seconds or [[days:]hours:]minutes:seconds, 0 a
// session cookie.
func persistCookieArgs(a []tcl.Value, p *Persist) error {
	c := &p.Cookie
	c.Expiration = -1
	if len(a) == 0 {
		return nil
	}
	method, rest := a[0].String(), a[1:]
	switch method {
	case "insert", "rewrite":
		c.Method = CookieInsert
		if method == "rewrite" {
			c.Method = CookieRewrite
		}
		if len(rest) > 2 {
			return tcl.WrongArgs("persist cookie " + method + " ?name? ?expiration?")
		}
		if len(rest) > 0 {
			c.Name = rest[0].String()
		}
		if len(rest) == 2 {
			d, err := cookieExpiration(rest[1].String())
			if err != nil {
				return err
			}
			c.Expiration = d
		}
	case "passive":
		c.Method = CookiePassive
		if len(rest) > 1 {
			return tcl.WrongArgs("persist cookie passive ?name?")
		}
		if len(rest) == 1 {
			c.Name = rest[0].String()
		}
	case "hash":
		c.Method = CookieHash
		if len(rest) < 1 || len(rest) > 3 {
			return tcl.WrongArgs("persist cookie hash name ?{offset ?length?}? ?timeout?")
		}
		c.Name = rest[0].String()
		if c.Name == "" {
			return tcl.Errorf("bad persist cookie hash name \"\": expected the application's cookie name")
		}
		rest = rest[1:]
		if len(rest) > 0 {
			l, err := tcl.AsList(rest[0])
			if err != nil || len(l) < 1 || len(l) > 2 {
				return tcl.Errorf("bad persist cookie hash offset %q: expected {offset ?length?}", rest[0].String())
			}
			for i, w := range l {
				n, err := w.Int64()
				if err != nil || n < 0 || n > 1<<20 {
					return tcl.Errorf("bad persist cookie hash offset %q: expected {offset ?length?} of byte counts", rest[0].String())
				}
				if i == 0 {
					c.HashOffset = int(n)
				} else {
					c.HashLength = int(n)
				}
			}
			rest = rest[1:]
		}
		if len(rest) == 1 {
			var err error
			if p.Timeout, err = persistTimeout(rest[0]); err != nil {
				return err
			}
		}
	default:
		return tcl.Errorf("bad persist cookie method %q: must be insert, rewrite, passive or hash", method)
	}
	return nil
}

// cookieExpiration reads `persist cookie insert|rewrite`'s expiration:
// seconds, or [[days:]hours:]minutes:seconds as the cookie profile's.
func cookieExpiration(s string) (time.Duration, error) {
	bad := tcl.Errorf("bad persist cookie expiration %q: expected seconds or [[days:]hours:]minutes:seconds", s)
	parts := strings.Split(s, ":")
	if s == "" || len(parts) > 4 {
		return 0, bad
	}
	units := []time.Duration{time.Second, time.Minute, time.Hour, 24 * time.Hour}
	var d time.Duration
	for i := range parts {
		n, err := strconv.Atoi(parts[len(parts)-1-i])
		if err != nil || n < 0 || n > 1<<31 {
			return 0, bad
		}
		d += time.Duration(n) * units[i]
	}
	return d, nil
}
