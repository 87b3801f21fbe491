package rules

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/openltm/openltm/rules/tcl"
)

// Sideband connections (connect, send, recv, close): a rule's own TCP or
// UDP connection to another service, as BIG-IP's sideband commands give
// one. A connection belongs to the client connection whose rule opened
// it and is closed when that connection ends (ConnState.Release), when
// the rule closes it, or after -idle seconds without use.
//
// BIG-IP suspends the rule while a command waits; rules here run each
// event through, as in `after`, so a command waits on its goroutine, no
// longer than its -timeout and never past the event's deadline [M]. The
// default timeouts are BIG-IP's: send and recv wait not at all unless
// told, connect waits for the connection (bounded here by the event).

// sideband is one open sideband connection.
type sideband struct {
	c        net.Conn
	proto    string
	buf      []byte // received, not yet returned (recv -peek, -eol)
	idle     time.Duration
	lastUsed time.Time
	tos      int
	myaddr   string
	myport   int
	status   string
	// release ends the steering's pass over a UDP destination
	// (Env.PassOver), held while the connection is open; nil: none.
	release func()
}

// close closes the connection and ends its pass, if it holds one.
func (sb *sideband) close() {
	sb.c.Close()
	if sb.release != nil {
		sb.release()
		sb.release = nil
	}
}

// sidebandIdle is -idle's default [M: BIG-IP's is the sideband virtual
// server's profile's idle timeout].
const sidebandIdle = 300 * time.Second

// connectWait is connect's default -timeout [M]; the event's deadline
// comes first.
const connectWait = 30 * time.Second

// maxSidebands bounds the sideband connections one client connection
// may hold open.
const maxSidebands = 64

// sidebandOf finds the rule's connection id.
func (s *ConnState) sidebandOf(cmd, id string) (*sideband, error) {
	sb := s.sidebands[id]
	if sb == nil {
		return nil, tcl.Errorf("%s: %q is not an open sideband connection", cmd, id)
	}
	if sb.idle > 0 && time.Since(sb.lastUsed) > sb.idle {
		sb.close()
		delete(s.sidebands, id)
		return nil, tcl.Errorf("%s: sideband connection %s was closed after %s idle", cmd, id, sb.idle)
	}
	sb.lastUsed = time.Now()
	return sb, nil
}

// closeSidebands closes every sideband connection of the client
// connection (it ended).
func (s *ConnState) closeSidebands() {
	for id, sb := range s.sidebands {
		sb.close()
		delete(s.sidebands, id)
	}
}

// waitFor is how long a command may wait: its -timeout; no longer than
// the event's deadline unless the connection's events wait alone
// (Blocker), where waited then moves the deadline by the time taken.
func waitFor(in *tcl.Interp, timeout time.Duration) time.Duration {
	if left, ok := in.Remaining(); ok && left < timeout && !mayBlock(in) {
		timeout = left
	}
	return max(timeout, 0)
}

// waited moves the event's deadline by the time since start, on a
// connection whose events wait alone (Blocker).
func waited(in *tcl.Interp, start time.Time) {
	if mayBlock(in) {
		in.Extend(time.Since(start))
	}
}

// waitHook marks a rule whose command waits on the network (sideband
// connect and recv, RESOLV::lookup) as one that waits, as `after ms`
// does (Program.Waits): its connections are kept off the event loops.
func waitHook(c *tcl.Compiler) error {
	if r, ok := c.Context().(*Rule); ok {
		r.waits = true
	}
	return nil
}

// options reads a command's leading -name value options (and bare flags)
// up to the first word that is not one, or `--`.
func options(cmd string, args []tcl.Value, withValue, flags map[string]bool) (map[string]string, []tcl.Value, error) {
	opts := map[string]string{}
	i := 0
	for i < len(args) {
		w := args[i].String()
		if w == "--" {
			i++
			break
		}
		if flags[w] {
			opts[w] = ""
			i++
			continue
		}
		if !withValue[w] {
			break
		}
		if i+1 >= len(args) {
			return nil, nil, tcl.Errorf("%s: %s needs a value", cmd, w)
		}
		opts[w] = args[i+1].String()
		i += 2
	}
	return opts, args[i:], nil
}

func msOption(cmd string, opts map[string]string, name string, def time.Duration) (time.Duration, error) {
	v, ok := opts[name]
	if !ok {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, tcl.Errorf("%s: %s expects milliseconds, a whole number of 0 or more, not %q", cmd, name, v)
	}
	return time.Duration(n) * time.Millisecond, nil
}

func setStatus(in *tcl.Interp, opts map[string]string, status string) error {
	if name, ok := opts["-status"]; ok {
		_, err := in.SetVar(name, tcl.Str(status))
		return err
	}
	return nil
}

