package rules

import (
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/openltm/openltm/rules/tcl"
)

var (
	tableOnce sync.Once
	table     *tcl.Commands
)

// commandTable is the one command table every rule compiles against and
// every session runs with: the Tcl core minus what BIG-IP disables, plus
// the iRules commands.
func commandTable() *tcl.Commands {
	tableOnce.Do(func() {
		t := tcl.NewCommands()
		t.Lenient = true
		for n := range disabledTcl {
			t.Remove(n)
		}
		t.Register("puts", cmdPuts)
		// proc is only valid at a rule's top level, where Compile reads it.
		t.Register("proc", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
			return tcl.Empty, tcl.Errorf("proc is only allowed at the top level of a rule")
		})
		t.Register("when", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
			return tcl.Empty, tcl.Errorf("when is only allowed at the top level of a rule")
		}).Compile = whenHook
		t.Register("priority", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
			return tcl.Empty, tcl.Errorf("priority is only allowed at the top level of a rule")
		})
		// timing on|off turns BIG-IP's per-event cycle counters on or off;
		// openltm keeps no such counters and accepts it.
		t.Register("timing", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
			if len(args) != 2 || (args[1].String() != "on" && args[1].String() != "off") {
				return tcl.Empty, tcl.WrongArgs("timing on|off")
			}
			return tcl.Empty, nil
		})
		t.Register("call", cmdCall)
		t.Register("event", cmdEvent)
		t.Register("clientside", cmdSideScript(ClientSide)).Compile = scriptLast
		t.Register("serverside", cmdSideScript(ServerSide)).Compile = scriptLast
		t.Register("log", cmdLog)
		t.Register("pool", cmdPool).Compile = refHook("pool", 1)
		t.Register("node", cmdNode)
		t.Register("snat", cmdSnat)
		t.Register("snatpool", cmdSnatpool).Compile = refHook("snatpool", 1)
		for name, k := range map[string]DecisionKind{"drop": DecideDrop, "reject": DecideReject, "discard": DecideDiscard, "forward": DecideForward} {
			t.Register(name, cmdSimpleDecision(name, k))
		}
		registerTCP(t)
		registerUDP(t)
		registerIP(t)
		registerLB(t)
		registerLBMore(t) // commands_lb.go
		t.Register("persist", cmdPersist).Compile = persistHook
		t.Register("class", cmdClass)
		t.Register("matchclass", cmdMatchclass)
		t.Register("findclass", cmdFindclass)
		t.Register("table", cmdTable)
		registerUtil(t)
		registerCrypto(t)
		registerAES(t)
		registerHTTP(t)
		registerHTTP2(t)       // commands_http2.go
		registerHTTPReasons(t) // commands_httpreason.go
		registerDNS(t)
		registerIO(t)
		registerSSL(t)     // commands_ssl.go
		registerSSLData(t) // commands_ssldata.go
		registerSSLSettings(t)
		registerSSLSession(t) // commands_sslsession.go
		registerStream(t)
		registerPolicy(t)                                                             // commands_policy.go
		registerRewrite(t)                                                            // commands_rewrite.go
		registerCompress(t)                                                           // commands_compress.go
		registerCache(t)                                                              // commands_cache.go
		registerAdapt(t)                                                              // commands_adapt.go
		registerJSON(t)                                                               // commands_json.go
		registerHTML(t)                                                               // commands_html.go
		registerMQTT(t)                                                               // commands_mqtt.go
		registerFIX(t)                                                                // commands_fix.go
		registerRTSP(t)                                                               // commands_rtsp.go
		registerDiameter(t)                                                           // commands_diameter.go
		registerICAP(t)                                                               // commands_icap.go
		registerWS(t)                                                                 // commands_ws.go
		registerSIP(t)                                                                // commands_sip.go
		registerRADIUS(t)                                                             // commands_radius.go
		registerGTP(t)                                                                // commands_gtp.go
		registerDHCP(t)                                                               // commands_dhcp.go
		t.Register("RESOLV::lookup", cmdResolvLookup).Compile = waitHook              // commands_resolv.go
		t.Register("RESOLVER::name_lookup", cmdResolverNameLookup).Compile = waitHook // commands_dnsmsg.go
		registerDNSMsg(t)
		t.Register("whereis", cmdWhereis)                             // commands_whereis.go
		registerSideband(t)                                           // commands_sideband.go
		registerSock(t)                                               // commands_sock.go
		registerBWC(t)                                                // commands_bwc.go
		t.Register("rateclass", cmdRateClass).Compile = bwcPolicyHook // commands_rateclass.go
		registerSYN(t)                                                // commands_syn.go
		registerTCPOpt(t)                                             // commands_tcpopt.go
		registerTCPSettings(t)                                        // commands_tcpset.go
		registerFlow(t)                                               // commands_flow.go
		registerUDPSettings(t)                                        // commands_udpset.go
		registerX509Ext(t)                                            // commands_x509ext.go
		registerCompat(t)                                             // commands_compat.go
		registerProfile(t)                                            // commands_profile.go
		registerLink(t)                                               // commands_link.go
		registerLBClass(t)                                            // commands_lbclass.go
		registerFTP(t)                                                // commands_ftp.go
		registerSOCKS(t)                                              // commands_socks.go
		registerSTARTTLS(t)                                           // commands_starttls.go
		registerLDAP(t)                                               // commands_ldap.go
		registerASN1(t)                                               // commands_asn1.go
		registerRoute(t)                                              // commands_route.go
		registerStatsProfile(t)                                       // statsprofile.go
		registerIStats(t)                                             // istats.go
		registerF5Only(t)                                             // commands_f5only.go
		registerMRF(t)                                                // commands_mrf.go
		registerSSLAuth(t)                                            // commands_sslauth.go
		registerRateLimits(t)                                         // commands_ratelimit.go
		registerIPFIX(t)                                              // commands_ipfix.go
		registerConnLimit(t)                                          // commands_connlimit.go
		registerTCPOffset(t)                                          // commands_tcpoffset.go
		t.Register("getfield", cmdGetfield)
		t.Register("findstr", cmdFindstr)
		t.Register("substr", cmdSubstr)
		t.Register("domain", cmdDomain)
		t.Register("NAME::lookup", cmdNameLookup).Compile = waitHook // commands_name.go
		t.Register("NAME::response", cmdNameResponse)
		t.Register("RESOLVER::summarize", cmdResolverSummarize)
		registerIPUnsupported(t) // commands_ipintel.go
		registerAuth(t)          // commands_auth.go
		// TMM::*: openltm is one traffic process whose tables, statics and
		// persistence are shared by all its event loops, which is what
		// one TMM is to a rule: unit 0 of 1, in group 0 of 1 (rules ask
		// to do a thing once, in RULE_INIT on unit 0, or make keys unique
		// per unit).
		for name, v := range map[string]int64{"TMM::cmp_unit": 0, "TMM::cmp_count": 1, "TMM::cmp_group": 0, "TMM::cmp_groups": 1, "TMM::cmp_primary_group": 0} {
			t.Register(name, func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
				if len(args) != 1 {
					return tcl.Empty, tcl.WrongArgs(name)
				}
				return tcl.Int(v), nil
			})
		}
		registerXML(t)       // commands_xml.go
		registerGTM(t)       // commands_gtm.go
		registerListen(t)    // commands_listen.go
		registerSession(t)   // commands_session.go
		registerSDP(t)       // commands_sdp.go
		registerLSN(t)       // commands_lsn.go
		registerPCP(t)       // commands_pcp.go
		registerXLAT(t)      // commands_xlat.go
		registerILX(t)       // commands_ilx.go
		registerXMLEvents(t) // commands_xml_events.go
		registerSSE(t)       // commands_sse.go
		registerMessage(t)   // commands_message.go
		registerAAA(t)       // commands_aaa.go

		registerFlowRelated(t) // commands_flow_related.go
		registerMissing(t)     // commands_unbacked.go
		registerLTMMisc(t)     // commands_ltmmisc.go
		for _, n := range t.Names() {
			if strings.HasPrefix(n, "HTTP::") {
				cmd := t.Lookup(n)
				cmd.Compile = httpNeedHook(n, cmd.Compile)
			}
		}
		table = t
	})
	return table
}

