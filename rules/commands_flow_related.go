package rules

import (
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/openltm/openltm/rules/tcl"
)

// FLOW::create_related creates a related connection, as BIG-IP does for
// a protocol's second channel whose both ends the rule knows:
//
//	FLOW::create_related ?-translation-loose? ?-hairpin? {
//	    ?proto 6|17?
//	    clientflow ?-local-ip ADDR? ?-local-port PORT? REMOTE_ADDR REMOTE_PORT VLAN
//	    serverflow ?-local-ip ADDR? ?-local-port PORT? REMOTE_ADDR REMOTE_PORT VLAN
//	    ?inherit-vs VIRTUAL?
//	}
//
// BIG-IP expects the related connection's first packet from the client
// flow's remote end, to the client flow's local end; the connection is
// then joined to the server flow. openltm does it with the related
// listener of `listen` (ListenConn): bound to the client flow's local
// address and port (the virtual server's address and a port the system
// chooses when left out), taking one connection from the client flow's
// remote address and port (port 0: any), proxied to the server flow's
// remote end as a flow of the virtual server. Choices where F5 says
// nothing or openltm differs [M]:
//   - the related connection waits 30 seconds for its first packet (as
//     listen's default), and counts among the connection's 16 listeners;
//   - the server flow leaves from the virtual server's SNAT source: a
//     server flow -local-ip or -local-port is a Tcl error rather than
//     ignored;
//   - VLAN words are read and not used (the address is bound on every
//     VLAN), as listen's;
//   - inherit-vs may name only the rule's own virtual server (the
//     related flow is one of its flows); another is a Tcl error;
//   - -translation-loose takes another port when the client flow's
//     local port is taken; -hairpin, which needs an LSN source
//     translation, is a Tcl error;
//   - the result is the client flow as F5 writes a flow:
//     local_addr,local_port,remote_addr,remote_port,vlan,protocol. It
//     is not a handle the other FLOW:: commands take (they reach only
//     the rule's own connection).

const createRelatedUsage = "FLOW::create_related ?-translation-loose? ?-hairpin? {?proto 6|17? clientflow ?-local-ip ADDR? ?-local-port PORT? REMOTE_ADDR REMOTE_PORT VLAN; serverflow REMOTE_ADDR REMOTE_PORT VLAN; ?inherit-vs VIRTUAL?}"

// relatedFlow is one flow clause of FLOW::create_related.
type relatedFlow struct {
	local  netip.AddrPort // zero parts: not given
	remote netip.AddrPort
	vlan   string
	given  bool
}

func cmdFlowCreateRelated(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const cmd = "FLOW::create_related"
	s, c, err := sess(in, cmd)
	if err != nil {
		return tcl.Empty, err
	}
	loose := false
	rest := args[1:]
	for len(rest) > 1 && strings.HasPrefix(rest[0].String(), "-") {
		switch o := rest[0].String(); o {
		case "-translation-loose":
			loose = true
		case "-hairpin":
			return tcl.Empty, tcl.Errorf("%s: -hairpin needs an LSN or dynamic PAT source translation, which this virtual server does not have", cmd)
		default:
			return tcl.Empty, tcl.Errorf("%s: bad option %q: must be -translation-loose or -hairpin", cmd, o)
		}
		rest = rest[1:]
	}
	if len(rest) != 1 {
		return tcl.Empty, tcl.WrongArgs(createRelatedUsage)
	}
	body, err := in.EvalValue(tcl.List(tcl.Str("subst"), rest[0]))
	if err != nil {
		return tcl.Empty, err
	}
	proto, cf, sf, inherit, err := parseCreateRelated(body.String())
	if err != nil {
		return tcl.Empty, err
	}
	if inherit != "" {
		li, ok := c.(LBInfo)
		if !ok || FullName(inherit) != li.VirtualName() {
			return tcl.Empty, tcl.Errorf("%s: inherit-vs %s: the related flow can only be one of this virtual server's own", cmd, inherit)
		}
	}
	lc, ok := c.(ListenConn)
	if !ok {
		return tcl.Empty, tcl.Errorf("%s: the virtual server cannot open related flows (a standard TCP or UDP virtual server can)", cmd)
	}
	s.pruneListeners()
	if len(s.listeners) >= maxListeners {
		return tcl.Empty, tcl.Errorf("%s: %d related flows and listeners this connection opened are waiting already", cmd, maxListeners)
	}
	spec := ListenSpec{Proto: proto, Timeout: listenTimeout, VLAN: cf.vlan, Bind: cf.local, Server: sf.remote,
		Allow: cf.remote.Addr(), AllowPort: cf.remote.Port()}
	ap, err := lc.Listen(spec)
	if err != nil && loose && spec.Bind.Port() != 0 {
		spec.Bind = netip.AddrPortFrom(spec.Bind.Addr(), 0)
		ap, err = lc.Listen(spec)
	}
	if err != nil {
		return tcl.Empty, tcl.Errorf("%s: %v", cmd, err)
	}
	s.listeners = append(s.listeners, time.Now().Add(spec.Timeout))
	return tcl.Str(strings.Join([]string{ap.Addr().String(), strconv.Itoa(int(ap.Port())), cf.remote.Addr().String(),
		strconv.Itoa(int(cf.remote.Port())), cf.vlan, strconv.Itoa(proto)}, ",")), nil
}

