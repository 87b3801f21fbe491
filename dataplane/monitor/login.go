package monitor

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/textproto"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Login is the account and protocol settings of the smtp, pop3, imap and
// ftp monitors. They share one struct because BIG-IP gives these monitors
// the same few properties, and a monitor that logs in proves what a bare
// connect cannot: that the server's users and storage answer.
type Login struct {
	Username, Password string // "" means none (BIG-IP's "none")
	Domain             string // smtp: the HELO argument; "" (none) sends the local host name
	Folder             string // imap: the folder to SELECT after login; "" means none
	Filename           string // ftp: the file to retrieve after login; "" means none
	Newsgroup          string // nntp: the group to select after login; "" means none
	Port               bool   // ftp: mode port (active); false is mode passive (BIG-IP's default)
}

func (l *Login) equal(o *Login) bool {
	if l == nil || o == nil {
		return l == o
	}
	return *l == *o
}

// check refuses what would end the command line a setting is sent in and
// smuggle another command after it.
func (l *Login) check() error {
	if l == nil {
		return nil
	}
	for _, f := range [...]struct{ name, v string }{{"username", l.Username}, {"password", l.Password},
		{"domain", l.Domain}, {"folder", l.Folder}, {"filename", l.Filename}, {"newsgroup", l.Newsgroup}} {
		if strings.ContainsAny(f.v, "\r\n\x00") {
			return fmt.Errorf("%s must not contain a line break or NUL", f.name)
		}
	}
	return nil
}

// maxFile is how much of an ftp monitor's file is read: enough to prove the
// transfer works without loading a large file on every probe.
const maxFile = 1 << 20

// greeting names the server's first reply in errors.
const greeting = "greeting"

var errTooLong = errors.New("Response too long")

// probeLogin runs the smtp, pop3, imap and ftp monitors: a conversation on
// one connection in which every reply must be the expected one.
func probeLogin(ctx context.Context, spec *Spec, target netip.AddrPort) (Outcome, error) {
	l := spec.Login
	if l == nil {
		l = &Login{}
	}
	if err := l.check(); err != nil {
		return Outcome{}, err
	}
	c, err := dial(ctx, target)
	if err != nil {
		return Outcome{}, err
	}
	defer c.Close()
	defer bound(ctx, c)()
	s := &session{ctx: ctx, c: c, r: textproto.NewReader(bufio.NewReader(&capped{r: c, left: maxReply}))}
	switch spec.Type {
	case SMTP:
		err = s.smtp(l)
	case POP3:
		err = s.pop3(l)
	case IMAP:
		err = s.imap(l)
	case FTP:
		err = s.ftp(l)
	case NNTP:
		err = s.nntp(l)
	default:
		err = fmt.Errorf("unsupported monitor type %q", spec.Type)
	}
	if err != nil {
		return Outcome{}, err
	}
	return Outcome{Up: true}, nil
}

// bound holds c to ctx: ctx's deadline, and an immediate one when ctx is
// cancelled first. The returned stop releases ctx's hold.
func bound(ctx context.Context, c interface{ SetDeadline(time.Time) error }) (stop func() bool) {
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	return context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
}

// capped bounds what one conversation may read, as maxReply bounds
// probeStream's, so a server that talks without end costs no memory.
type capped struct {
	r    io.Reader
	left int
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, errTooLong
	}
	if len(p) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= n
	return n, err
}

// session is one monitor conversation on a control connection.
type session struct {
	ctx context.Context
	c   *net.TCPConn
	r   *textproto.Reader
}

// ioErr words a failed read or write; the deadline passing is BIG-IP's "no
// response".
func (s *session) ioErr(doing string, err error) error {
	switch {
	case s.ctx.Err() != nil || errors.Is(err, os.ErrDeadlineExceeded):
		return ErrNoResponse
	case errors.Is(err, errTooLong):
		return err
	}
	return fmt.Errorf("%s; %v", doing, unwrapSyscall(err))
}

