package rules

import (
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/openltm/openltm/rules/tcl"
)

// listen sets up a related ephemeral listener, as BIG-IP's listen does
// for a protocol's second channel (an FTP or RTSP data connection whose
// source is unknown but whose destination the rule just told the
// client):
//
//	listen {
//	    proto 6
//	    timeout 30
//	    bind ?VLAN? ADDR PORT
//	    server ADDR PORT
//	    allow ADDR ?PORT?
//	}
//
// The body's words are substituted (`proto [IP::protocol]`, `allow
// $peer`), as F5's own examples write them inside braces. The listener
// takes one connection within timeout seconds, from allow's address (and
// port) when the rule names one, and the dataplane proxies it to
// server as a flow of the same virtual server. Choices where F5 says
// nothing [M]:
//   - bind may leave out the VLAN (openltm binds the address, on every
//     VLAN) and the address (`bind PORT`, or no bind at all: the
//     virtual server's own address); port 0, or no port, is one the
//     system chooses.
//   - timeout defaults to 30 seconds (an FTP member's own wait for its
//     passive connection) and is at most an hour. The listener lives
//     its timeout even when the connection whose rule opened it ends
//     first, as a Tuxedo client closes its WSL connection before it
//     opens the WSH one the answer named.
//   - listen returns the listener's address and port as a two-element
//     list, which the rule needs when it chose no port.
//   - proto 17 (UDP) takes the first datagram from an allowed peer as
//     its connection and relays that peer's datagrams both ways until
//     they stop.
//   - a connection may have at most 16 listeners waiting at once (the
//     dataplane bounds them all, too).

// ListenSpec is one listen command's body, read and checked.
type ListenSpec struct {
	// Proto is the IP protocol: 6 (TCP) or 17 (UDP).
	Proto int
	// Timeout is how long the listener waits for its connection.
	Timeout time.Duration
	// VLAN is bind's VLAN word, kept for logs; the address is bound on
	// every VLAN.
	VLAN string
	// Bind is the address to listen on: the zero Addr for the virtual
	// server's, port 0 for one the system chooses.
	Bind netip.AddrPort
	// Server is where the accepted connection goes.
	Server netip.AddrPort
	// Allow, when valid, is the only address the listener accepts a
	// connection from; AllowPort, when not 0, the only source port.
	Allow     netip.Addr
	AllowPort uint16
}

// ListenConn is the part of a connection listen needs (optional, by type
// assertion): Listen opens the listener and returns the address it is
// bound to. The listener must not hold up the rule: it accepts on its
// own, and closes by itself at its timeout.
type ListenConn interface {
	Listen(ListenSpec) (netip.AddrPort, error)
}

// Listen's defaults and bounds [M].
const (
	listenTimeout    = 30 * time.Second
	listenTimeoutMax = time.Hour
	maxListeners     = 16
)

const listenUsage = "listen {proto 6|17; timeout SECONDS; bind ?VLAN? ?ADDR? PORT; server ADDR PORT; allow ADDR ?PORT?}"

func cmdListen(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	s, c, err := sess(in, "listen")
	if err != nil {
		return tcl.Empty, err
	}
	if len(args) != 2 {
		return tcl.Empty, tcl.WrongArgs(listenUsage)
	}
	body, err := in.EvalValue(tcl.List(tcl.Str("subst"), args[1]))
	if err != nil {
		return tcl.Empty, err
	}
	spec, err := parseListen(body.String())
	if err != nil {
		return tcl.Empty, err
	}
	lc, ok := c.(ListenConn)
	if !ok {
		return tcl.Empty, tcl.Errorf("listen: the virtual server cannot open related listeners (a standard TCP or UDP virtual server can)")
	}
	s.pruneListeners()
	if len(s.listeners) >= maxListeners {
		return tcl.Empty, tcl.Errorf("listen: %d listeners this connection opened are waiting already", maxListeners)
	}
	ap, err := lc.Listen(spec)
	if err != nil {
		return tcl.Empty, tcl.Errorf("listen: %v", err)
	}
	s.listeners = append(s.listeners, time.Now().Add(spec.Timeout))
	return tcl.List(tcl.Str(ap.Addr().String()), tcl.Str(strconv.Itoa(int(ap.Port())))), nil
}

