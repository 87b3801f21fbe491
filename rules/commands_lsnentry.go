package rules

import (
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/openltm/openltm/rules/tcl"
)

// The commands that read and write an lsn pool's tables by hand
// (clouddocs: https://clouddocs.f5.com/api/irules/LSN__inbound-entry.html,
// LSN__persistence-entry.html, XLAT__listen.html,
// XLAT__listen_lifetime.html, XLAT__src_endpoint_reservation.html):
//
//	LSN::inbound-entry get TRANS_ADDR:PORT PROTO
//	LSN::inbound-entry create ?-mirror? ?-override? POOL TIMEOUT CLIENT_ADDR:PORT TRANS_ADDR:PORT PROTO
//	LSN::inbound-entry delete TRANS_ADDR:PORT PROTO
//	LSN::persistence-entry create ?-override? ?POOL? CLIENT_ADDR?:PORT? TRANS_ADDR?:PORT? ?TIMEOUT?
//	LSN::persistence-entry get|delete CLIENT_ADDR?:PORT?
//	XLAT::listen ?-single-connection? ?-translation-loose? LIFETIME {proto P; bind -allow|-deny VLANS ?-ip A? ?-port P?; server A P; allow A ?P?}
//	XLAT::listen_lifetime HANDLE ?LIFETIME?
//	XLAT::src_endpoint_reservation create ?-no-persist? ?-pool P? ?-translation-loose|-translation-strict A P? CLIENT_IP CLIENT_PORT PROTO LIFETIME
//	XLAT::src_endpoint_reservation update_lifetime A P POOL PROTO LIFETIME
//	XLAT::src_endpoint_reservation get A P POOL PROTO
//
// They act on Env.LSN (the running pools); without it they are Tcl
// errors. Answers and choices F5 leaves open [M]: inbound-entry get is
// {ADDR PORT 0} (route domain 0), empty when nothing listens there;
// create answers the translation ADDR:PORT and, without -override,
// refuses an endpoint another subscriber holds; -mirror is taken (openltm
// mirrors no lsn state to a peer); delete of nothing is no error.
// persistence-entry create without a client port makes an address
// record, with one an address-port record holding the translation port
// (any free one when TRANS has no port), for TCP and UDP; an existing
// record stands without -override; its timeout defaults to the pool's;
// it answers the translation (ADDR or ADDR:PORT), as get does (empty:
// none); without a pool, the flow's lsn pool. XLAT::listen acts on a
// flow an lsn pool translates (its pool), and answers F5's handle
// "LOCAL,LPORT,REMOTE,RPORT,SERVER,SPORT,VLAN,PROTO" (route domains
// left out, being 0); its lifetime 0 ends it at once; -hairpin,
// -inherit-main-rules and inherit-vs are Tcl errors (openltm's
// listener relays to the server itself, running no virtual's rules).
// XLAT::listen_lifetime answers the seconds left, or sets them.
// src_endpoint_reservation get answers {CLIENT_IP CLIENT_PORT
// SECONDS_LEFT}, update_lifetime the new lifetime; -dslite is a Tcl
// error (no DS-Lite tunnels).

// LSNTables is the running lsn pools' tables a rule may read and write
// (Env.LSN), so that the rule's entries live in the pool the data path
// translates with.
type LSNTables interface {
	// AddEntry makes an inbound entry, listener or reservation in the
	// pool named, answering its translation address and port.
	AddEntry(pool string, e LSNEntry) (netip.AddrPort, error)
	// Entry is the rule-made entry of a translation endpoint.
	Entry(at netip.AddrPort, udp bool) (LSNEntryInfo, bool)
	// SetEntryLife gives an entry a new lifetime from now.
	SetEntryLife(at netip.AddrPort, udp bool, life time.Duration) bool
	// Inbound is the subscriber inbound connections to at reach.
	Inbound(at netip.AddrPort, udp bool) (netip.AddrPort, bool)
	// DeleteInbound ends the inbound mapping of at.
	DeleteInbound(at netip.AddrPort, udp bool) bool
	// PersistEntry makes a persistence record in the pool named.
	PersistEntry(pool string, client, to netip.AddrPort, ttl time.Duration, override bool) (netip.AddrPort, error)
	// Persistence is client's persistence record's translation.
	Persistence(client netip.AddrPort) (netip.AddrPort, bool)
	// DeletePersistence ends client's persistence records.
	DeletePersistence(client netip.AddrPort) bool
}

// LSNEntry kinds.
const (
	LSNInboundEntry = iota
	LSNListener
	LSNReservation
)

