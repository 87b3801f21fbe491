package rules

import (
	"net/netip"
	"strconv"
	"strings"

	"github.com/openltm/openltm/rules/tcl"
)

// The LSN:: and XLAT:: commands' compile checks: `create ltm rule` reads
// their literal words as the commands will when they run (the same
// parsers) and refuses, at the word's line:column, a subcommand, option,
// arity, address, port, protocol or lifetime they would refuse, so that
// a misspelt option is not found by the first subscriber's connection.
// A word substituted at run time ($var, [cmd]) is left to the run, and
// so is the arity when such a word stands where an option may be. The
// forms BIG-IP takes and openltm does not act on (-dslite, -prefix,
// XLAT::listen -hairpin, -inherit-main-rules, inherit-vs) mark the rule
// unsupported: it is kept with a warning.

// lsnCheck reads one command's words at compile time.
type lsnCheck struct {
	c     *tcl.Compiler
	name  string
	usage string
}

// lit is word i's text when it is literal.
func (k lsnCheck) lit(i int) (string, bool) { return k.c.Literal(i) }

// wrongArgs is the command's usage error, at the command.
func (k lsnCheck) wrongArgs() error {
	return k.c.Errorf(0, "wrong # args: should be %q", k.usage)
}

// at runs parse over word i when it is literal; its error is placed at
// the word.
func (k lsnCheck) at(i int, parse func(string) error) error {
	w, ok := k.lit(i)
	if !ok {
		return nil
	}
	if err := parse(w); err != nil {
		return k.c.Errorf(i, "%s", err.Error())
	}
	return nil
}

// unsupported marks the rule as using a form openltm does not act on.
func (k lsnCheck) unsupported(i int, form string) {
	if r, ok := k.c.Context().(*Rule); ok {
		line, col := k.c.Pos(i)
		r.unsupported = append(r.unsupported, Unsupported{Kind: "command", Name: k.name + " " + form, Line: line, Col: col})
	}
}

func (k lsnCheck) endpoint(i int, what string, needPort bool) error {
	return k.at(i, func(s string) error {
		_, err := parseEndpoint(k.name, what, s, needPort)
		return err
	})
}

func (k lsnCheck) proto(i int) error {
	return k.at(i, func(s string) error {
		_, err := parseProto(k.name, s)
		return err
	})
}

func (k lsnCheck) life(i int) error {
	return k.at(i, func(s string) error {
		_, err := parseLife(k.name, s)
		return err
	})
}

func (k lsnCheck) addr(i int, what string) error {
	return k.at(i, func(s string) error {
		if _, err := netip.ParseAddr(s); err != nil {
			return tcl.Errorf("%s: %s %q is not an IP address", k.name, what, s)
		}
		return nil
	})
}

func (k lsnCheck) port(i int, what string) error {
	return k.at(i, func(s string) error {
		if _, err := strconv.ParseUint(s, 10, 16); err != nil {
			return tcl.Errorf("%s: %s %q is not a port (0 to 65535)", k.name, what, s)
		}
		return nil
	})
}

// all runs checks in turn, answering the first error.
func all(errs ...func() error) error {
	for _, f := range errs {
		if err := f(); err != nil {
			return err
		}
	}
	return nil
}

// options walks the options from word i: opt answers how many words an
// option takes after it, or an error; done (false) when a word computed
// at run time stands where an option may be and the rest cannot be
// told apart (unless rest words remain, which the command takes after
// its options). It answers the first word after the options.
func (k lsnCheck) options(i, rest int, opt func(i int, o string) (int, bool, error)) (next int, done bool, err error) {
	n := k.c.NumWords()
	for i < n {
		w, ok := k.lit(i)
		if !ok {
			return i, n-i == rest, nil
		}
		if !strings.HasPrefix(w, "-") {
			break
		}
		skip, goOn, err := opt(i, w)
		if err != nil || !goOn {
			return i, false, err
		}
		i += 1 + skip
	}
	return i, true, nil
}

// steers marks the rule as having an LSN:: steering command
// (Program.SteersLSN).
func steers(c *tcl.Compiler) {
	if r, ok := c.Context().(*Rule); ok {
		r.steersLSN = true
	}
}

// lsnArity checks a steering command's number of words.
func lsnArity(name, usage string, lo, hi int) func(c *tcl.Compiler) error {
	return func(c *tcl.Compiler) error {
		steers(c)
		if n := c.NumWords(); n < lo || n > hi {
			return lsnCheck{c: c, name: name, usage: usage}.wrongArgs()
		}
		return nil
	}
}

func lsnPoolHook(c *tcl.Compiler) error {
	if err := lsnArity("LSN::pool", "LSN::pool pool_name", 2, 2)(c); err != nil {
		return err
	}
	return refHook("lsn-pool", 1)(c)
}

func lsnAddressHook(c *tcl.Compiler) error {
	steers(c)
	k := lsnCheck{c: c, name: "LSN::address", usage: "LSN::address ?address?"}
	if c.NumWords() > 2 {
		return k.wrongArgs()
	}
	return k.at(1, func(s string) error {
		if _, err := netip.ParseAddr(s); err != nil {
			return tcl.Errorf("LSN::address: %q is not an IP address", s)
		}
		return nil
	})
}