// tclErr turns a connection's error into a Tcl error, which rules can
// catch; Tcl errors pass through.
func tclErr(err error) error {
	if err == nil || tcl.Catchable(err) {
		return err
	}
	return tcl.Errorf("%v", err)
}

// whenHook compiles a when block's script, noting the event for the
// hooks of the commands inside it (httpNeedHook).
func whenHook(c *tcl.Compiler) error {
	r, ok := c.Context().(*Rule)
	if !ok {
		return c.Script(c.NumWords() - 1)
	}
	name, _ := c.Literal(1)
	ev, known := ParseEvent(name)
	prevEv, prevIn := r.inEvent, r.inWhen
	r.inEvent, r.inWhen = ev, known
	err := c.Script(c.NumWords() - 1)
	r.inEvent, r.inWhen = prevEv, prevIn
	return err
}

// httpNeedHook records a use of an HTTP:: command in a when block, which
// BIG-IP refuses on a virtual server without an http profile
// (Rule.HTTPNeeds), then runs the command's own hook, if any.
func httpNeedHook(name string, next func(c *tcl.Compiler) error) func(c *tcl.Compiler) error {
	return func(c *tcl.Compiler) error {
		if r, ok := c.Context().(*Rule); ok && r.inWhen {
			r.noteHTTPNeed(name, c)
		}
		if next != nil {
			return next(c)
		}
		return nil
	}
}

