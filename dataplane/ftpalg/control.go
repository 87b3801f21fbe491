package ftpalg

import (
	"net/netip"
	"strconv"
	"strings"
)

// Options is an ftp profile as the gateway applies it; the daemon fills
// it in from the profile's effective properties.
type Options struct {
	// Profile is the ftp profile's full path, for logs.
	Profile string
	// DataPort is the profile's port (ftp-data, 20): the source port of
	// the active data connections the gateway opens to clients; 0 lets
	// the system choose [M].
	DataPort uint16
	// TranslateExtended turns a client's EPSV and EPRT into PASV and
	// PORT toward an IPv4 member (F5: "automatically translates RFC 2428
	// extended requests EPSV and EPRT to PASV and PORT when
	// communicating with IPv4 servers").
	TranslateExtended bool
	// AllowFTPS lets a client's AUTH TLS (or AUTH SSL) through; the
	// control channel is then passed untouched, since it can no longer
	// be read. Without it AUTH is refused.
	AllowFTPS bool
	// RequireFTPS (FTP::ftps_mode require) refuses the data commands
	// (PASV, EPSV, PORT, EPRT) until AUTH has turned the control channel
	// to TLS: no transfer in the clear. It goes with AllowFTPS.
	RequireFTPS bool
	// NoActive (FTP::allow_active_mode disable) refuses PORT and EPRT:
	// only passive transfers, whose data connections the client opens.
	NoActive bool
	// PassiveFirst and PassiveLast (FTP::port) bound the ports of the
	// passive data listeners the client is told of; 0: any port.
	PassiveFirst, PassiveLast uint16
}

// Action is what the proxy does with one control line.
type Action uint8

// The actions of a Decision.
const (
	// Forward sends Decision.Line on to the other side.
	Forward Action = iota
	// Reply sends Decision.Line back to the client, whose command the
	// gateway answered itself: the member never sees it.
	Reply
	// OpenActive: the client announced Decision.Addr for an active data
	// connection. The proxy listens toward the member and sends the
	// member ActiveCommand's line.
	OpenActive
	// OpenPassive: the member announced Decision.Addr for a passive data
	// connection. The proxy listens for the client on the virtual's
	// address and sends the client PassiveAnswer's line.
	OpenPassive
	// CancelActive forwards Decision.Line (the member refused the active
	// address): the listener toward the member is not needed any more.
	CancelActive
	// PassThrough forwards Decision.Line, after which both directions
	// pass untouched (the control channel turns to TLS).
	PassThrough
)

// Decision is the gateway's verdict on one control line.
type Decision struct {
	Action Action
	// Line is the line to send, with its CRLF (empty for OpenActive and
	// OpenPassive, whose line depends on the listener).
	Line string
	// Addr is the announced data address (OpenActive, OpenPassive). For
	// a 229 answer, which names only a port, the address is invalid.
	Addr netip.AddrPort
	// Await, on a forwarded AUTH, asks the proxy to read nothing more
	// from the client until the member's answer is handled: after a 234
	// the client's next bytes are a TLS handshake, not a line.
	Await bool
}

// pending is the data command whose answer the gateway waits for.
type pending uint8

const (
	none pending = iota
	passive
	active
)

// Control follows one control connection. It is not safe for use by
// the two directions at once: the proxy serializes its calls.
type Control struct {
	opt Options
	// clientV4 and memberV4 are the address families of the virtual's
	// address and of the member: 227 and PORT carry IPv4 only.
	clientV4, memberV4 bool

	want pending
	// askedExt: the client's data command was EPSV or EPRT (its answer
	// takes that form); sentExt: the member was sent the extended form.
	askedExt, sentExt bool
	// multi is the code of an open multi-line answer ("" when none):
	// only its last line ("ddd text") is acted on.
	multi string
	// auth: an AUTH was forwarded and its answer is awaited.
	auth bool
}

// NewControl starts following a control connection whose client reached
// an address of family clientV4 and whose member is of family memberV4.
func NewControl(opt Options, clientV4, memberV4 bool) *Control {
	return &Control{opt: opt, clientV4: clientV4, memberV4: memberV4}
}

// Canned answers of the gateway itself [M: the texts are openltm's; the
// codes are RFC 959, 2228 and 2428's].
const (
	lineSyntax      = "501 Syntax error in parameters or arguments.\r\n"
	lineEPRTProto   = "522 Network protocol not supported, use (1,2)\r\n"
	linePASVv6      = "425 PASV is not available over IPv6, use EPSV.\r\n"
	lineAuthRefused = "534 Request denied for policy reasons: FTPS is not allowed on this virtual server.\r\n"
	lineEPSVAll     = "200 EPSV ALL command successful.\r\n"
	lineNoPassive   = "425 Can't open data connection.\r\n"
	lineNoActive    = "502 Active mode is not allowed on this virtual server, use PASV or EPSV.\r\n"
	lineTLSFirst    = "534 Request denied for policy reasons: AUTH TLS is required before data transfers.\r\n"
)