func lsnPortHook(c *tcl.Compiler) error {
	steers(c)
	k := lsnCheck{c: c, name: "LSN::port", usage: "LSN::port ?port?"}
	if c.NumWords() > 2 {
		return k.wrongArgs()
	}
	return k.at(1, func(s string) error {
		if p, err := strconv.ParseUint(s, 10, 16); err != nil || p == 0 {
			return tcl.Errorf("LSN::port: %q is not a port (1 to 65535)", s)
		}
		return nil
	})
}

func lsnPersistenceHook(c *tcl.Compiler) error {
	steers(c)
	k := lsnCheck{c: c, name: "LSN::persistence", usage: "LSN::persistence none ?timeout? | (address | address-port) timeout"}
	n := c.NumWords()
	if n < 2 || n > 3 {
		return k.wrongArgs()
	}
	if mode, ok := k.lit(1); ok {
		switch mode {
		case "none":
		case "address", "address-port", "strict-address-port":
			if n != 3 {
				return k.wrongArgs()
			}
		default:
			return c.Errorf(1, "LSN::persistence: %q is not none, address or address-port", mode)
		}
	}
	return k.at(2, func(s string) error {
		if _, err := strconv.ParseUint(s, 10, 32); err != nil {
			return tcl.Errorf("LSN::persistence: timeout %q is not a number of seconds", s)
		}
		return nil
	})
}

func lsnInboundHook(c *tcl.Compiler) error {
	steers(c)
	k := lsnCheck{c: c, name: "LSN::inbound", usage: "LSN::inbound disable|enable"}
	if c.NumWords() != 2 {
		return k.wrongArgs()
	}
	return k.at(1, func(s string) error {
		if s != "disable" && s != "enable" {
			return tcl.Errorf("LSN::inbound: bad option %q: must be disable or enable", s)
		}
		return nil
	})
}

func inboundEntryHook(c *tcl.Compiler) error {
	k := lsnCheck{c: c, name: "LSN::inbound-entry", usage: "LSN::inbound-entry get|delete TRANS_ADDR:PORT PROTO | create ?-mirror? ?-override? POOL TIMEOUT CLIENT_ADDR:PORT TRANS_ADDR:PORT PROTO"}
	n := c.NumWords()
	if n < 2 {
		return k.wrongArgs()
	}
	sub, ok := k.lit(1)
	if !ok {
		return nil
	}
	switch sub {
	case "get", "delete":
		if n != 4 {
			return k.wrongArgs()
		}
		return all(func() error { return k.endpoint(2, "translation", true) }, func() error { return k.proto(3) })
	case "create":
		i, done, err := k.options(2, 5, func(i int, o string) (int, bool, error) {
			switch o {
			case "-mirror", "-override":
				return 0, true, nil
			case "-dslite", "-prefix":
				k.unsupported(i, o)
				return 0, false, nil
			}
			return 0, false, c.Errorf(i, "LSN::inbound-entry: bad option %q: must be -mirror or -override", o)
		})
		if err != nil || !done {
			return err
		}
		if n-i != 5 {
			return k.wrongArgs()
		}
		return all(func() error { return k.life(i + 1) },
			func() error { return k.endpoint(i+2, "client", true) },
			func() error { return k.endpoint(i+3, "translation", true) },
			func() error { return k.proto(i + 4) })
	}
	return c.Errorf(1, "LSN::inbound-entry: bad subcommand %q: must be create, delete or get", sub)
}

func persistenceEntryHook(c *tcl.Compiler) error {
	k := lsnCheck{c: c, name: "LSN::persistence-entry", usage: "LSN::persistence-entry get|delete CLIENT_ADDR?:PORT? | create ?-override? ?POOL? CLIENT_ADDR?:PORT? TRANS_ADDR?:PORT? ?TIMEOUT?"}
	n := c.NumWords()
	if n < 3 {
		return k.wrongArgs()
	}
	sub, ok := k.lit(1)
	if !ok {
		return nil
	}
	switch sub {
	case "get", "delete":
		if n != 3 {
			return k.wrongArgs()
		}
		return k.endpoint(2, "client", false)
	case "create":
		i := 2
		if w, ok := k.lit(i); ok && w == "-override" {
			i++
		}
		w, ok := k.lit(i)
		if !ok { // a pool or the client, told apart when it runs
			if n-i < 2 || n-i > 4 {
				return k.wrongArgs()
			}
			return nil
		}
		if _, err := parseEndpoint(k.name, "client", w, false); err != nil && i < n {
			i++ // a pool's name
		}
		if n-i < 2 || n-i > 3 {
			return k.wrongArgs()
		}
		return all(func() error { return k.endpoint(i, "client", false) },
			func() error { return k.endpoint(i+1, "translation", false) },
			func() error { return k.life(i + 2) })
	}
	return c.Errorf(1, "LSN::persistence-entry: bad subcommand %q: must be create, delete or get", sub)
}