// persistHook records `persist cookie` in a when block: cookie
// persistence needs the http profile.
func persistHook(c *tcl.Compiler) error {
	if r, ok := c.Context().(*Rule); ok && r.inWhen {
		if w, lit := c.Literal(1); lit && w == "cookie" {
			r.noteHTTPNeed("persist cookie", c)
		}
	}
	return nil
}

func scriptLast(c *tcl.Compiler) error { return c.Script(c.NumWords() - 1) }

// refHook records a literal object name at word i for configuration checks.
func refHook(kind string, i int) func(c *tcl.Compiler) error {
	return func(c *tcl.Compiler) error {
		r, ok := c.Context().(*Rule)
		if !ok {
			return nil
		}
		if name, lit := c.Literal(i); lit && name != "" {
			line, col := c.Pos(i)
			r.refs = append(r.refs, Ref{Kind: kind, Name: name, Line: line, Col: col})
		}
		return nil
	}
}

// compileRule compiles a rule's text; command hooks reach the rule through
// the compiler's context to record references and unsupported uses.
func compileRule(t *tcl.Commands, check func(string, *tcl.Source, int) error, r *Rule, body string) (*tcl.Script, error) {
	return tcl.CompileContext(t, check, r, r.Name, body)
}

// unsupportedHook marks a rule as not acted on when a literal word of a
// command selects a form openltm does not implement yet (one of values);
// the form is named "prefix value".
func unsupportedHook(word int, prefix string, values ...string) func(c *tcl.Compiler) error {
	return markHook(word, prefix, func(v string) bool { return slices.Contains(values, v) })
}

// markHook marks a rule as not acted on when a command's literal word
// number word is a value notRun accepts, naming the form "prefix value".
func markHook(word int, prefix string, notRun func(v string) bool) func(c *tcl.Compiler) error {
	return func(c *tcl.Compiler) error {
		r, ok := c.Context().(*Rule)
		if !ok {
			return nil
		}
		if v, lit := c.Literal(word); lit && notRun(v) {
			line, col := c.Pos(word)
			r.unsupported = append(r.unsupported, Unsupported{Kind: "command", Name: prefix + " " + v, Line: line, Col: col})
		}
		return nil
	}
}

// sess returns the session and its connection, refusing commands that need
// a connection in RULE_INIT.
func sess(in *tcl.Interp, cmd string) (*ConnState, Conn, error) {
	s := sessionOf(in)
	if s == nil || s.conn == nil {
		return s, nil, tcl.Errorf("%s: command is not valid in this context (no connection)", cmd)
	}
	return s, s.conn, nil
}