// LSNEntry is a rule's new entry (see the dataplane's lsn.EntrySpec).
type LSNEntry struct {
	Kind      int
	Client    netip.AddrPort
	At        netip.AddrPort
	UDP       bool
	Life      time.Duration
	Loose     bool
	Override  bool
	Allow     netip.AddrPort
	Single    bool
	NoPersist bool
}

// LSNEntryInfo is an entry a rule reads.
type LSNEntryInfo struct {
	Kind   int
	Pool   string
	At     netip.AddrPort
	Client netip.AddrPort
	Left   time.Duration
}

// maxEntryLife bounds a rule's lifetimes: 365 days, F5's bound for
// XLAT::listen_lifetime.
const maxEntryLife = 31536000

func registerLSNEntries(t *tcl.Commands) {
	t.Register("LSN::inbound-entry", cmdInboundEntry).Compile = inboundEntryHook // commands_lsncheck.go
	t.Register("LSN::persistence-entry", cmdPersistenceEntry).Compile = persistenceEntryHook
	t.Register("XLAT::listen", cmdXLATListen).Compile = xlatListenHook
	t.Register("XLAT::listen_lifetime", cmdXLATListenLifetime).Compile = listenLifetimeHook
	t.Register("XLAT::src_endpoint_reservation", cmdXLATReservation).Compile = reservationHook
}

func lsnTables(in *tcl.Interp, cmd string) (LSNTables, error) {
	s := sessionOf(in)
	if s == nil || s.prog == nil || s.prog.env == nil || s.prog.env.LSN == nil {
		return nil, tcl.Errorf("%s: command is not valid in this context (no lsn pools)", cmd)
	}
	return s.prog.env.LSN, nil
}

// parseEndpoint reads ADDR, ADDR:PORT or [V6]:PORT; needPort refuses
// ADDR alone.
func parseEndpoint(cmd, what, s string, needPort bool) (netip.AddrPort, error) {
	if a, err := netip.ParseAddr(s); err == nil {
		if needPort {
			return netip.AddrPort{}, tcl.Errorf("%s: %s %q has no port (ADDR:PORT)", cmd, what, s)
		}
		return netip.AddrPortFrom(a.Unmap(), 0), nil
	}
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		return netip.AddrPort{}, tcl.Errorf("%s: %s %q is not ADDR:PORT", cmd, what, s)
	}
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), nil
}

// parseProto reads a protocol: tcp, udp (any case), 6 or 17.
func parseProto(cmd, s string) (udp bool, err error) {
	switch strings.ToLower(s) {
	case "tcp", "6":
		return false, nil
	case "udp", "17":
		return true, nil
	}
	return false, tcl.Errorf("%s: protocol %q is not tcp or udp", cmd, s)
}

func parseLife(cmd, s string) (time.Duration, error) {
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil || n > maxEntryLife {
		return 0, tcl.Errorf("%s: lifetime %q is not a number of seconds (0 to %d)", cmd, s, maxEntryLife)
	}
	return time.Duration(n) * time.Second, nil
}

func endpointValue(ap netip.AddrPort) tcl.Value {
	if ap.Port() == 0 {
		return tcl.Str(ap.Addr().String())
	}
	return tcl.Str(ap.String())
}

