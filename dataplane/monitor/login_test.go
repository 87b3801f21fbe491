package monitor

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fake is a server for one probe's connection, scripted by a handler that
// says lines and expects the probe's. What goes off script is recorded in
// errs, which the test reads once done is closed.
type fake struct {
	addr netip.AddrPort
	ln   net.Listener
	done chan struct{}
	errs []string

	c      net.Conn
	r      *bufio.Reader
	data   net.Listener // passive: the port PASV or EPSV offered
	dataTo string       // active: where PORT or EPRT said to connect
}

// serve listens on addr ("127.0.0.1:0", "[::1]:0") and runs handle on the
// first connection. After handle returns, the probe must hang up.
func serve(t *testing.T, addr string, handle func(*fake)) *fake {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("no loopback listener on %s: %v", addr, err)
	}
	f := &fake{addr: netip.MustParseAddrPort(ln.Addr().String()), ln: ln, done: make(chan struct{})}
	go func() {
		defer close(f.done)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		defer func() {
			if f.data != nil {
				f.data.Close()
			}
		}()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		f.c, f.r = c, bufio.NewReader(c)
		handle(f)
		if _, err := io.Copy(io.Discard, f.r); errors.Is(err, os.ErrDeadlineExceeded) {
			f.errs = append(f.errs, "the probe left the connection open")
		}
	}()
	return f
}

// finish stops accepting and waits for the handler, returning what went
// off script.
func (f *fake) finish(t *testing.T) []string {
	t.Helper()
	f.ln.Close()
	select {
	case <-f.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the fake server did not finish")
	}
	return f.errs
}

// fail records a deviation and ends the handler.
func (f *fake) fail(format string, a ...any) {
	f.errs = append(f.errs, fmt.Sprintf(format, a...))
	runtime.Goexit()
}

func (f *fake) say(lines ...string) {
	for _, l := range lines {
		io.WriteString(f.c, l+"\r\n")
	}
}

func (f *fake) hear(want string) string {
	l, err := f.r.ReadString('\n')
	if err != nil {
		f.fail("server wanted %q, got %v", want, err)
	}
	return strings.TrimSuffix(l, "\r\n")
}

func (f *fake) expect(want string) {
	if got := f.hear(want); got != want {
		f.fail("server heard %q, want %q", got, want)
	}
}

// silent says nothing until the probe hangs up.
func (f *fake) silent() {}

// passive opens a data port and offers it as PASV (or EPSV) does. PASV's
// address routes nowhere: the probe must use the control connection's.
func (f *fake) passive(epsv bool) {
	ln, err := net.Listen("tcp", net.JoinHostPort(f.addr.Addr().String(), "0"))
	if err != nil {
		f.fail("data listener: %v", err)
	}
	f.data = ln
	p := ln.Addr().(*net.TCPAddr).Port
	if epsv {
		f.expect("EPSV")
		f.say(fmt.Sprintf("229 Entering Extended Passive Mode (|||%d|)", p))
		return
	}
	f.expect("PASV")
	f.say(fmt.Sprintf("227 Entering Passive Mode (192,0,2,1,%d,%d).", p>>8, p&0xff))
}

// active takes a PORT or EPRT command and agrees to it.
func (f *fake) active() {
	l := f.hear("PORT or EPRT")
	if rest, ok := strings.CutPrefix(l, "PORT "); ok {
		n := strings.Split(rest, ",")
		if len(n) != 6 {
			f.fail("bad PORT %q", l)
		}
		hi, _ := strconv.Atoi(n[4])
		lo, _ := strconv.Atoi(n[5])
		f.dataTo = net.JoinHostPort(strings.Join(n[:4], "."), strconv.Itoa(hi<<8|lo))
	} else if rest, ok := strings.CutPrefix(l, "EPRT |2|"); ok {
		host, port, _ := strings.Cut(strings.TrimSuffix(rest, "|"), "|")
		f.dataTo = net.JoinHostPort(host, port)
	} else {
		f.fail("server heard %q, want PORT or EPRT", l)
	}
	if !strings.HasPrefix(f.dataTo, f.addr.Addr().String()) && !strings.HasPrefix(f.dataTo, "["+f.addr.Addr().String()) {
		f.fail("data connection to %s, not the control connection's address", f.dataTo)
	}
	f.say("200 PORT command successful")
}