func cmdPuts(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) < 2 {
		return tcl.Empty, tcl.WrongArgs("puts ?-nonewline? ?channelId? string")
	}
	s := sessionOf(in)
	if s != nil {
		s.prog.env.log("local0.info", s.logLine(args[len(args)-1].String(), false))
	}
	return tcl.Empty, nil
}

// cmdLog is `log ?-noname? ?remote_ip[:port]? ?facility.level? message`.
func cmdLog(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const usage = "log ?-noname? ?remote_ip[:port]? ?facility.level? message"
	a := args[1:]
	noname := false
	if len(a) > 0 && a[0].String() == "-noname" {
		noname = true
		a = a[1:]
	}
	var remote netip.AddrPort
	if len(a) == 3 {
		ap, ok := parseLogTarget(a[0].String())
		if !ok {
			return tcl.Empty, tcl.Errorf("bad log destination %q: expected an IP address, optionally with :port", a[0].String())
		}
		remote, a = ap, a[1:]
	}
	facility := "local0.info"
	switch len(a) {
	case 1:
	case 2:
		f := a[0].String()
		fac, lvl, ok := strings.Cut(f, ".")
		if !ok {
			return tcl.Empty, tcl.Errorf("bad log facility %q: expected facility.level such as local0.info", f)
		}
		if lvl == "" {
			lvl = "info"
		}
		facility = fac + "." + lvl
		a = a[1:]
	default:
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	s := sessionOf(in)
	if s == nil {
		return tcl.Empty, nil
	}
	line := s.logLine(a[0].String(), noname)
	if remote.IsValid() && s.prog.env.LogRemote != nil {
		s.prog.env.LogRemote(remote, facility, line)
		return tcl.Empty, nil
	}
	s.prog.env.log(facility, line)
	return tcl.Empty, nil
}

func cmdCall(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) < 2 {
		return tcl.Empty, tcl.WrongArgs("call ?rule::?proc ?arg ...?")
	}
	s := sessionOf(in)
	name := args[1].String()
	var p *tcl.Proc
	if i := strings.LastIndex(name, "::"); i >= 0 {
		rname, pname := FullName(name[:i]), name[i+2:]
		if s != nil {
			for _, r := range s.prog.rules {
				if r.Name == rname {
					p = r.procs[pname]
				}
			}
		}
	} else if s != nil && s.cur != nil {
		p = s.cur.rule.procs[name]
	}
	if p == nil {
		return tcl.Empty, tcl.Errorf("invalid command name %q: no such proc in this rule or in the rules of this virtual", name)
	}
	call := make([]tcl.Value, len(args)-1)
	copy(call, args[1:])
	return in.CallProc(p, call)
}

func cmdEvent(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	s := sessionOf(in)
	if s == nil || s.cur == nil {
		return tcl.Empty, tcl.Errorf("event: not running an event")
	}
	a := args[1:]
	if len(a) == 0 {
		return tcl.Str(s.event.String()), nil
	}
	switch a[0].String() {
	case "name":
		return tcl.Str(s.event.String()), nil
	case "disable", "enable":
		d := &s.disabled[s.curIdx]
		all := len(a) == 2 && a[1].String() == "all"
		d.set(s.event, all, a[0].String() == "disable")
		return tcl.Empty, nil
	case "info":
		return tcl.Str(s.event.String()), nil
	}
	// event EVENT disable|enable
	ev, ok := ParseEvent(a[0].String())
	if !ok || len(a) != 2 {
		return tcl.Empty, tcl.Errorf("bad event command: expected event ?EVENT? disable|enable, event disable all or event name")
	}
	switch a[1].String() {
	case "disable":
		s.disabled[s.curIdx].set(ev, false, true)
	case "enable":
		s.disabled[s.curIdx].set(ev, false, false)
	default:
		return tcl.Empty, tcl.Errorf("bad event action %q: must be disable or enable", a[1].String())
	}
	return tcl.Empty, nil
}