func cmdInboundEntry(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const name = "LSN::inbound-entry"
	const usage = "LSN::inbound-entry get|delete TRANS_ADDR:PORT PROTO | create ?-mirror? ?-override? POOL TIMEOUT CLIENT_ADDR:PORT TRANS_ADDR:PORT PROTO"
	if len(args) < 2 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	lt, err := lsnTables(in, name)
	if err != nil {
		return tcl.Empty, err
	}
	w := words(args[2:])
	switch args[1].String() {
	case "get", "delete":
		if len(w) != 2 {
			return tcl.Empty, tcl.WrongArgs(usage)
		}
		at, err := parseEndpoint(name, "translation", w[0], true)
		if err != nil {
			return tcl.Empty, err
		}
		udp, err := parseProto(name, w[1])
		if err != nil {
			return tcl.Empty, err
		}
		if args[1].String() == "delete" {
			lt.DeleteInbound(at, udp)
			return tcl.Empty, nil
		}
		c, ok := lt.Inbound(at, udp)
		if !ok {
			return tcl.Empty, nil
		}
		return tcl.List(tcl.Str(c.Addr().String()), tcl.Int(int64(c.Port())), tcl.Int(0)), nil
	case "create":
		var override bool
		for len(w) > 0 && strings.HasPrefix(w[0], "-") {
			switch w[0] {
			case "-mirror":
			case "-override":
				override = true
			case "-dslite", "-prefix":
				return tcl.Empty, tcl.Errorf("%s: %s: openltm has no DS-Lite tunnels", name, w[0])
			default:
				return tcl.Empty, tcl.Errorf("%s: bad option %q: must be -mirror or -override", name, w[0])
			}
			w = w[1:]
		}
		if len(w) != 5 {
			return tcl.Empty, tcl.WrongArgs(usage)
		}
		life, err := parseLife(name, w[1])
		if err != nil {
			return tcl.Empty, err
		}
		client, err := parseEndpoint(name, "client", w[2], true)
		if err != nil {
			return tcl.Empty, err
		}
		at, err := parseEndpoint(name, "translation", w[3], true)
		if err != nil {
			return tcl.Empty, err
		}
		udp, err := parseProto(name, w[4])
		if err != nil {
			return tcl.Empty, err
		}
		if at.Addr().IsUnspecified() {
			at = netip.AddrPort{}
		}
		got, err := lt.AddEntry(w[0], LSNEntry{Kind: LSNInboundEntry, Client: client, At: at, UDP: udp, Life: life, Override: override})
		if err != nil {
			return tcl.Empty, tcl.Errorf("%s: %v", name, err)
		}
		return tcl.Str(got.String()), nil
	}
	return tcl.Empty, tcl.Errorf("%s: bad subcommand %q: must be create, delete or get", name, args[1].String())
}

func words(vs []tcl.Value) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.String()
	}
	return out
}

// flowLSNPool is the lsn pool translating the rule's flow, "" for none.
func flowLSNPool(in *tcl.Interp) string {
	_, c, err := sess(in, "")
	if err != nil {
		return ""
	}
	if xc, ok := c.(XLATConn); ok {
		if typ, obj := xc.XLATConfig(); typ == "LSN" {
			return obj
		}
	}
	return ""
}

func cmdPersistenceEntry(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const name = "LSN::persistence-entry"
	const usage = "LSN::persistence-entry get|delete CLIENT_ADDR?:PORT? | create ?-override? ?POOL? CLIENT_ADDR?:PORT? TRANS_ADDR?:PORT? ?TIMEOUT?"
	if len(args) < 3 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	lt, err := lsnTables(in, name)
	if err != nil {
		return tcl.Empty, err
	}
	w := words(args[2:])
	switch args[1].String() {
	case "get", "delete":
		if len(w) != 1 {
			return tcl.Empty, tcl.WrongArgs(usage)
		}
		client, err := parseEndpoint(name, "client", w[0], false)
		if err != nil {
			return tcl.Empty, err
		}
		if args[1].String() == "delete" {
			lt.DeletePersistence(client)
			return tcl.Empty, nil
		}
		to, ok := lt.Persistence(client)
		if !ok {
			return tcl.Empty, nil
		}
		return endpointValue(to), nil
	case "create":
		override := false
		if len(w) > 0 && w[0] == "-override" {
			override, w = true, w[1:]
		}
		pool := ""
		if len(w) > 0 {
			if _, err := parseEndpoint(name, "client", w[0], false); err != nil {
				pool, w = w[0], w[1:]
			}
		}
		if pool == "" {
			if pool = flowLSNPool(in); pool == "" {
				return tcl.Empty, tcl.Errorf("%s: no lsn pool named and the connection is not translated by one", name)
			}
		}
		if len(w) < 2 || len(w) > 3 {
			return tcl.Empty, tcl.WrongArgs(usage)
		}
		client, err := parseEndpoint(name, "client", w[0], false)
		if err != nil {
			return tcl.Empty, err
		}
		to, err := parseEndpoint(name, "translation", w[1], false)
		if err != nil {
			return tcl.Empty, err
		}
		var ttl time.Duration
		if len(w) == 3 {
			if ttl, err = parseLife(name, w[2]); err != nil {
				return tcl.Empty, err
			}
		}
		got, err := lt.PersistEntry(pool, client, to, ttl, override)
		if err != nil {
			return tcl.Empty, tcl.Errorf("%s: %v", name, err)
		}
		return endpointValue(got), nil
	}
	return tcl.Empty, tcl.Errorf("%s: bad subcommand %q: must be create, delete or get", name, args[1].String())
}