func (s *session) send(line string) error {
	if _, err := io.WriteString(s.c, line+"\r\n"); err != nil {
		return s.ioErr("Unable to send", err)
	}
	return nil
}

// line reads one reply line; what names the command it answers.
func (s *session) line(what string) (string, error) {
	l, err := s.r.ReadLine()
	if err == nil {
		return l, nil
	}
	if (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)) && s.ctx.Err() == nil {
		if what == greeting {
			return "", errors.New("Connection closed by server before the greeting")
		}
		return "", fmt.Errorf("Connection closed by server before the response to %s", what)
	}
	return "", s.ioErr("Unable to receive", err)
}

func unexpected(what, line string) error {
	if len(line) > 200 {
		line = line[:200] + "..."
	}
	if what == greeting {
		return fmt.Errorf("Unexpected greeting: %q", line)
	}
	return fmt.Errorf("Unexpected response to %s: %q", what, line)
}

// reply reads a numbered reply (smtp, ftp), following "nnn-" continuation
// lines to the closing "nnn " line. It returns the code (0 when the first
// line has none) and the first line.
func (s *session) reply(what string) (int, string, error) {
	first, err := s.line(what)
	if err != nil {
		return 0, "", err
	}
	code := replyCode(first)
	if code == 0 || len(first) == 3 || first[3] != '-' {
		return code, first, nil
	}
	for {
		l, err := s.line(what)
		if err != nil {
			return 0, "", err
		}
		if l == first[:3] || strings.HasPrefix(l, first[:3]+" ") {
			return code, first, nil
		}
	}
}

func replyCode(line string) int {
	if len(line) < 3 || len(line) > 3 && line[3] != ' ' && line[3] != '-' {
		return 0
	}
	code := 0
	for _, c := range []byte(line[:3]) {
		if c < '0' || c > '9' {
			return 0
		}
		code = code*10 + int(c-'0')
	}
	if code < 100 {
		return 0
	}
	return code
}

// expect reads a numbered reply whose code must be one of codes.
func (s *session) expect(what string, codes ...int) (int, string, error) {
	code, line, err := s.reply(what)
	if err != nil {
		return 0, "", err
	}
	if !slices.Contains(codes, code) {
		return 0, "", unexpected(what, line)
	}
	return code, line, nil
}

// cmd sends line, the command what, and expects one of codes.
func (s *session) cmd(what, line string, codes ...int) (int, string, error) {
	if err := s.send(line); err != nil {
		return 0, "", err
	}
	return s.expect(what, codes...)
}

func (s *session) smtp(l *Login) error {
	if _, _, err := s.expect(greeting, 220); err != nil {
		return err
	}
	domain := l.Domain
	if domain == "" {
		domain = "localhost"
		if h, err := os.Hostname(); err == nil && h != "" {
			domain = h
		}
	}
	if _, _, err := s.cmd("HELO", "HELO "+domain, 250); err != nil {
		return err
	}
	s.send("QUIT")
	return nil
}

// plusOK reads a pop3 reply, which must be +OK.
func (s *session) plusOK(what string) error {
	l, err := s.line(what)
	if err != nil {
		return err
	}
	if !strings.HasPrefix(l, "+OK") {
		return unexpected(what, l)
	}
	return nil
}

func (s *session) pop3(l *Login) error {
	if err := s.plusOK(greeting); err != nil {
		return err
	}
	if l.Username != "" {
		for _, c := range [...]struct{ verb, arg string }{{"USER", l.Username}, {"PASS", l.Password}} {
			if err := s.send(c.verb + " " + c.arg); err != nil {
				return err
			}
			if err := s.plusOK(c.verb); err != nil {
				return err
			}
		}
	}
	s.send("QUIT")
	return nil
}