func cmdSideScript(side Side) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		s := sessionOf(in)
		if len(args) != 2 {
			return tcl.Empty, tcl.WrongArgs(args[0].String() + " script")
		}
		if s == nil {
			return in.EvalValue(args[1])
		}
		saved := s.side
		s.side = side
		v, err := in.EvalValue(args[1])
		s.side = saved
		return v, err
	}
}

// parseHostPort reads "addr", "addr:port", "[v6]:port", "v6.port" or an
// address and a separate port word.
func parseHostPort(a []tcl.Value) (netip.AddrPort, error) {
	if len(a) == 0 {
		return netip.AddrPort{}, tcl.Errorf("missing address")
	}
	s := a[0].String()
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap, nil
	}
	port := uint16(0)
	if len(a) > 1 {
		p, err := strconv.ParseUint(a[1].String(), 10, 16)
		if err != nil {
			return netip.AddrPort{}, tcl.Errorf("bad port %q: expected 0 to 65535", a[1].String())
		}
		port = uint16(p)
	}
	if i := strings.LastIndexByte(s, '.'); i > 0 && strings.Contains(s, ":") {
		if ad, err := netip.ParseAddr(s[:i]); err == nil {
			if p, err := strconv.ParseUint(s[i+1:], 10, 16); err == nil {
				return netip.AddrPortFrom(ad, uint16(p)), nil
			}
		}
	}
	if i := strings.IndexByte(s, '%'); i > 0 {
		s = s[:i] // route domain: ignored on a single-domain host
	}
	ad, err := netip.ParseAddr(s)
	if err != nil {
		return netip.AddrPort{}, tcl.Errorf("bad address %q: expected an IPv4 or IPv6 address, optionally with :port", a[0].String())
	}
	return netip.AddrPortFrom(ad, port), nil
}

func cmdPool(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	_, c, err := sess(in, "pool")
	if err != nil {
		return tcl.Empty, err
	}
	switch {
	case len(args) == 2:
		return tcl.Empty, tclErr(c.Decide(Decision{Kind: DecidePool, Pool: args[1].String()}))
	case len(args) >= 4 && len(args) <= 5 && args[2].String() == "member":
		ap, err := parseHostPort(args[3:])
		if err != nil {
			return tcl.Empty, err
		}
		return tcl.Empty, tclErr(c.Decide(Decision{Kind: DecideMember, Pool: args[1].String(), Addr: ap}))
	}
	return tcl.Empty, tcl.WrongArgs("pool pool_name ?member addr ?port??")
}

func cmdNode(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	_, c, err := sess(in, "node")
	if err != nil {
		return tcl.Empty, err
	}
	if len(args) < 2 || len(args) > 3 {
		return tcl.Empty, tcl.WrongArgs("node addr ?port?")
	}
	ap, err := parseHostPort(args[1:])
	if err != nil {
		return tcl.Empty, err
	}
	return tcl.Empty, tclErr(c.Decide(Decision{Kind: DecideNode, Addr: ap}))
}

func cmdSnat(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	_, c, err := sess(in, "snat")
	if err != nil {
		return tcl.Empty, err
	}
	if len(args) < 2 || len(args) > 3 {
		return tcl.Empty, tcl.WrongArgs("snat addr|automap|none")
	}
	switch args[1].String() {
	case "automap":
		return tcl.Empty, tclErr(c.Decide(Decision{Kind: DecideSnatAuto}))
	case "none":
		return tcl.Empty, tclErr(c.Decide(Decision{Kind: DecideSnatNone}))
	}
	ap, err := parseHostPort(args[1:])
	if err != nil {
		return tcl.Empty, err
	}
	return tcl.Empty, tclErr(c.Decide(Decision{Kind: DecideSnat, Addr: ap}))
}

func cmdSnatpool(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	_, c, err := sess(in, "snatpool")
	if err != nil {
		return tcl.Empty, err
	}
	switch {
	case len(args) == 2:
		if args[1].String() == "none" {
			return tcl.Empty, tclErr(c.Decide(Decision{Kind: DecideSnatNone}))
		}
		return tcl.Empty, tclErr(c.Decide(Decision{Kind: DecideSnatPool, Pool: args[1].String()}))
	case len(args) == 4 && args[2].String() == "member":
		ap, err := parseHostPort(args[3:])
		if err != nil {
			return tcl.Empty, err
		}
		return tcl.Empty, tclErr(c.Decide(Decision{Kind: DecideSnatPool, Pool: args[1].String(), Addr: ap}))
	}
	return tcl.Empty, tcl.WrongArgs("snatpool snatpool_name ?member addr?")
}