const xlatListenUsage = "XLAT::listen ?-single-connection? ?-translation-loose? LIFETIME {proto P; bind -allow|-deny VLANS ?-ip ADDR? ?-port PORT?; server ADDR PORT; allow ADDR ?PORT?}"

func cmdXLATListen(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const name = "XLAT::listen"
	lt, err := lsnTables(in, name)
	if err != nil {
		return tcl.Empty, err
	}
	w := args[1:]
	e := LSNEntry{Kind: LSNListener}
	for len(w) > 0 && strings.HasPrefix(w[0].String(), "-") {
		switch o := w[0].String(); o {
		case "-single-connection":
			e.Single = true
		case "-translation-loose":
			e.Loose = true
		case "-hairpin", "-inherit-main-rules":
			return tcl.Empty, tcl.Errorf("%s: %s is not supported: openltm's translation listener relays to its server itself", name, o)
		default:
			return tcl.Empty, tcl.Errorf("%s: bad option %q: %s", name, o, xlatListenUsage)
		}
		w = w[1:]
	}
	if len(w) != 2 {
		return tcl.Empty, tcl.WrongArgs(xlatListenUsage)
	}
	if e.Life, err = parseLife(name, w[0].String()); err != nil {
		return tcl.Empty, err
	}
	body, err := in.EvalValue(tcl.List(tcl.Str("subst"), w[1]))
	if err != nil {
		return tcl.Empty, err
	}
	proto, err := parseXLATListen(body.String(), &e)
	if err != nil {
		return tcl.Empty, err
	}
	pool := flowLSNPool(in)
	if pool == "" {
		return tcl.Empty, tcl.Errorf("%s: the connection is not translated by an lsn pool (listen opens a related listener without one)", name)
	}
	at, err := lt.AddEntry(pool, e)
	if err != nil {
		return tcl.Empty, tcl.Errorf("%s: %v", name, err)
	}
	remote := e.Allow
	if !remote.Addr().IsValid() {
		remote = netip.AddrPortFrom(netip.IPv4Unspecified(), 0)
		if !at.Addr().Is4() {
			remote = netip.AddrPortFrom(netip.IPv6Unspecified(), 0)
		}
	}
	return tcl.Str(at.Addr().String() + "," + strconv.Itoa(int(at.Port())) + "," +
		remote.Addr().String() + "," + strconv.Itoa(int(remote.Port())) + "," +
		e.Client.Addr().String() + "," + strconv.Itoa(int(e.Client.Port())) + ",0," + strconv.Itoa(proto)), nil
}

// parseXLATListen reads XLAT::listen's substituted body into e; the IP
// protocol number.
func parseXLATListen(body string, e *LSNEntry) (int, error) {
	const name = "XLAT::listen"
	var st listenBody
	st.proto = 6
	for _, line := range strings.FieldsFunc(body, func(r rune) bool { return r == '\n' || r == ';' }) {
		if err := st.clause(line, e); err != nil {
			return 0, err
		}
	}
	if !e.Client.IsValid() {
		return 0, tcl.Errorf("%s: no server: %s", name, xlatListenUsage)
	}
	if st.ip.IsValid() {
		e.At = netip.AddrPortFrom(st.ip, st.port)
	}
	return st.proto, nil
}

// listenBody is what XLAT::listen's clauses said so far; the rule's
// compile check (commands_lsncheck.go) reads literal bodies with it too.
type listenBody struct {
	proto int
	ip    netip.Addr
	port  uint16
	seen  map[string]bool
}