// FromClient decides on one line the client sent (with its line end).
func (c *Control) FromClient(line string) Decision {
	verb, arg := splitCommand(line)
	switch verb {
	case "PORT", "EPRT", "PASV", "EPSV":
		if c.opt.RequireFTPS {
			return Decision{Action: Reply, Line: lineTLSFirst}
		}
	}
	switch verb {
	case "PORT", "EPRT":
		if c.opt.NoActive {
			return Decision{Action: Reply, Line: lineNoActive}
		}
		ap, err := ParseHostPort(arg)
		if verb == "EPRT" {
			ap, err = ParseEPRT(arg)
		}
		switch {
		case err == ErrProtocol:
			return Decision{Action: Reply, Line: lineEPRTProto}
		case err != nil:
			return Decision{Action: Reply, Line: lineSyntax}
		}
		c.want, c.askedExt = active, verb == "EPRT"
		return Decision{Action: OpenActive, Addr: ap}
	case "PASV":
		if !c.clientV4 {
			return Decision{Action: Reply, Line: linePASVv6}
		}
		c.want, c.askedExt, c.sentExt = passive, false, !c.memberV4
		if c.sentExt {
			return Decision{Action: Forward, Line: "EPSV\r\n"} // a 227 cannot name an IPv6 member
		}
		return Decision{Action: Forward, Line: line}
	case "EPSV":
		if strings.EqualFold(arg, "ALL") {
			if c.memberV4 && c.opt.TranslateExtended {
				// The member is sent PASV and PORT from now on: it must
				// not be told to refuse them [M].
				return Decision{Action: Reply, Line: lineEPSVAll}
			}
			return Decision{Action: Forward, Line: line}
		}
		c.want, c.askedExt = passive, true
		c.sentExt = !c.memberV4 || !c.opt.TranslateExtended
		if c.sentExt {
			// The argument names the client side's family; the member's
			// side is the member's own [M].
			return Decision{Action: Forward, Line: "EPSV\r\n"}
		}
		return Decision{Action: Forward, Line: "PASV\r\n"}
	case "AUTH":
		if !c.opt.AllowFTPS {
			return Decision{Action: Reply, Line: lineAuthRefused}
		}
		c.auth = true
		return Decision{Action: Forward, Line: line, Await: true}
	}
	return Decision{Action: Forward, Line: line}
}

// ActiveCommand is the line the member is sent after an OpenActive, for
// the proxy's listener l toward it: PORT unless the client sent EPRT and
// translate-extended is off, or l is not IPv4.
func (c *Control) ActiveCommand(l netip.AddrPort) string {
	c.sentExt = !l.Addr().Unmap().Is4() || c.askedExt && !c.opt.TranslateExtended
	if c.sentExt {
		return "EPRT " + FormatEPRT(l) + "\r\n"
	}
	return "PORT " + FormatHostPort(l) + "\r\n"
}

// PassiveAnswer is the line the client is sent after an OpenPassive, for
// the proxy's listener l on the virtual's address: a 227 naming it, or a
// 229 naming its port when the client asked with EPSV.
func (c *Control) PassiveAnswer(l netip.AddrPort) string {
	c.want = none
	if c.askedExt {
		return "229 Entering Extended Passive Mode (|||" + strconv.Itoa(int(l.Port())) + "|)\r\n"
	}
	return "227 Entering Passive Mode (" + FormatHostPort(l) + ").\r\n"
}

// FromMember decides on one line the member sent (with its line end).
func (c *Control) FromMember(line string) Decision {
	fwd := Decision{Action: Forward, Line: line}
	code, last := c.replyLine(line)
	if !last {
		return fwd
	}
	if c.auth {
		c.auth = false
		if code == "234" {
			return Decision{Action: PassThrough, Line: line}
		}
		return fwd
	}
	switch c.want {
	case passive:
		if code[0] == '1' {
			return fwd
		}
		c.want = none
		var ap netip.AddrPort
		var err error
		switch {
		case code == "227" && !c.sentExt:
			ap, err = Parse227(line[3:])
		case code == "229" && c.sentExt:
			var p uint16
			p, err = Parse229(line[3:])
			ap = netip.AddrPortFrom(netip.Addr{}, p)
		default:
			return fwd // a refusal passes as the member wrote it
		}
		if err != nil {
			return Decision{Action: Forward, Line: lineNoPassive}
		}
		c.want = passive // until PassiveAnswer
		return Decision{Action: OpenPassive, Addr: ap}
	case active:
		if code[0] == '1' {
			return fwd
		}
		c.want = none
		if code[0] != '2' {
			return Decision{Action: CancelActive, Line: line}
		}
	}
	return fwd
}

// replyLine reads an answer line's code and whether it ends its answer
// (RFC 959 4.2: "ddd-" opens a multi-line answer that the first line
// starting "ddd " closes; the lines between may be anything).
func (c *Control) replyLine(line string) (code string, last bool) {
	if len(line) < 3 || !isDigit(line[0]) || !isDigit(line[1]) || !isDigit(line[2]) {
		return "", false
	}
	code = line[:3]
	sep := byte(' ')
	if len(line) > 3 {
		sep = line[3]
	}
	if c.multi != "" {
		if code == c.multi && sep != '-' {
			c.multi = ""
			return code, true
		}
		return "", false
	}
	if sep == '-' {
		c.multi = code
		return "", false
	}
	return code, true
}

// splitCommand splits a command line into its verb (upper case) and its
// argument, without the line end.
func splitCommand(line string) (verb, arg string) {
	line = strings.TrimRight(line, "\r\n")
	verb, arg, _ = strings.Cut(line, " ")
	return strings.ToUpper(strings.TrimSpace(verb)), strings.TrimSpace(arg)
}

// Abandon forgets the data command in progress, when the proxy could not
// open its listener and answered the client itself.
func (c *Control) Abandon() { c.want = none }

// AuthPending reports whether a forwarded AUTH awaits the member's
// answer: the proxy reads nothing more from the client until then.
func (c *Control) AuthPending() bool { return c.auth }