func registerSideband(t *tcl.Commands) {
	t.Register("connect", cmdConnect).Compile = waitHook
	t.Register("send", cmdSend)
	t.Register("recv", cmdRecv).Compile = waitHook
	t.Register("close", cmdClose)
}

// cmdConnect is `connect ?-protocol TCP|UDP? ?-myaddr A? ?-myport P?
// ?-timeout MS? ?-idle S? ?-tos T? ?-status VAR? DESTINATION` (an
// address and port, or a virtual server's name: its address), and
// `connect info OPTION... ID`.
func cmdConnect(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const use = "connect ?-protocol TCP|UDP? ?-myaddr addr? ?-myport port? ?-timeout ms? ?-idle seconds? ?-tos tos? ?-status var? destination"
	if len(args) >= 3 && args[1].String() == "info" {
		return connectInfo(in, args[2:])
	}
	opts, rest, err := options("connect", args[1:], map[string]bool{"-protocol": true, "-myaddr": true, "-myport": true,
		"-timeout": true, "-idle": true, "-tos": true, "-status": true}, nil)
	if err != nil {
		return tcl.Empty, err
	}
	if len(rest) != 1 {
		return tcl.Empty, tcl.WrongArgs(use)
	}
	s, _, err := sess(in, "connect")
	if err != nil {
		return tcl.Empty, err
	}
	proto := strings.ToUpper(opts["-protocol"])
	switch proto {
	case "":
		proto = "TCP"
	case "TCP", "UDP":
	default:
		return tcl.Empty, tcl.Errorf("connect: -protocol %q is not TCP or UDP", opts["-protocol"])
	}
	timeout, err := msOption("connect", opts, "-timeout", connectWait)
	if err != nil {
		return tcl.Empty, err
	}
	idle := sidebandIdle
	if v, ok := opts["-idle"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return tcl.Empty, tcl.Errorf("connect: -idle expects seconds, a whole number of 0 or more, not %q", v)
		}
		idle = time.Duration(n) * time.Second
	}
	dest, named, err := s.sidebandDest(rest[0].String())
	if err != nil {
		return tcl.Empty, err
	}
	sb := &sideband{proto: proto, idle: idle, myaddr: opts["-myaddr"]}
	d := net.Dialer{Timeout: waitFor(in, timeout)}
	if v, ok := opts["-myport"]; ok {
		if sb.myport, err = strconv.Atoi(v); err != nil || sb.myport < 0 || sb.myport > 65535 {
			return tcl.Empty, tcl.Errorf("connect: -myport %q is not a port", v)
		}
	}
	if sb.myaddr != "" || sb.myport != 0 {
		a, err := netip.ParseAddr(strings.TrimSpace(sb.myaddr))
		if sb.myaddr != "" && err != nil {
			return tcl.Empty, tcl.Errorf("connect: -myaddr %q is not an IP address", sb.myaddr)
		}
		ip := net.IP(nil)
		if a.IsValid() {
			ip = a.AsSlice()
		}
		if proto == "UDP" {
			d.LocalAddr = &net.UDPAddr{IP: ip, Port: sb.myport}
		} else {
			d.LocalAddr = &net.TCPAddr{IP: ip, Port: sb.myport}
		}
	}
	if v, ok := opts["-tos"]; ok {
		if sb.tos, err = strconv.Atoi(v); err != nil || sb.tos < 0 || sb.tos > 255 {
			return tcl.Empty, tcl.Errorf("connect: -tos %q is not a number from 0 to 255", v)
		}
		tos := sb.tos
		d.Control = func(_, _ string, rc syscall.RawConn) error {
			var serr error
			rc.Control(func(fd uintptr) { serr = setTOS(int(fd), tos) })
			return serr
		}
	}
	if len(s.sidebands) >= maxSidebands {
		return tcl.Empty, tcl.Errorf("connect: %d sideband connections are open already", maxSidebands)
	}
	// An address the rule computed may be in what a wildcard or
	// network virtual steers, which the commit could not pass over: a
	// TCP destination is passed over for the connect (the SYN's lookup
	// is the only one), a UDP one while the connection is open (each
	// datagram to an unconnected socket is looked up) [M]. A virtual
	// named is reached as a client would reach it.
	release := func() {}
	if pass := s.prog.env.passOver(); pass != nil && !named {
		release = pass(dest, proto == "UDP")
	}
	start := time.Now()
	c, err := d.Dial(strings.ToLower(proto), dest.String())
	waited(in, start)
	if proto == "UDP" && err == nil {
		sb.release = release
	} else {
		release()
	}
	if err != nil {
		status := "failed"
		if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
			status = "timeout"
		}
		return tcl.Empty, setStatus(in, opts, status)
	}
	sb.c, sb.lastUsed, sb.status = c, time.Now(), "connected"
	if s.sidebands == nil {
		s.sidebands = map[string]*sideband{}
	}
	s.sidebandSeq++
	id := "sideband" + strconv.Itoa(s.sidebandSeq)
	s.sidebands[id] = sb
	if err := setStatus(in, opts, "connected"); err != nil {
		return tcl.Empty, err
	}
	return tcl.Str(id), nil
}