// parseCreateRelated reads FLOW::create_related's substituted body.
func parseCreateRelated(body string) (proto int, cf, sf relatedFlow, inherit string, err error) {
	const cmd = "FLOW::create_related"
	proto = 6
	seen := map[string]bool{}
	for _, line := range strings.FieldsFunc(body, func(r rune) bool { return r == '\n' || r == ';' }) {
		words, lerr := tcl.AsList(tcl.Str(line))
		if lerr != nil {
			return 0, cf, sf, "", tcl.Errorf("%s: bad clause %q: %v", cmd, strings.TrimSpace(line), lerr)
		}
		if len(words) == 0 {
			continue
		}
		key, w := words[0].String(), make([]string, len(words)-1)
		for i, v := range words[1:] {
			w[i] = v.String()
		}
		if seen[key] {
			return 0, cf, sf, "", tcl.Errorf("%s: %s given twice", cmd, key)
		}
		seen[key] = true
		switch key {
		case "proto":
			if len(w) != 1 {
				return 0, cf, sf, "", tcl.Errorf("%s: proto takes one IP protocol number (6 or 17)", cmd)
			}
			switch strings.ToLower(w[0]) {
			case "6", "tcp":
				proto = 6
			case "17", "udp":
				proto = 17
			default:
				return 0, cf, sf, "", tcl.Errorf("%s: bad proto %q: expected 6 (TCP) or 17 (UDP)", cmd, w[0])
			}
		case "clientflow", "serverflow":
			f, ferr := parseRelatedFlow(key, w)
			if ferr != nil {
				return 0, cf, sf, "", ferr
			}
			if key == "clientflow" {
				cf = f
			} else {
				sf = f
			}
		case "inherit-vs":
			if len(w) != 1 {
				return 0, cf, sf, "", tcl.Errorf("%s: inherit-vs takes one virtual server name", cmd)
			}
			inherit = w[0]
		default:
			return 0, cf, sf, "", tcl.Errorf("%s: bad clause %q: must be proto, clientflow, serverflow or inherit-vs", cmd, key)
		}
	}
	if !cf.given || !sf.given {
		return 0, cf, sf, "", tcl.Errorf("%s: both clientflow and serverflow are needed: %s", cmd, createRelatedUsage)
	}
	if sf.local.Addr().IsValid() || sf.local.Port() != 0 {
		return 0, cf, sf, "", tcl.Errorf("%s: serverflow -local-ip and -local-port are not supported: the server flow leaves from the virtual server's SNAT source", cmd)
	}
	if sf.remote.Port() == 0 || !sf.remote.Addr().IsValid() {
		return 0, cf, sf, "", tcl.Errorf("%s: serverflow needs the server's address and port", cmd)
	}
	return proto, cf, sf, inherit, nil
}

// parseRelatedFlow reads one flow clause's words:
// ?-local-ip ADDR? ?-local-port PORT? REMOTE_ADDR REMOTE_PORT VLAN.
func parseRelatedFlow(key string, w []string) (relatedFlow, error) {
	const cmd = "FLOW::create_related"
	f := relatedFlow{given: true}
	var laddr netip.Addr
	var lport uint16
	for len(w) > 0 && strings.HasPrefix(w[0], "-") {
		if len(w) < 2 {
			return f, tcl.Errorf("%s: %s: %s needs a value", cmd, key, w[0])
		}
		var err error
		switch w[0] {
		case "-local-ip":
			if laddr, err = listenAddr(w[1]); err != nil {
				return f, err
			}
		case "-local-port":
			if lport, err = listenPort(w[1]); err != nil {
				return f, err
			}
		default:
			return f, tcl.Errorf("%s: %s: bad option %q: must be -local-ip or -local-port", cmd, key, w[0])
		}
		w = w[2:]
	}
	if len(w) != 3 {
		return f, tcl.Errorf("%s: %s takes ?-local-ip ADDR? ?-local-port PORT? REMOTE_ADDR REMOTE_PORT VLAN", cmd, key)
	}
	raddr, err := listenAddr(w[0])
	if err != nil {
		return f, err
	}
	rport, err := listenPort(w[1])
	if err != nil {
		return f, err
	}
	f.local, f.remote, f.vlan = netip.AddrPortFrom(laddr, lport), netip.AddrPortFrom(raddr, rport), w[2]
	return f, nil
}

func registerFlowRelated(t *tcl.Commands) {
	t.Register("FLOW::create_related", cmdFlowCreateRelated)
}