func cmdSimpleDecision(name string, k DecisionKind) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		s, c, err := sess(in, name)
		if err != nil {
			return tcl.Empty, err
		}
		if len(args) != 1 {
			return tcl.Empty, tcl.WrongArgs(name)
		}
		if err := c.Decide(Decision{Kind: k}); err != nil {
			return tcl.Empty, tclErr(err)
		}
		if k != DecideForward {
			s.ended = true
		}
		return tcl.Empty, nil
	}
}

// domain string count: the last count labels of a dotted name (domain
// www.sub.example.com 2 is example.com), the whole name when it has no
// more; a trailing root dot is not a label. Chosen [M]: a count below 1
// gives the empty string.
func cmdDomain(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 3 {
		return tcl.Empty, tcl.WrongArgs("domain string count")
	}
	n, err := args[2].Int64()
	if err != nil {
		return tcl.Empty, err
	}
	name := strings.TrimSuffix(args[1].String(), ".")
	if n < 1 {
		return tcl.Empty, nil
	}
	i := len(name)
	for ; n > 0; n-- {
		j := strings.LastIndexByte(name[:i], '.')
		if j < 0 {
			return tcl.Str(name), nil
		}
		i = j
	}
	return tcl.Str(name[i+1:]), nil
}

// getfield string separator n: the n-th field (from 1) split on separator.
func cmdGetfield(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 4 {
		return tcl.Empty, tcl.WrongArgs("getfield string split_string field_number")
	}
	n, err := args[3].Int64()
	if err != nil {
		return tcl.Empty, err
	}
	sep := args[2].String()
	if sep == "" || n < 1 {
		return tcl.Empty, nil
	}
	s := args[1].String()
	for i := int64(1); ; i++ {
		j := strings.Index(s, sep)
		if i == n {
			if j < 0 {
				return tcl.Str(s), nil
			}
			return tcl.Str(s[:j]), nil
		}
		if j < 0 {
			return tcl.Empty, nil
		}
		s = s[j+len(sep):]
	}
}

// cut applies substr/findstr's terminator: a count of characters or a
// string to stop before.
func cut(s string, term tcl.Value) string {
	if n, err := term.Int64(); err == nil {
		if n < 0 {
			n = 0
		}
		if int(n) < len(s) {
			return s[:n]
		}
		return s
	}
	if i := strings.Index(s, term.String()); i >= 0 {
		return s[:i]
	}
	return s
}

func cmdSubstr(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 3 && len(args) != 4 {
		return tcl.Empty, tcl.WrongArgs("substr string skip_count ?terminator?")
	}
	s := args[1].String()
	skip, err := args[2].Int64()
	if err != nil {
		return tcl.Empty, err
	}
	if skip < 0 {
		skip = 0
	}
	if int(skip) >= len(s) {
		return tcl.Empty, nil
	}
	s = s[skip:]
	if len(args) == 4 {
		s = cut(s, args[3])
	}
	return tcl.Str(s), nil
}

func cmdFindstr(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) < 3 || len(args) > 5 {
		return tcl.Empty, tcl.WrongArgs("findstr string search_string ?skip_count? ?terminator?")
	}
	s := args[1].String()
	i := strings.Index(s, args[2].String())
	if i < 0 {
		return tcl.Empty, nil
	}
	s = s[i:]
	if len(args) >= 4 {
		skip, err := args[3].Int64()
		if err != nil {
			return tcl.Empty, err
		}
		if int(skip) >= len(s) {
			return tcl.Empty, nil
		}
		if skip > 0 {
			s = s[skip:]
		}
	}
	if len(args) == 5 {
		s = cut(s, args[4])
	}
	return tcl.Str(s), nil
}