// sidebandDest reads a destination: ADDR:PORT, [V6]:PORT, V6.PORT (F5's
// form), or the name of a virtual server (its address; virtual true).
func (s *ConnState) sidebandDest(d string) (_ netip.AddrPort, virtual bool, _ error) {
	if ap, err := netip.ParseAddrPort(d); err == nil {
		return ap, false, nil
	}
	if i := strings.LastIndexByte(d, '.'); i > 0 && strings.Contains(d[:i], ":") {
		if a, err := netip.ParseAddr(d[:i]); err == nil {
			if p, err := strconv.ParseUint(d[i+1:], 10, 16); err == nil {
				return netip.AddrPortFrom(a, uint16(p)), false, nil
			}
		}
	}
	if f := s.prog.env.virtualAddr(); f != nil {
		name := d
		if !strings.HasPrefix(name, "/") {
			name = "/Common/" + name
		}
		if ap, ok := f(name); ok {
			return ap, true, nil
		}
	}
	return netip.AddrPort{}, false, tcl.Errorf("connect: %q is neither ADDRESS:PORT nor a virtual server", d)
}

// cmdSend is `send ?-timeout MS? ?-status VAR? ?--? ID DATA`: the bytes
// sent.
func cmdSend(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	opts, rest, err := options("send", args[1:], map[string]bool{"-timeout": true, "-status": true}, nil)
	if err != nil {
		return tcl.Empty, err
	}
	if len(rest) != 2 {
		return tcl.Empty, tcl.WrongArgs("send ?-timeout ms? ?-status var? ?--? connection data")
	}
	timeout, err := msOption("send", opts, "-timeout", 0)
	if err != nil {
		return tcl.Empty, err
	}
	s, _, err := sess(in, "send")
	if err != nil {
		return tcl.Empty, err
	}
	sb, err := s.sidebandOf("send", rest[0].String())
	if err != nil {
		return tcl.Empty, err
	}
	data := []byte(rest[1].String())
	// An immediate timeout still lets the kernel take what fits [M].
	start := time.Now()
	sb.c.SetWriteDeadline(start.Add(max(waitFor(in, timeout), time.Millisecond)))
	n, err := sb.c.Write(data)
	waited(in, start)
	status := "sent"
	switch {
	case err == nil:
	case errors.Is(err, os.ErrDeadlineExceeded):
		status = "timeout"
		if n == 0 {
			status = "busy"
		}
	default:
		status = "closed"
	}
	if err := setStatus(in, opts, status); err != nil {
		return tcl.Empty, err
	}
	return tcl.Int(int64(n)), nil
}

// cmdRecv is `recv ?-eol? ?-peek? ?-timeout MS? ?-status VAR? ?NCHARS?
// ID ?VAR?` (NCHARS also after ID, as F5's older pages write it): the
// data (its length when VAR is given), waiting for NCHARS bytes, a
// line (-eol) or any data, no longer than the timeout.
func cmdRecv(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const use = "recv ?-eol? ?-peek? ?-timeout ms? ?-status var? ?numChars? connection ?var?"
	opts, rest, err := options("recv", args[1:], map[string]bool{"-timeout": true, "-status": true}, map[string]bool{"-eol": true, "-peek": true})
	if err != nil {
		return tcl.Empty, err
	}
	s, _, err := sess(in, "recv")
	if err != nil {
		return tcl.Empty, err
	}
	n := -1
	var id, varName string
	isNum := func(v tcl.Value) (int, bool) {
		k, err := strconv.Atoi(v.String())
		return k, err == nil && k >= 0
	}
	switch {
	case len(rest) >= 2 && s.sidebands[rest[1].String()] != nil:
		k, ok := isNum(rest[0])
		if !ok || len(rest) > 3 {
			return tcl.Empty, tcl.WrongArgs(use)
		}
		n, id = k, rest[1].String()
		if len(rest) == 3 {
			varName = rest[2].String()
		}
	case len(rest) >= 1:
		id = rest[0].String()
		r := rest[1:]
		if len(r) > 0 {
			if k, ok := isNum(r[0]); ok {
				n, r = k, r[1:]
			}
		}
		if len(r) > 1 {
			return tcl.Empty, tcl.WrongArgs(use)
		}
		if len(r) == 1 {
			varName = r[0].String()
		}
	default:
		return tcl.Empty, tcl.WrongArgs(use)
	}
	timeout, err := msOption("recv", opts, "-timeout", 0)
	if err != nil {
		return tcl.Empty, err
	}
	sb, err := s.sidebandOf("recv", id)
	if err != nil {
		return tcl.Empty, err
	}
	_, eol := opts["-eol"]
	_, peek := opts["-peek"]
	start := time.Now()
	status := sb.fill(waitFor(in, timeout), n, eol)
	waited(in, start)
	take := len(sb.buf)
	if eol {
		if i := bytes.IndexByte(sb.buf, '\n'); i >= 0 {
			take = i + 1
		}
	} else if n > 0 && take > n {
		take = n
	}
	got := string(sb.buf[:take])
	if !peek {
		sb.buf = sb.buf[take:]
	}
	if err := setStatus(in, opts, status); err != nil {
		return tcl.Empty, err
	}
	if varName != "" {
		if _, err := in.SetVar(varName, tcl.Str(got)); err != nil {
			return tcl.Empty, err
		}
		return tcl.Int(int64(len(got))), nil
	}
	return tcl.Str(got), nil
}