// parseListen reads listen's substituted body: clauses on lines or
// separated by semicolons.
func parseListen(body string) (ListenSpec, error) {
	spec := ListenSpec{Proto: 6, Timeout: listenTimeout}
	seen := map[string]bool{}
	for _, line := range strings.FieldsFunc(body, func(r rune) bool { return r == '\n' || r == ';' }) {
		words, err := tcl.AsList(tcl.Str(line))
		if err != nil {
			return spec, tcl.Errorf("listen: bad clause %q: %v", strings.TrimSpace(line), err)
		}
		if len(words) == 0 {
			continue
		}
		key, w := words[0].String(), make([]string, len(words)-1)
		for i, v := range words[1:] {
			w[i] = v.String()
		}
		if seen[key] {
			return spec, tcl.Errorf("listen: %s given twice", key)
		}
		seen[key] = true
		switch key {
		case "proto":
			if len(w) != 1 {
				return spec, tcl.Errorf("listen: proto takes one IP protocol number (6)")
			}
			switch strings.ToLower(w[0]) {
			case "6", "tcp":
				spec.Proto = 6
			case "17", "udp":
				spec.Proto = 17
			default:
				return spec, tcl.Errorf("listen: bad proto %q: expected 6 (TCP) or 17 (UDP)", w[0])
			}
		case "timeout":
			n, err := strconv.ParseInt(safeWord(w), 10, 64)
			if len(w) != 1 || err != nil || n <= 0 {
				return spec, tcl.Errorf("listen: bad timeout %q: expected seconds", strings.Join(w, " "))
			}
			spec.Timeout = min(time.Duration(n)*time.Second, listenTimeoutMax)
		case "bind":
			if len(w) < 1 || len(w) > 3 {
				return spec, tcl.Errorf("listen: bind takes ?VLAN? ?ADDR? PORT")
			}
			port, err := listenPort(w[len(w)-1])
			if err != nil {
				return spec, err
			}
			var addr netip.Addr
			if len(w) >= 2 {
				a := w[len(w)-2]
				if addr, err = listenAddr(a); err != nil {
					if len(w) == 3 {
						return spec, err
					}
					spec.VLAN, addr = a, netip.Addr{} // bind VLAN PORT
				}
			}
			if len(w) == 3 {
				spec.VLAN = w[0]
			}
			spec.Bind = netip.AddrPortFrom(addr, port)
		case "server":
			if len(w) != 2 {
				return spec, tcl.Errorf("listen: server takes ADDR PORT")
			}
			addr, err := listenAddr(w[0])
			if err != nil || !addr.IsValid() {
				return spec, tcl.Errorf("listen: bad server address %q", w[0])
			}
			port, err := listenPort(w[1])
			if err != nil || port == 0 {
				return spec, tcl.Errorf("listen: bad server port %q", w[1])
			}
			spec.Server = netip.AddrPortFrom(addr, port)
		case "allow":
			if len(w) < 1 || len(w) > 2 {
				return spec, tcl.Errorf("listen: allow takes ADDR ?PORT?")
			}
			addr, err := listenAddr(w[0])
			if err != nil {
				return spec, err
			}
			spec.Allow = addr
			if len(w) == 2 {
				if spec.AllowPort, err = listenPort(w[1]); err != nil {
					return spec, err
				}
			}
		default:
			return spec, tcl.Errorf("listen: bad clause %q: must be proto, timeout, bind, server or allow", key)
		}
	}
	if !spec.Server.IsValid() {
		return spec, tcl.Errorf("listen: no server: %s", listenUsage)
	}
	return spec, nil
}

func safeWord(w []string) string {
	if len(w) == 0 {
		return ""
	}
	return w[0]
}

// listenAddr reads an address word: an IP address, optionally with a
// route domain (%N, which openltm's one route domain ignores); "" and
// "any" are the zero Addr.
func listenAddr(s string) (netip.Addr, error) {
	if s == "" || s == "any" || s == "0.0.0.0" || s == "::" {
		return netip.Addr{}, nil
	}
	if i := strings.IndexByte(s, '%'); i > 0 {
		s = s[:i]
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, tcl.Errorf("listen: bad address %q", s)
	}
	return a.Unmap(), nil
}

// listenPort reads a port word; 0 and "any" are 0.
func listenPort(s string) (uint16, error) {
	if s == "any" {
		return 0, nil
	}
	n, err := strconv.ParseUint(s, 10, 16)
	if err != nil {
		return 0, tcl.Errorf("listen: bad port %q", s)
	}
	return uint16(n), nil
}

// pruneListeners forgets listeners past their timeout (they closed;
// one that took its connection sooner is counted until then).
func (s *ConnState) pruneListeners() {
	now := time.Now()
	kept := s.listeners[:0]
	for _, until := range s.listeners {
		if now.Before(until) {
			kept = append(kept, until)
		}
	}
	s.listeners = kept
}

func registerListen(t *tcl.Commands) {
	t.Register("listen", cmdListen)
}