func xlatListenHook(c *tcl.Compiler) error {
	k := lsnCheck{c: c, name: "XLAT::listen", usage: xlatListenUsage}
	n := c.NumWords()
	i, done, err := k.options(1, 2, func(i int, o string) (int, bool, error) {
		switch o {
		case "-single-connection", "-translation-loose":
			return 0, true, nil
		case "-hairpin", "-inherit-main-rules":
			k.unsupported(i, o)
			return 0, false, nil
		}
		return 0, false, c.Errorf(i, "XLAT::listen: bad option %q: must be -single-connection, -translation-loose, -hairpin or -inherit-main-rules", o)
	})
	if err != nil || !done {
		return err
	}
	if n-i != 2 {
		return k.wrongArgs()
	}
	if err := k.life(i); err != nil {
		return err
	}
	return k.listenBody(i + 1)
}

// listenBody checks XLAT::listen's literal body clause by clause, each
// error at its clause's line and column; a clause with a substitution
// is left to the run (the command substs the body), and so is the
// body's server when there is one.
func (k lsnCheck) listenBody(i int) error {
	body, ok := k.lit(i)
	if !ok {
		return nil
	}
	var st listenBody
	var e LSNEntry
	substituted := false
	start := 0
	for j := 0; j <= len(body); j++ {
		if j < len(body) && body[j] != '\n' && body[j] != ';' {
			continue
		}
		clause := body[start:j]
		off := start + len(clause) - len(strings.TrimLeft(clause, " \t\r"))
		start = j + 1
		if strings.TrimSpace(clause) == "" {
			continue
		}
		if strings.ContainsAny(clause, "$[\\") {
			substituted = true
			continue
		}
		if f := strings.Fields(clause); f[0] == "inherit-vs" {
			k.unsupported(i, "inherit-vs")
			return nil
		}
		if err := st.clause(clause, &e); err != nil {
			return k.c.ErrorfWithin(i, off, "%s", err.Error())
		}
	}
	if !substituted && !e.Client.IsValid() {
		return k.c.Errorf(i, "XLAT::listen: no server: %s", xlatListenUsage)
	}
	return nil
}

func listenLifetimeHook(c *tcl.Compiler) error {
	k := lsnCheck{c: c, name: "XLAT::listen_lifetime", usage: "XLAT::listen_lifetime HANDLE ?LIFETIME?"}
	n := c.NumWords()
	if n < 2 || n > 3 {
		return k.wrongArgs()
	}
	return all(func() error {
		return k.at(1, func(s string) error {
			if _, _, ok := parseHandle(s); !ok {
				return tcl.Errorf("%s: %q is not a listener handle (XLAT::listen's answer)", k.name, s)
			}
			return nil
		})
	}, func() error { return k.life(2) })
}

func reservationHook(c *tcl.Compiler) error {
	k := lsnCheck{c: c, name: "XLAT::src_endpoint_reservation", usage: "XLAT::src_endpoint_reservation create ?-no-persist? ?-pool POOL? ?-translation-loose|-translation-strict ADDR PORT? CLIENT_IP CLIENT_PORT PROTO LIFETIME | update_lifetime ADDR PORT POOL PROTO LIFETIME | get ADDR PORT POOL PROTO"}
	n := c.NumWords()
	if n < 2 {
		return k.wrongArgs()
	}
	sub, ok := k.lit(1)
	if !ok {
		return nil
	}
	switch sub {
	case "create":
		i, done, err := k.options(2, 4, func(i int, o string) (int, bool, error) {
			switch o {
			case "-no-persist":
				return 0, true, nil
			case "-pool":
				if i+1 >= n {
					return 0, false, k.wrongArgs()
				}
				return 1, true, nil
			case "-translation-loose", "-translation-strict":
				if i+2 >= n {
					return 0, false, k.wrongArgs()
				}
				return 2, true, all(func() error { return k.addr(i+1, o+" address") }, func() error { return k.port(i+2, o+" port") })
			case "-dslite":
				k.unsupported(i, o)
				return 0, false, nil
			}
			return 0, false, c.Errorf(i, "%s: bad option %q: must be -no-persist, -pool, -translation-loose, -translation-strict or -dslite", k.name, o)
		})
		if err != nil || !done {
			return err
		}
		if n-i != 4 {
			return k.wrongArgs()
		}
		return all(func() error { return k.addr(i, "client") }, func() error { return k.port(i+1, "client port") },
			func() error { return k.proto(i + 2) }, func() error { return k.life(i + 3) })
	case "get", "update_lifetime":
		want := 6
		if sub == "update_lifetime" {
			want = 7
		}
		if n != want {
			return k.wrongArgs()
		}
		return all(func() error { return k.addr(2, "translation") }, func() error { return k.port(3, "translation port") },
			func() error { return k.proto(5) }, func() error { return k.life(6) })
	}
	return c.Errorf(1, "%s: bad subcommand %q: must be create, get or update_lifetime", k.name, sub)
}