// sendFile sends body over the data connection PASV or PORT set up. A write
// error is not an error: the probe may stop reading at maxFile.
func (f *fake) sendFile(body []byte) {
	var c net.Conn
	var err error
	if f.data != nil {
		f.data.(*net.TCPListener).SetDeadline(time.Now().Add(3 * time.Second))
		c, err = f.data.Accept()
	} else {
		c, err = net.DialTimeout("tcp", f.dataTo, 3*time.Second)
	}
	if err != nil {
		f.fail("data connection: %v", err)
	}
	c.SetDeadline(time.Now().Add(3 * time.Second))
	c.Write(body)
	c.Close()
}

type loginCase struct {
	name   string
	typ    Type
	login  *Login
	serve  func(f *fake)
	up     bool
	errIs  error  // when set, the error must be this
	errSub string // when set, the error must say this
	addr   string // "" is 127.0.0.1:0
}

func runLoginCases(t *testing.T, cases []loginCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			addr := tc.addr
			if addr == "" {
				addr = "127.0.0.1:0"
			}
			f := serve(t, addr, tc.serve)
			spec := &Spec{Type: tc.typ, Login: tc.login}
			if err := spec.Check(); err != nil {
				t.Fatal(err)
			}
			d := 3 * time.Second
			if tc.errIs == ErrNoResponse {
				d = 300 * time.Millisecond
			}
			out, err := probe(t, spec, f.addr, d)
			for _, e := range f.finish(t) {
				t.Error(e)
			}
			wantVerdict(t, out, err, tc.up, tc.errSub, tc.errIs)
		})
	}
}

func TestProbeSMTP(t *testing.T) {
	t.Parallel()
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	runLoginCases(t, []loginCase{
		{name: "good", typ: SMTP, login: &Login{Domain: "mon.example"}, up: true, serve: func(f *fake) {
			f.say("220 mail.example ESMTP")
			f.expect("HELO mon.example")
			f.say("250 mail.example")
			f.expect("QUIT")
			f.say("221 bye")
		}},
		{name: "multi-line greeting, local host name", typ: SMTP, up: true, serve: func(f *fake) {
			f.say("220-mail.example ESMTP", "220-no UCE", "220 ready")
			f.expect("HELO " + host)
			f.say("250-mail.example", "250 PIPELINING")
			f.expect("QUIT")
		}},
		{name: "wrong greeting", typ: SMTP, errSub: `Unexpected greeting: "554 no service here"`, serve: func(f *fake) {
			f.say("554 no service here")
		}},
		{name: "HELO rejected", typ: SMTP, login: &Login{Domain: "bad..example"}, errSub: `Unexpected response to HELO: "501 bad domain"`, serve: func(f *fake) {
			f.say("220 mail.example")
			f.expect("HELO bad..example")
			f.say("501 bad domain")
		}},
		{name: "closed after greeting", typ: SMTP, errSub: "Connection closed by server before the response to HELO", serve: func(f *fake) {
			f.say("220 mail.example")
			f.hear("HELO")
			f.c.Close()
		}},
		{name: "never answers", typ: SMTP, errIs: ErrNoResponse, serve: (*fake).silent},
	})
}