// clause reads one clause of an XLAT::listen body into e.
func (st *listenBody) clause(line string, e *LSNEntry) error {
	const name = "XLAT::listen"
	vs, err := tcl.AsList(tcl.Str(line))
	if err != nil {
		return tcl.Errorf("%s: bad clause %q: %v", name, strings.TrimSpace(line), err)
	}
	if len(vs) == 0 {
		return nil
	}
	w := words(vs)
	if st.seen == nil {
		st.seen = map[string]bool{}
	}
	if st.seen[w[0]] {
		return tcl.Errorf("%s: %s given twice", name, w[0])
	}
	st.seen[w[0]] = true
	switch w[0] {
	case "proto":
		if len(w) != 2 {
			return tcl.Errorf("%s: proto takes one IP protocol (6 or 17)", name)
		}
		udp, err := parseProto(name, w[1])
		if err != nil {
			return err
		}
		e.UDP, st.proto = udp, 6
		if udp {
			st.proto = 17
		}
	case "bind":
		for i := 1; i < len(w); i++ {
			switch w[i] {
			case "-allow", "-deny":
				i++ // the VLAN list: the translation address is bound on every VLAN [M]
			case "-ip":
				if i+1 >= len(w) {
					return tcl.Errorf("%s: bind -ip takes an address", name)
				}
				i++
				a, err := netip.ParseAddr(w[i])
				if err != nil {
					return tcl.Errorf("%s: bind -ip %q is not an IP address", name, w[i])
				}
				st.ip = a.Unmap()
			case "-port":
				if i+1 >= len(w) {
					return tcl.Errorf("%s: bind -port takes a port", name)
				}
				i++
				n, err := strconv.ParseUint(w[i], 10, 16)
				if err != nil {
					return tcl.Errorf("%s: bind -port %q is not a port", name, w[i])
				}
				st.port = uint16(n)
			default:
				return tcl.Errorf("%s: bad bind option %q: must be -allow, -deny, -ip or -port", name, w[i])
			}
		}
	case "server":
		if len(w) != 3 {
			return tcl.Errorf("%s: server takes ADDR PORT", name)
		}
		a, err := netip.ParseAddr(w[1])
		n, perr := strconv.ParseUint(w[2], 10, 16)
		if err != nil || perr != nil || n == 0 {
			return tcl.Errorf("%s: bad server %q %q: expected ADDR PORT", name, w[1], w[2])
		}
		e.Client = netip.AddrPortFrom(a.Unmap(), uint16(n))
	case "allow":
		if len(w) < 2 || len(w) > 3 {
			return tcl.Errorf("%s: allow takes ADDR ?PORT?", name)
		}
		a, err := netip.ParseAddr(w[1])
		if err != nil {
			return tcl.Errorf("%s: allow %q is not an IP address", name, w[1])
		}
		var p uint64
		if len(w) == 3 {
			if p, err = strconv.ParseUint(w[2], 10, 16); err != nil {
				return tcl.Errorf("%s: allow port %q is not a port", name, w[2])
			}
		}
		if !a.IsUnspecified() {
			e.Allow = netip.AddrPortFrom(a.Unmap(), uint16(p))
		}
	case "inherit-vs":
		return tcl.Errorf("%s: inherit-vs is not supported: openltm's translation listener relays to its server itself", name)
	default:
		return tcl.Errorf("%s: bad clause %q: must be proto, bind, server, allow or inherit-vs", name, w[0])
	}
	return nil
}

// parseHandle reads an XLAT::listen handle: its local endpoint and
// protocol.
func parseHandle(h string) (netip.AddrPort, bool, bool) {
	f := strings.Split(h, ",")
	if len(f) != 8 {
		return netip.AddrPort{}, false, false
	}
	a, err := netip.ParseAddr(strings.SplitN(f[0], "%", 2)[0])
	p, perr := strconv.ParseUint(f[1], 10, 16)
	if err != nil || perr != nil {
		return netip.AddrPort{}, false, false
	}
	return netip.AddrPortFrom(a.Unmap(), uint16(p)), f[7] == "17", true
}

func cmdXLATListenLifetime(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const name = "XLAT::listen_lifetime"
	if len(args) < 2 || len(args) > 3 {
		return tcl.Empty, tcl.WrongArgs("XLAT::listen_lifetime HANDLE ?LIFETIME?")
	}
	lt, err := lsnTables(in, name)
	if err != nil {
		return tcl.Empty, err
	}
	at, udp, ok := parseHandle(args[1].String())
	if !ok {
		return tcl.Empty, tcl.Errorf("%s: %q is not a listener handle (XLAT::listen's answer)", name, args[1].String())
	}
	e, ok := lt.Entry(at, udp)
	if !ok || e.Kind != LSNListener {
		return tcl.Empty, tcl.Errorf("%s: no listener %s (it ended, or was never made)", name, args[1].String())
	}
	if len(args) == 2 {
		return tcl.Int(int64((e.Left + time.Second - 1) / time.Second)), nil
	}
	life, err := parseLife(name, args[2].String())
	if err != nil {
		return tcl.Empty, err
	}
	lt.SetEntryLife(at, udp, life)
	return tcl.Int(int64(life / time.Second)), nil
}