// maxRecv bounds what one sideband connection buffers.
const maxRecv = 1 << 20

// fill reads until the buffer holds n bytes (n < 0: any), a line (eol)
// or the wait is over: received, timeout, closed or failed.
func (sb *sideband) fill(wait time.Duration, n int, eol bool) string {
	done := func() bool {
		switch {
		case eol:
			return bytes.IndexByte(sb.buf, '\n') >= 0
		case n > 0:
			return len(sb.buf) >= n
		}
		return len(sb.buf) > 0
	}
	deadline := time.Now().Add(max(wait, time.Millisecond))
	tmp := make([]byte, 16<<10)
	for i := 0; !done(); i++ {
		if len(sb.buf) >= maxRecv || i > maxRecv {
			return "failed"
		}
		sb.c.SetReadDeadline(deadline)
		k, err := sb.c.Read(tmp)
		sb.buf = append(sb.buf, tmp[:k]...)
		switch {
		case err == nil:
		case errors.Is(err, os.ErrDeadlineExceeded):
			return "timeout"
		case errors.Is(err, io.EOF):
			return "closed"
		default:
			return "failed"
		}
	}
	return "received"
}

// cmdClose is `close ID`.
func cmdClose(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 2 {
		return tcl.Empty, tcl.WrongArgs("close connection")
	}
	s, _, err := sess(in, "close")
	if err != nil {
		return tcl.Empty, err
	}
	id := args[1].String()
	sb := s.sidebands[id]
	if sb == nil {
		return tcl.Empty, tcl.Errorf("close: %q is not an open sideband connection", id)
	}
	sb.close()
	delete(s.sidebands, id)
	return tcl.Empty, nil
}

// connectInfo is `connect info ?-protocol? ?-myport? ?-myaddr? ?-local?
// ?-remote? ?-tos? ?-status? ?-idle? ID`: the values asked, as a list.
func connectInfo(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) < 1 {
		return tcl.Empty, tcl.WrongArgs("connect info ?-option ...? connection")
	}
	s, _, err := sess(in, "connect info")
	if err != nil {
		return tcl.Empty, err
	}
	sb, err := s.sidebandOf("connect info", args[len(args)-1].String())
	if err != nil {
		return tcl.Empty, err
	}
	var out []tcl.Value
	for _, a := range args[:len(args)-1] {
		switch a.String() {
		case "-protocol":
			out = append(out, tcl.Str(sb.proto))
		case "-myport", "-local":
			ap, _ := netip.ParseAddrPort(sb.c.LocalAddr().String())
			if a.String() == "-myport" {
				out = append(out, tcl.Int(int64(ap.Port())))
			} else {
				out = append(out, tcl.Str(ap.String()))
			}
		case "-myaddr":
			ap, _ := netip.ParseAddrPort(sb.c.LocalAddr().String())
			out = append(out, tcl.Str(ap.Addr().String()))
		case "-remote":
			out = append(out, tcl.Str(sb.c.RemoteAddr().String()))
		case "-tos":
			out = append(out, tcl.Int(int64(sb.tos)))
		case "-status":
			out = append(out, tcl.Str(sb.status))
		case "-idle":
			out = append(out, tcl.Int(int64(sb.idle/time.Second)))
		default:
			return tcl.Empty, tcl.Errorf("connect info: unknown option %q (-protocol, -myport, -myaddr, -local, -remote, -tos, -status, -idle)", a.String())
		}
	}
	return tcl.List(out...), nil
}