func TestProbePOP3(t *testing.T) {
	t.Parallel()
	runLoginCases(t, []loginCase{
		{name: "good, login", typ: POP3, login: &Login{Username: "mon", Password: "p w"}, up: true, serve: func(f *fake) {
			f.say("+OK POP3 ready")
			f.expect("USER mon")
			f.say("+OK")
			f.expect("PASS p w")
			f.say("+OK logged in")
			f.expect("QUIT")
			f.say("+OK bye")
		}},
		{name: "good, greeting only", typ: POP3, up: true, serve: func(f *fake) {
			f.say("+OK POP3 ready")
			f.expect("QUIT")
		}},
		{name: "wrong greeting", typ: POP3, errSub: `Unexpected greeting: "-ERR busy"`, serve: func(f *fake) {
			f.say("-ERR busy")
		}},
		{name: "login rejected", typ: POP3, login: &Login{Username: "mon", Password: "bad"}, errSub: `Unexpected response to PASS: "-ERR invalid login"`, serve: func(f *fake) {
			f.say("+OK POP3 ready")
			f.expect("USER mon")
			f.say("+OK")
			f.expect("PASS bad")
			f.say("-ERR invalid login")
		}},
		{name: "never answers", typ: POP3, errIs: ErrNoResponse, serve: (*fake).silent},
	})
}