func cmdXLATReservation(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const name = "XLAT::src_endpoint_reservation"
	const usage = "XLAT::src_endpoint_reservation create ?-no-persist? ?-pool POOL? ?-translation-loose|-translation-strict ADDR PORT? CLIENT_IP CLIENT_PORT PROTO LIFETIME | update_lifetime ADDR PORT POOL PROTO LIFETIME | get ADDR PORT POOL PROTO"
	if len(args) < 2 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	lt, err := lsnTables(in, name)
	if err != nil {
		return tcl.Empty, err
	}
	w := words(args[2:])
	switch args[1].String() {
	case "create":
		e := LSNEntry{Kind: LSNReservation}
		pool := ""
		for len(w) > 0 && strings.HasPrefix(w[0], "-") {
			switch w[0] {
			case "-no-persist":
				e.NoPersist = true
			case "-pool":
				if len(w) < 2 {
					return tcl.Empty, tcl.WrongArgs(usage)
				}
				pool, w = w[1], w[1:]
			case "-translation-loose", "-translation-strict":
				if len(w) < 3 {
					return tcl.Empty, tcl.WrongArgs(usage)
				}
				a, err := netip.ParseAddr(w[1])
				p, perr := strconv.ParseUint(w[2], 10, 16)
				if err != nil || perr != nil {
					return tcl.Empty, tcl.Errorf("%s: %s %q %q: expected ADDR PORT", name, w[0], w[1], w[2])
				}
				e.At, e.Loose = netip.AddrPortFrom(a.Unmap(), uint16(p)), w[0] == "-translation-loose"
				w = w[2:]
			case "-dslite":
				return tcl.Empty, tcl.Errorf("%s: -dslite: openltm has no DS-Lite tunnels", name)
			default:
				return tcl.Empty, tcl.Errorf("%s: bad option %q: %s", name, w[0], usage)
			}
			w = w[1:]
		}
		if len(w) != 4 {
			return tcl.Empty, tcl.WrongArgs(usage)
		}
		a, err := netip.ParseAddr(w[0])
		p, perr := strconv.ParseUint(w[1], 10, 16)
		if err != nil || perr != nil {
			return tcl.Empty, tcl.Errorf("%s: client %q %q: expected CLIENT_IP CLIENT_PORT", name, w[0], w[1])
		}
		e.Client = netip.AddrPortFrom(a.Unmap(), uint16(p))
		if e.UDP, err = parseProto(name, w[2]); err != nil {
			return tcl.Empty, err
		}
		if e.Life, err = parseLife(name, w[3]); err != nil {
			return tcl.Empty, err
		}
		if pool == "" {
			if pool = flowLSNPool(in); pool == "" {
				return tcl.Empty, tcl.Errorf("%s: no -pool and the connection is not translated by an lsn pool", name)
			}
		}
		at, err := lt.AddEntry(pool, e)
		if err != nil {
			return tcl.Empty, tcl.Errorf("%s: %v", name, err)
		}
		info, _ := lt.Entry(at, e.UDP)
		return tcl.List(tcl.Str(at.Addr().String()), tcl.Int(int64(at.Port())), tcl.Str(info.Pool), tcl.Int(int64(e.Life/time.Second))), nil
	case "get", "update_lifetime":
		n := 4
		if args[1].String() == "update_lifetime" {
			n = 5
		}
		if len(w) != n {
			return tcl.Empty, tcl.WrongArgs(usage)
		}
		a, err := netip.ParseAddr(w[0])
		p, perr := strconv.ParseUint(w[1], 10, 16)
		if err != nil || perr != nil {
			return tcl.Empty, tcl.Errorf("%s: %q %q: expected ADDR PORT", name, w[0], w[1])
		}
		at := netip.AddrPortFrom(a.Unmap(), uint16(p))
		udp, err := parseProto(name, w[3])
		if err != nil {
			return tcl.Empty, err
		}
		info, ok := lt.Entry(at, udp)
		if !ok || info.Kind != LSNReservation || !poolMatches(info.Pool, w[2]) {
			return tcl.Empty, nil
		}
		if n == 5 {
			life, err := parseLife(name, w[4])
			if err != nil {
				return tcl.Empty, err
			}
			lt.SetEntryLife(at, udp, life)
			return tcl.Int(int64(life / time.Second)), nil
		}
		return tcl.List(tcl.Str(info.Client.Addr().String()), tcl.Int(int64(info.Client.Port())),
			tcl.Int(int64((info.Left+time.Second-1)/time.Second))), nil
	}
	return tcl.Empty, tcl.Errorf("%s: bad subcommand %q: must be create, get or update_lifetime", name, args[1].String())
}

// poolMatches: a rule's pool name (bare: in /Common) names full.
func poolMatches(full, name string) bool {
	return full == name || !strings.HasPrefix(name, "/") && full == "/Common/"+name
}