func (s *session) imap(l *Login) error {
	g, err := s.line(greeting)
	if err != nil {
		return err
	}
	authed := hasPrefixFold(g, "* PREAUTH")
	if !authed && !hasPrefixFold(g, "* OK") {
		return unexpected(greeting, g)
	}
	// A PREAUTH connection is logged in already; LOGIN would be refused.
	if l.Username != "" && !authed {
		if err := s.tagged("a1", "LOGIN", imapString(l.Username)+" "+imapString(l.Password)); err != nil {
			return err
		}
		authed = true
	}
	if l.Folder != "" && authed {
		if err := s.tagged("a2", "SELECT", imapString(l.Folder)); err != nil {
			return err
		}
	}
	s.send("a3 LOGOUT")
	return nil
}

// tagged sends an imap command and skips untagged lines to its tagged
// reply, which must be OK.
func (s *session) tagged(tag, verb, args string) error {
	if err := s.send(tag + " " + verb + " " + args); err != nil {
		return err
	}
	for {
		l, err := s.line(verb)
		if err != nil {
			return err
		}
		if rest, ok := strings.CutPrefix(l, tag+" "); ok {
			if !hasPrefixFold(rest, "OK") {
				return unexpected(verb, l)
			}
			return nil
		}
	}
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// imapString writes v as an imap atom when it can be one, else as a quoted
// string, so a password with spaces or quotes logs in as typed.
func imapString(v string) string {
	atom := v != ""
	for i := 0; i < len(v) && atom; i++ {
		atom = v[i] > ' ' && v[i] < 0x7f && !strings.ContainsRune(`"\(){%*]`, rune(v[i]))
	}
	if atom {
		return v
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v) + `"`
}

func (s *session) ftp(l *Login) error {
	if _, _, err := s.expect(greeting, 220); err != nil {
		return err
	}
	user, pass := l.Username, l.Password
	if user == "" {
		// [M] BIG-IP's ftp monitor is taken to always log in, as anonymous
		// when no username is set (unverified against a BIG-IP).
		user, pass = "anonymous", "anonymous@"
	}
	code, _, err := s.cmd("USER", "USER "+user, 230, 331)
	if err != nil {
		return err
	}
	if code == 331 {
		if _, _, err := s.cmd("PASS", "PASS "+pass, 230, 202); err != nil {
			return err
		}
	}
	if l.Filename != "" {
		if err := s.retrieve(l.Filename, l.Port); err != nil {
			return err
		}
	}
	s.send("QUIT")
	return nil
}

// retrieve reads file over a data connection, which proves the server can
// reach its storage and open connections, not only answer commands.
func (s *session) retrieve(file string, active bool) error {
	if _, _, err := s.cmd("TYPE", "TYPE I", 200); err != nil {
		return err
	}
	var data net.Conn
	var ln *net.TCPListener
	var err error
	if active {
		if ln, err = s.listenData(); err != nil {
			return err
		}
		defer ln.Close()
	} else {
		if data, err = s.dialData(); err != nil {
			return err
		}
		defer data.Close()
	}
	if _, _, err := s.cmd("RETR", "RETR "+file, 125, 150); err != nil {
		return err
	}
	if active {
		defer bound(s.ctx, ln)()
		if data, err = ln.Accept(); err != nil {
			return s.ioErr("Unable to open data connection", err)
		}
		defer data.Close()
	}
	defer bound(s.ctx, data)()
	n, err := io.Copy(io.Discard, io.LimitReader(data, maxFile))
	if err != nil {
		return s.ioErr("Unable to receive the file", err)
	}
	if n == maxFile {
		// Enough to prove the transfer; the server's answer to the data
		// connection closing early is not awaited.
		return nil
	}
	_, _, err = s.expect("RETR", 226, 250)
	return err
}

// dialData opens a passive data connection. It goes to the control
// connection's peer, whatever address the reply names: behind NAT that
// address is often the server's private one.
func (s *session) dialData() (net.Conn, error) {
	ra := s.c.RemoteAddr().(*net.TCPAddr)
	verb, code, parse := "PASV", 227, pasvPort
	if ra.IP.To4() == nil {
		verb, code, parse = "EPSV", 229, epsvPort // PASV cannot name an IPv6 address
	}
	_, line, err := s.cmd(verb, verb, code)
	if err != nil {
		return nil, err
	}
	port := parse(line)
	if port == 0 {
		return nil, unexpected(verb, line)
	}
	c, err := dialer(s.ctx).DialContext(s.ctx, "tcp", (&net.TCPAddr{IP: ra.IP, Port: port, Zone: ra.Zone}).String())
	if err != nil {
		return nil, s.ioErr("Unable to open data connection", err)
	}
	return c, nil
}

// listenData opens the port of an active data connection and tells the
// server where it is.
func (s *session) listenData() (*net.TCPListener, error) {
	la := s.c.LocalAddr().(*net.TCPAddr)
	l, err := listenConfig(s.ctx).Listen(s.ctx, "tcp", (&net.TCPAddr{IP: la.IP, Zone: la.Zone}).String())
	if err != nil {
		return nil, fmt.Errorf("Unable to listen for the data connection; %v", unwrapSyscall(err))
	}
	ln := l.(*net.TCPListener)
	port := ln.Addr().(*net.TCPAddr).Port
	verb, line := "EPRT", fmt.Sprintf("EPRT |2|%s|%d|", la.IP, port)
	if ip := la.IP.To4(); ip != nil {
		verb, line = "PORT", fmt.Sprintf("PORT %d,%d,%d,%d,%d,%d", ip[0], ip[1], ip[2], ip[3], port>>8, port&0xff)
	}
	if _, _, err := s.cmd(verb, line, 200); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

// pasvPort reads the port of "227 Entering Passive Mode
// (h1,h2,h3,h4,p1,p2)", scanning for the first digit after the code as RFC
// 1123 advises, since servers word the reply differently; 0 when malformed.
func pasvPort(line string) int {
	i := strings.IndexAny(line[3:], "0123456789")
	if i < 0 {
		return 0
	}
	rest := line[3+i:]
	if j := strings.IndexFunc(rest, func(r rune) bool { return r != ',' && (r < '0' || r > '9') }); j >= 0 {
		rest = rest[:j]
	}
	f := strings.Split(rest, ",")
	if len(f) != 6 {
		return 0
	}
	var n [6]int
	for k, v := range f {
		x, err := strconv.Atoi(v)
		if err != nil || x > 255 {
			return 0
		}
		n[k] = x
	}
	return n[4]<<8 | n[5]
}

// epsvPort reads the port of "229 Entering Extended Passive Mode
// (|||port|)" (RFC 2428); 0 when malformed.
func epsvPort(line string) int {
	i := strings.IndexByte(line, '(')
	if i < 0 || i+1 >= len(line) {
		return 0
	}
	f := strings.Split(line[i+1:], line[i+1:i+2])
	if len(f) < 5 {
		return 0
	}
	p, err := strconv.Atoi(f[3])
	if err != nil || p < 1 || p > 65535 {
		return 0
	}
	return p
}

// nntp: a 200 or 201 greeting, AUTHINFO USER and PASS when a username is
// set (281 accepts at once, 381 asks for the password), then GROUP of the
// newsgroup when one is set (211).
func (s *session) nntp(l *Login) error {
	if _, _, err := s.expect(greeting, 200, 201); err != nil {
		return err
	}
	if l.Username != "" {
		code, _, err := s.cmd("AUTHINFO USER", "AUTHINFO USER "+l.Username, 281, 381)
		if err != nil {
			return err
		}
		if code == 381 {
			if _, _, err := s.cmd("AUTHINFO PASS", "AUTHINFO PASS "+l.Password, 281); err != nil {
				return err
			}
		}
	}
	if l.Newsgroup != "" {
		if _, _, err := s.cmd("GROUP", "GROUP "+l.Newsgroup, 211); err != nil {
			return err
		}
	}
	s.send("QUIT")
	return nil
}