func TestProbeIMAP(t *testing.T) {
	t.Parallel()
	runLoginCases(t, []loginCase{
		{name: "good, login and folder", typ: IMAP, login: &Login{Username: "mon", Password: `p w"\`, Folder: "Health Checks"}, up: true, serve: func(f *fake) {
			f.say("* OK IMAP4rev1 ready")
			f.expect(`a1 LOGIN mon "p w\"\\"`)
			f.say("* CAPABILITY IMAP4rev1", "a1 OK LOGIN completed")
			f.expect(`a2 SELECT "Health Checks"`)
			f.say("* 3 EXISTS", "* FLAGS (\\Seen)", "a2 ok [READ-WRITE] SELECT completed")
			f.expect("a3 LOGOUT")
			f.say("* BYE", "a3 OK")
		}},
		{name: "preauth, folder without login", typ: IMAP, login: &Login{Folder: "INBOX"}, up: true, serve: func(f *fake) {
			f.say("* PREAUTH ready")
			f.expect("a2 SELECT INBOX")
			f.say("a2 OK")
			f.expect("a3 LOGOUT")
		}},
		{name: "folder without login or preauth", typ: IMAP, login: &Login{Folder: "INBOX"}, up: true, serve: func(f *fake) {
			f.say("* OK ready")
			f.expect("a3 LOGOUT")
		}},
		{name: "wrong greeting", typ: IMAP, errSub: `Unexpected greeting: "* BYE shutting down"`, serve: func(f *fake) {
			f.say("* BYE shutting down")
		}},
		{name: "login rejected", typ: IMAP, login: &Login{Username: "mon", Password: "bad"}, errSub: `Unexpected response to LOGIN: "a1 NO [AUTHENTICATIONFAILED] Invalid credentials"`, serve: func(f *fake) {
			f.say("* OK ready")
			f.expect("a1 LOGIN mon bad")
			f.say("a1 NO [AUTHENTICATIONFAILED] Invalid credentials")
		}},
		{name: "select fails", typ: IMAP, login: &Login{Username: "mon", Password: "pw", Folder: "Missing"}, errSub: `Unexpected response to SELECT: "a2 NO no such mailbox"`, serve: func(f *fake) {
			f.say("* OK ready")
			f.expect("a1 LOGIN mon pw")
			f.say("a1 OK")
			f.expect("a2 SELECT Missing")
			f.say("a2 NO no such mailbox")
		}},
		{name: "never answers", typ: IMAP, errIs: ErrNoResponse, serve: (*fake).silent},
	})
}

func TestProbeFTP(t *testing.T) {
	t.Parallel()
	small := []byte("healthy\n")
	big := bytes.Repeat([]byte("0123456789abcdef"), 3*maxFile/16)
	anonymous := func(f *fake) {
		f.say("220-FTP server", " welcome", "220 ready")
		f.expect("USER anonymous")
		f.say("331 send your e-mail address")
		f.expect("PASS anonymous@")
		f.say("230 logged in")
	}
	retr := func(f *fake, body []byte, done string) {
		f.expect("RETR health.txt")
		f.say("150 opening BINARY data connection")
		f.sendFile(body)
		f.say(done)
		f.expect("QUIT")
		f.say("221 bye")
	}
	runLoginCases(t, []loginCase{
		{name: "anonymous, no file", typ: FTP, up: true, serve: func(f *fake) {
			anonymous(f)
			f.expect("QUIT")
		}},
		{name: "user logged in by USER", typ: FTP, login: &Login{Username: "mon"}, up: true, serve: func(f *fake) {
			f.say("220 ready")
			f.expect("USER mon")
			f.say("230 no password needed")
			f.expect("QUIT")
		}},
		{name: "passive", typ: FTP, login: &Login{Filename: "health.txt"}, up: true, serve: func(f *fake) {
			anonymous(f)
			f.expect("TYPE I")
			f.say("200 binary")
			f.passive(false)
			retr(f, small, "226 transfer complete")
		}},
		{name: "port", typ: FTP, login: &Login{Username: "mon", Password: "pw", Filename: "health.txt", Port: true}, up: true, serve: func(f *fake) {
			f.say("220 ready")
			f.expect("USER mon")
			f.say("331 password please")
			f.expect("PASS pw")
			f.say("230 logged in")
			f.expect("TYPE I")
			f.say("200 binary")
			f.active()
			retr(f, small, "250 done")
		}},
		{name: "file larger than the limit", typ: FTP, login: &Login{Filename: "health.txt"}, up: true, serve: func(f *fake) {
			anonymous(f)
			f.expect("TYPE I")
			f.say("200 binary")
			f.passive(false)
			retr(f, big, "426 transfer aborted")
		}},
		{name: "passive over IPv6", addr: "[::1]:0", typ: FTP, login: &Login{Filename: "health.txt"}, up: true, serve: func(f *fake) {
			anonymous(f)
			f.expect("TYPE I")
			f.say("200 binary")
			f.passive(true)
			retr(f, small, "226 transfer complete")
		}},
		{name: "port over IPv6", addr: "[::1]:0", typ: FTP, login: &Login{Filename: "health.txt", Port: true}, up: true, serve: func(f *fake) {
			anonymous(f)
			f.expect("TYPE I")
			f.say("200 binary")
			f.active()
			retr(f, small, "226 transfer complete")
		}},
		{name: "missing file", typ: FTP, login: &Login{Filename: "health.txt"}, errSub: `Unexpected response to RETR: "550 health.txt: no such file"`, serve: func(f *fake) {
			anonymous(f)
			f.expect("TYPE I")
			f.say("200 binary")
			f.passive(false)
			f.expect("RETR health.txt")
			f.say("550 health.txt: no such file")
		}},
		{name: "wrong greeting", typ: FTP, errSub: `Unexpected greeting: "421 too many users"`, serve: func(f *fake) {
			f.say("421 too many users")
		}},
		{name: "login rejected", typ: FTP, login: &Login{Username: "mon", Password: "bad"}, errSub: `Unexpected response to PASS: "530 login incorrect"`, serve: func(f *fake) {
			f.say("220 ready")
			f.expect("USER mon")
			f.say("331 password please")
			f.expect("PASS bad")
			f.say("530 login incorrect")
		}},
		{name: "never answers", typ: FTP, errIs: ErrNoResponse, serve: (*fake).silent},
	})
}

func TestFTPReplyParsing(t *testing.T) {
	for line, want := range map[string]int{
		"227 Entering Passive Mode (192,0,2,1,4,1).":  1025,
		"227 =192,0,2,1,0,21":                         21,
		"227 Entering Passive Mode 192,0,2,1,4":       0,
		"227 Entering Passive Mode (192,0,2,1,256,1)": 0,
		"227 no address":                              0,
	} {
		if got := pasvPort(line); got != want {
			t.Errorf("pasvPort(%q) = %d, want %d", line, got, want)
		}
	}
	for line, want := range map[string]int{
		"229 Entering Extended Passive Mode (|||6446|)": 6446,
		"229 ok (!!!21!)": 21,
		"229 ok (|||0|)":  0,
		"229 ok":          0,
		"229 ok (|||x|)":  0,
	} {
		if got := epsvPort(line); got != want {
			t.Errorf("epsvPort(%q) = %d, want %d", line, got, want)
		}
	}
	for in, want := range map[string]string{"INBOX": "INBOX", "": `""`, "a b": `"a b"`, `a"b`: `"a\"b"`, `a\b`: `"a\\b"`, "a*": `"a*"`, "é": `"é"`} {
		if got := imapString(in); got != want {
			t.Errorf("imapString(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestLoginSpecCheckAndEqual(t *testing.T) {
	for _, typ := range []Type{SMTP, POP3, IMAP, FTP} {
		for _, l := range []*Login{nil, {}, {Folder: "INBOX"}, {Username: "u", Password: "p w", Domain: "d", Filename: "f", Port: true}} {
			if err := (&Spec{Type: typ, Login: l}).Check(); err != nil {
				t.Errorf("%s %+v: Check() = %v", typ, l, err)
			}
		}
	}
	for _, l := range []*Login{{Username: "u\r\nQUIT"}, {Password: "p\n"}, {Domain: "d\r"}, {Folder: "x\x00"}, {Filename: "f\nDELE f"}} {
		if err := (&Spec{Type: FTP, Login: l}).Check(); err == nil || !strings.Contains(err.Error(), "line break") {
			t.Errorf("%+v: Check() = %v, want a line break refused", l, err)
		}
	}
	a := &Spec{Type: FTP, Login: &Login{Username: "u", Filename: "f"}}
	if !a.Equal(&Spec{Type: FTP, Login: &Login{Username: "u", Filename: "f"}}) {
		t.Error("equal logins compared unequal")
	}
	for _, b := range []*Login{nil, {Username: "u"}, {Username: "u", Filename: "f", Port: true}, {Username: "u", Filename: "f", Password: "p"}} {
		if a.Equal(&Spec{Type: FTP, Login: b}) {
			t.Errorf("login %+v compared equal to %+v", b, a.Login)
		}
	}
	if !(&Spec{Type: SMTP}).Equal(&Spec{Type: SMTP}) {
		t.Error("nil logins compared unequal")
	}
}

func TestProbeNNTP(t *testing.T) {
	t.Parallel()
	runLoginCases(t, []loginCase{
		{name: "good, login and group", typ: NNTP, login: &Login{Username: "mon", Password: "p", Newsgroup: "comp.lang.go"}, up: true, serve: func(f *fake) {
			f.say("200 news ready, posting allowed")
			f.expect("AUTHINFO USER mon")
			f.say("381 password required")
			f.expect("AUTHINFO PASS p")
			f.say("281 authentication accepted")
			f.expect("GROUP comp.lang.go")
			f.say("211 1234 3000234 3002322 comp.lang.go")
			f.expect("QUIT")
		}},
		{name: "greeting only, no posting", typ: NNTP, up: true, serve: func(f *fake) {
			f.say("201 news ready, no posting")
			f.expect("QUIT")
		}},
		{name: "wrong greeting", typ: NNTP, errSub: `Unexpected greeting: "502 service unavailable"`, serve: func(f *fake) {
			f.say("502 service unavailable")
		}},
		{name: "no such group", typ: NNTP, login: &Login{Newsgroup: "alt.gone"}, errSub: `Unexpected response to GROUP: "411 no such group"`, serve: func(f *fake) {
			f.say("200 ready")
			f.expect("GROUP alt.gone")
			f.say("411 no such group")
		}},
		{name: "login rejected", typ: NNTP, login: &Login{Username: "mon", Password: "bad"}, errSub: `Unexpected response to AUTHINFO PASS: "481 authentication failed"`, serve: func(f *fake) {
			f.say("200 ready")
			f.expect("AUTHINFO USER mon")
			f.say("381 password required")
			f.expect("AUTHINFO PASS bad")
			f.say("481 authentication failed")
		}},
		{name: "never answers", typ: NNTP, errIs: ErrNoResponse, serve: (*fake).silent},
	})
}
