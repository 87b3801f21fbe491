package dataplane

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/smtp"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/starttls"
)

// mailMember is a small plaintext SMTP, IMAP or POP3 server: it takes
// one message (SMTP) or serves one (IMAP, POP3), logs anyone in, and
// records every line it was sent, so that a test can tell the STARTTLS
// never reached it. ownTLS makes it advertise STARTTLS (STLS) itself,
// which the virtual must hide; it answers the command with an error.
type mailMember struct {
	proto  starttls.Protocol
	msg    string
	ownTLS bool

	mu    sync.Mutex
	lines []string
	got   string // the message body an SMTP client sent
}

func startMailMember(t *testing.T, addr string, proto starttls.Protocol, msg string, ownTLS bool) *mailMember {
	t.Helper()
	m := &mailMember{proto: proto, msg: msg, ownTLS: ownTLS}
	serveConns(t, addr, m.serve)
	return m
}

func (m *mailMember) heard() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.lines...)
}

func (m *mailMember) serve(c net.Conn) {
	r := bufio.NewReader(c)
	w := func(s ...string) { io.WriteString(c, strings.Join(s, "\r\n")+"\r\n") }
	switch m.proto {
	case starttls.SMTP:
		w("220 member.example ESMTP")
	case starttls.IMAP:
		caps := "IMAP4rev1 AUTH=PLAIN"
		if m.ownTLS {
			caps += " STARTTLS"
		}
		w("* OK [CAPABILITY " + caps + "] member ready")
	default:
		w("+OK member ready")
	}
	for range 200 {
		c.SetReadDeadline(time.Now().Add(20 * time.Second))
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimRight(line, "\r\n")
		m.mu.Lock()
		m.lines = append(m.lines, line)
		m.mu.Unlock()
		var quit bool
		switch m.proto {
		case starttls.SMTP:
			quit = m.smtp(r, w, line)
		case starttls.IMAP:
			quit = m.imap(r, w, line)
		default:
			quit = m.pop3(w, line)
		}
		if quit {
			return
		}
	}
}

func (m *mailMember) smtp(r *bufio.Reader, w func(...string), line string) bool {
	verb, _, _ := strings.Cut(strings.ToUpper(line), " ")
	switch verb {
	case "EHLO":
		ans := []string{"250-member.example", "250-PIPELINING", "250-AUTH PLAIN"}
		if m.ownTLS {
			ans = append(ans, "250-STARTTLS")
		}
		w(append(ans, "250 8BITMIME")...)
	case "HELO", "MAIL", "RCPT", "RSET", "NOOP":
		w("250 ok")
	case "AUTH":
		w("235 2.7.0 authenticated")
	case "DATA":
		w("354 go ahead")
		var body strings.Builder
		for range 10000 {
			l, err := r.ReadString('\n')
			if err != nil || l == ".\r\n" {
				break
			}
			body.WriteString(l)
		}
		m.mu.Lock()
		m.got = body.String()
		m.mu.Unlock()
		w("250 queued")
	case "QUIT":
		w("221 bye")
		return true
	case "STARTTLS":
		w("454 4.7.0 the member has no TLS")
	default:
		w("500 unknown")
	}
	return false
}

func (m *mailMember) imap(r *bufio.Reader, w func(...string), line string) bool {
	tag, rest, _ := strings.Cut(line, " ")
	cmd, arg, _ := strings.Cut(rest, " ")
	cmd = strings.ToUpper(cmd)
	if cmd == "UID" {
		cmd, arg, _ = strings.Cut(arg, " ")
		cmd = strings.ToUpper(cmd)
	}
	switch cmd {
	case "CAPABILITY":
		caps := "IMAP4rev1 AUTH=PLAIN"
		if m.ownTLS {
			caps += " STARTTLS"
		}
		w("* CAPABILITY "+caps, tag+" OK done")
	case "AUTHENTICATE":
		if !strings.Contains(arg, " ") { // no initial response: ask
			w("+ ")
			if _, err := r.ReadString('\n'); err != nil {
				return true
			}
		}
		w(tag + " OK [CAPABILITY IMAP4rev1] logged in")
	case "LOGIN", "NOOP", "EXAMINE":
		w(tag + " OK done")
	case "SELECT":
		w("* 1 EXISTS", "* FLAGS ()", "* OK [UIDVALIDITY 1] ok", tag+" OK [READ-WRITE] selected")
	case "FETCH":
		w(fmt.Sprintf("* 1 FETCH (UID 1 BODY[] {%d}", len(m.msg)))
		w(m.msg+")", tag+" OK fetched") // the literal, then the rest of the line
	case "LOGOUT":
		w("* BYE member", tag+" OK bye")
		return true
	case "STARTTLS":
		w(tag + " BAD the member has no TLS")
	default:
		w(tag + " BAD unknown")
	}
	return false
}

func (m *mailMember) pop3(w func(...string), line string) bool {
	verb, arg, _ := strings.Cut(strings.ToUpper(line), " ")
	switch verb {
	case "CAPA":
		ans := []string{"+OK capabilities", "USER", "UIDL"}
		if m.ownTLS {
			ans = append(ans, "STLS")
		}
		w(append(ans, ".")...)
	case "USER", "PASS", "NOOP":
		w("+OK")
	case "STAT":
		w(fmt.Sprintf("+OK 1 %d", len(m.msg)))
	case "LIST":
		if arg != "" {
			w(fmt.Sprintf("+OK 1 %d", len(m.msg)))
		} else {
			w("+OK 1 message", fmt.Sprintf("1 %d", len(m.msg)), ".")
		}
	case "RETR":
		w("+OK message follows", strings.TrimSuffix(m.msg, "\r\n"), ".")
	case "QUIT":
		w("+OK bye")
		return true
	case "STLS":
		w("-ERR the member has no TLS")
	default:
		w("-ERR unknown")
	}
	return false
}

// mailVirtuals applies one virtual per case, each with client-ssl for
// mail.example and the protocol's profile, and returns the roots that
// trust its certificate and the certificate's PEM file.
func mailVirtuals(t *testing.T, vss map[string]*Virtual) (*x509.CertPool, string) {
	t.Helper()
	cert, key, roots := testCert(t, "mail.example")
	tlsCfg := clientSSL(t, cert, key)
	p, _ := newPlane(t)
	cfg := &Config{Virtuals: map[string]*Virtual{}, Pools: map[string]*Pool{}, Monitors: map[string]*Monitor{}}
	for name, v := range vss {
		v.TLS = tlsCfg
		cfg.Virtuals[name] = v
		b := basic(v.Destination.String(), v.Pool)
		pool := b.Pools["/Common/pool"]
		pool.Name = "/Common/pool_" + name[len("/Common/"):]
		cfg.Pools[pool.Name] = pool
		v.Name, v.Pool = name, pool.Name
	}
	mustApply(t, p, cfg)
	file := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certs[0].Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return roots, file
}

// mailVirtual is a virtual at vs whose pool is member, with the
// protocol's profile in mode.
func mailVirtual(vs, member string, proto starttls.Protocol, mode starttls.Mode) *Virtual {
	v := basic(vs, member).Virtuals["/Common/vs"]
	v.Pool = member // mailVirtuals makes it a pool
	v.STARTTLS = &starttls.Options{Profile: "/Common/" + proto.Kind(), Protocol: proto, Mode: mode}
	return v
}

// TestSTARTTLSSMTPGo: Go's SMTP client sees STARTTLS offered (the
// member's own hidden), upgrades, authenticates and sends a message
// over TLS; the member gets it in plaintext and never hears STARTTLS.
func TestSTARTTLSSMTPGo(t *testing.T) {
	t.Parallel()
	m := startMailMember(t, "127.106.1.10:2525", starttls.SMTP, "", true)
	roots, _ := mailVirtuals(t, map[string]*Virtual{
		"/Common/smtp": mailVirtual("127.106.1.1:2525", "127.106.1.10:2525", starttls.SMTP, starttls.Allow),
	})
	c, err := smtp.Dial("127.106.1.1:2525")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Hello("client.example"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := c.Extension("STARTTLS"); !ok {
		t.Fatal("STARTTLS not offered")
	}
	if err := c.StartTLS(&tls.Config{ServerName: "mail.example", RootCAs: roots}); err != nil {
		t.Fatalf("STARTTLS: %v", err)
	}
	if st, ok := c.TLSConnectionState(); !ok || !st.HandshakeComplete {
		t.Fatal("no TLS after STARTTLS")
	}
	if ok, _ := c.Extension("STARTTLS"); ok {
		t.Error("STARTTLS still offered under TLS")
	}
	if err := c.Auth(smtp.PlainAuth("", "user", "secret", "127.106.1.1")); err != nil {
		t.Fatalf("AUTH: %v", err)
	}
	if err := c.Mail("a@client.example"); err != nil {
		t.Fatal(err)
	}
	if err := c.Rcpt("b@member.example"); err != nil {
		t.Fatal(err)
	}
	wc, err := c.Data()
	if err != nil {
		t.Fatal(err)
	}
	body := "Subject: hello\r\n\r\nSTARTTLS\r\nover TLS\r\n"
	io.WriteString(wc, body)
	if err := wc.Close(); err != nil {
		t.Fatalf("DATA: %v", err)
	}
	if err := c.Quit(); err != nil {
		t.Fatalf("QUIT: %v", err)
	}
	m.mu.Lock()
	got := m.got
	m.mu.Unlock()
	if got != body {
		t.Errorf("the member got %q, want %q", got, body)
	}
	for _, l := range m.heard() {
		if strings.EqualFold(l, "STARTTLS") {
			t.Errorf("the member heard %q: %q", l, m.heard())
		}
	}
}

// mailDial connects to vs and reads the greeting.
func mailDial(t *testing.T, vs string) (net.Conn, *bufio.Reader, string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", vs, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(20 * time.Second))
	r := bufio.NewReader(c)
	l, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("greeting: %v", err)
	}
	return c, r, l
}

// readReply reads an SMTP answer (all its lines).
func readReply(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	var b strings.Builder
	for range 100 {
		l, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("after %q: %v", b.String(), err)
		}
		b.WriteString(l)
		if len(l) < 4 || l[3] != '-' {
			return b.String()
		}
	}
	return b.String()
}

// TestSTARTTLSSMTPRequire: in require mode mail is refused 530 before
// STARTTLS (the member never hears it), in its turn among pipelined
// commands; STARTTLS's answer waits for the member's to the command
// before it; a command pipelined after STARTTLS in plaintext is
// dropped, not run; under TLS the EHLO answer
// offers no STARTTLS and a second STARTTLS is refused 503.
func TestSTARTTLSSMTPRequire(t *testing.T) {
	t.Parallel()
	m := startMailMember(t, "127.106.2.10:2525", starttls.SMTP, "", false)
	roots, _ := mailVirtuals(t, map[string]*Virtual{
		"/Common/smtp": mailVirtual("127.106.2.1:2525", "127.106.2.10:2525", starttls.SMTP, starttls.Require),
	})
	c, r, greet := mailDial(t, "127.106.2.1:2525")
	if !strings.HasPrefix(greet, "220 member.example") {
		t.Fatalf("greeting %q", greet)
	}
	io.WriteString(c, "EHLO client\r\nMAIL FROM:<a@b>\r\n")
	if got := readReply(t, r); !strings.HasSuffix(got, "250-8BITMIME\r\n250 STARTTLS\r\n") {
		t.Errorf("EHLO: %q", got)
	}
	if got := readReply(t, r); !strings.HasPrefix(got, "530 5.7.0") {
		t.Errorf("MAIL before TLS: %q", got)
	}
	// STARTTLS's answer waits for the NOOP's, which the member owes; the
	// RSET rides in plaintext after STARTTLS: dropped.
	io.WriteString(c, "NOOP\r\nSTARTTLS\r\nRSET\r\n")
	if got := readReply(t, r); !strings.HasPrefix(got, "250 ok") {
		t.Fatalf("NOOP: %q", got)
	}
	if got := readReply(t, r); !strings.HasPrefix(got, "220 2.0.0") {
		t.Fatalf("STARTTLS: %q", got)
	}
	tc := tls.Client(c, &tls.Config{ServerName: "mail.example", RootCAs: roots})
	if err := tc.Handshake(); err != nil {
		t.Fatalf("handshake: %v", err)
	}
	tr := bufio.NewReader(tc)
	io.WriteString(tc, "EHLO client\r\n")
	if got := readReply(t, tr); strings.Contains(got, "STARTTLS") || !strings.HasPrefix(got, "250-member.example") {
		t.Errorf("EHLO under TLS: %q", got)
	}
	io.WriteString(tc, "STARTTLS\r\nMAIL FROM:<a@b>\r\nQUIT\r\n")
	for _, want := range []string{"503 5.5.1", "250 ok", "221 bye"} {
		if got := readReply(t, tr); !strings.HasPrefix(got, want) {
			t.Errorf("got %q, want %s", got, want)
		}
	}
	want := []string{"EHLO client", "NOOP", "EHLO client", "MAIL FROM:<a@b>", "QUIT"}
	if got := m.heard(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("the member heard %q, want %q", got, want)
	}
}

// TestSTARTTLSIMAPPOP3: IMAP and POP3 offload with raw clients: the
// capability answers gain STARTTLS (STLS) in place of the member's own,
// require refuses the login before TLS, and the message comes through
// TLS, its literal (IMAP) and multi-line answer (POP3) intact.
func TestSTARTTLSIMAPPOP3(t *testing.T) {
	t.Parallel()
	msg := "Subject: hi\r\n\r\n* CAPABILITY STARTTLS\r\n.dot\r\n"
	mi := startMailMember(t, "127.106.3.10:1143", starttls.IMAP, msg, true)
	mp := startMailMember(t, "127.106.3.11:1110", starttls.POP3, msg, true)
	roots, _ := mailVirtuals(t, map[string]*Virtual{
		"/Common/imap": mailVirtual("127.106.3.1:1143", "127.106.3.10:1143", starttls.IMAP, starttls.Require),
		"/Common/pop3": mailVirtual("127.106.3.2:1110", "127.106.3.11:1110", starttls.POP3, starttls.Require),
	})
	line := func(r *bufio.Reader) string {
		l, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		return l
	}
	upgrade := func(c net.Conn) (net.Conn, *bufio.Reader) {
		tc := tls.Client(c, &tls.Config{ServerName: "mail.example", RootCAs: roots})
		if err := tc.Handshake(); err != nil {
			t.Fatalf("handshake: %v", err)
		}
		return tc, bufio.NewReader(tc)
	}

	c, r, greet := mailDial(t, "127.106.3.1:1143")
	if greet != "* OK [CAPABILITY IMAP4rev1 AUTH=PLAIN STARTTLS LOGINDISABLED] member ready\r\n" {
		t.Errorf("IMAP greeting %q", greet)
	}
	io.WriteString(c, "a LOGIN u p\r\nb CAPABILITY\r\nc STARTTLS\r\n")
	for _, want := range []string{"a BAD Must issue a STARTTLS command first\r\n", "* CAPABILITY IMAP4rev1 AUTH=PLAIN STARTTLS LOGINDISABLED\r\n", "b OK done\r\n", "c OK Begin TLS negotiation now\r\n"} {
		if got := line(r); got != want {
			t.Errorf("IMAP: %q, want %q", got, want)
		}
	}
	tc, tr := upgrade(c)
	io.WriteString(tc, "d CAPABILITY\r\ne LOGIN u p\r\nf SELECT INBOX\r\n")
	for _, want := range []string{"* CAPABILITY IMAP4rev1 AUTH=PLAIN\r\n", "d OK done\r\n", "e OK done\r\n"} {
		if got := line(tr); got != want {
			t.Errorf("IMAP under TLS: %q, want %q", got, want)
		}
	}
	for !strings.HasPrefix(line(tr), "f OK") {
	}
	io.WriteString(tc, "g FETCH 1 BODY[]\r\n")
	if got := line(tr); got != fmt.Sprintf("* 1 FETCH (UID 1 BODY[] {%d}\r\n", len(msg)) {
		t.Fatalf("FETCH: %q", got)
	}
	body := make([]byte, len(msg))
	if _, err := io.ReadFull(tr, body); err != nil || string(body) != msg {
		t.Errorf("FETCH literal %q %v, want %q", body, err, msg)
	}
	for _, want := range []string{")\r\n", "g OK fetched\r\n"} {
		if got := line(tr); got != want {
			t.Errorf("after the literal: %q, want %q", got, want)
		}
	}
	for _, l := range mi.heard() {
		if strings.Contains(l, "STARTTLS") || strings.HasPrefix(l, "a ") {
			t.Errorf("the IMAP member heard %q", l)
		}
	}

	c, r, greet = mailDial(t, "127.106.3.2:1110")
	if greet != "+OK member ready\r\n" {
		t.Errorf("POP3 greeting %q", greet)
	}
	io.WriteString(c, "USER u\r\nCAPA\r\n")
	for _, want := range []string{"-ERR Must issue a STLS command first\r\n", "+OK capabilities\r\n", "USER\r\n", "UIDL\r\n", "STLS\r\n", ".\r\n"} {
		if got := line(r); got != want {
			t.Errorf("POP3: %q, want %q", got, want)
		}
	}
	io.WriteString(c, "STLS\r\n")
	if got := line(r); got != "+OK Begin TLS negotiation\r\n" {
		t.Fatalf("STLS: %q", got)
	}
	tc, tr = upgrade(c)
	io.WriteString(tc, "CAPA\r\nUSER u\r\nPASS p\r\nRETR 1\r\nSTLS\r\nQUIT\r\n")
	want := []string{"+OK capabilities\r\n", "USER\r\n", "UIDL\r\n", ".\r\n", "+OK\r\n", "+OK\r\n", "+OK message follows\r\n",
		"Subject: hi\r\n", "\r\n", "* CAPABILITY STARTTLS\r\n", ".dot\r\n", ".\r\n", "-ERR Command not permitted when TLS active\r\n", "+OK bye\r\n"}
	for _, w := range want {
		if got := line(tr); got != w {
			t.Errorf("POP3 under TLS: %q, want %q", got, w)
		}
	}
	wantHeard := []string{"CAPA", "CAPA", "USER u", "PASS p", "RETR 1", "QUIT"}
	if got := mp.heard(); strings.Join(got, "|") != strings.Join(wantHeard, "|") {
		t.Errorf("the POP3 member heard %q, want %q", got, wantHeard)
	}
}

// TestSTARTTLSCurl: curl speaks each protocol with --ssl-reqd
// (STARTTLS required) through the virtuals, verifying the virtual's
// certificate; openssl s_client -starttls does the same.
func TestSTARTTLSCurl(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	msg := "Subject: curl\r\n\r\nbody line\r\n"
	ms := startMailMember(t, "127.106.4.10:2525", starttls.SMTP, "", false)
	startMailMember(t, "127.106.4.11:1143", starttls.IMAP, msg, false)
	startMailMember(t, "127.106.4.12:1110", starttls.POP3, msg, false)
	_, ca := mailVirtuals(t, map[string]*Virtual{
		"/Common/smtp": mailVirtual("127.106.4.1:2525", "127.106.4.10:2525", starttls.SMTP, starttls.Allow),
		"/Common/imap": mailVirtual("127.106.4.2:1143", "127.106.4.11:1143", starttls.IMAP, starttls.Allow),
		"/Common/pop3": mailVirtual("127.106.4.3:1110", "127.106.4.12:1110", starttls.POP3, starttls.Allow),
	})
	curl := func(stdin string, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, "curl", append([]string{"-sS", "--ssl-reqd", "--cacert", ca, "--max-time", "20"}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("curl %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	curl(msg, "--resolve", "mail.example:2525:127.106.4.1", "smtp://mail.example:2525", "--mail-from", "a@client.example",
		"--mail-rcpt", "b@member.example", "-T", "-")
	ms.mu.Lock()
	got := ms.got
	ms.mu.Unlock()
	if got != msg {
		t.Errorf("SMTP: the member got %q, want %q", got, msg)
	}
	if got := curl("", "--resolve", "mail.example:1143:127.106.4.2", "imap://mail.example:1143/INBOX;UID=1", "-u", "u:p"); got != msg {
		t.Errorf("IMAP: %q, want %q", got, msg)
	}
	if got := curl("", "--resolve", "mail.example:1110:127.106.4.3", "pop3://mail.example:1110/1", "-u", "u:p"); got != msg {
		t.Errorf("POP3: %q, want %q", got, msg)
	}

	if _, err := exec.LookPath("openssl"); err != nil {
		t.Log("openssl is not installed: s_client not run")
		return
	}
	for _, c := range []struct{ proto, addr, say, want string }{
		{"smtp", "127.106.4.1:2525", "EHLO x\nQUIT\n", "221 bye"},
		{"imap", "127.106.4.2:1143", "a CAPABILITY\nb LOGOUT\n", "b OK bye"},
		{"pop3", "127.106.4.3:1110", "CAPA\nQUIT\n", "+OK bye"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := exec.CommandContext(ctx, "openssl", "s_client", "-connect", c.addr, "-starttls", c.proto, "-CAfile", ca,
			"-servername", "mail.example", "-verify_return_error", "-crlf", "-quiet")
		cmd.Stdin = strings.NewReader(c.say)
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil || !bytes.Contains(out, []byte(c.want)) || bytes.Contains(out, []byte("STARTTLS")) && c.proto != "smtp" {
			t.Errorf("openssl s_client -starttls %s: %v\n%s", c.proto, err, out)
		}
	}
}

// TestSTARTTLSRules: SMTPS::activation_mode in CLIENT_ACCEPTED changes
// one connection's mode (and reads it), SMTPS::disable passes the
// conversation untouched to a member that then answers STARTTLS itself,
// and IMAP:: commands on an SMTP virtual are Tcl errors that change
// nothing.
func TestSTARTTLSRules(t *testing.T) {
	t.Parallel()
	startMailMember(t, "127.106.5.10:2525", starttls.SMTP, "", false)
	vss := map[string]*Virtual{}
	var logs []*ruleLog
	for i, rule := range []string{
		`when CLIENT_ACCEPTED { log local0. "mode [SMTPS::activation_mode]"; SMTPS::activation_mode require }`,
		`when CLIENT_ACCEPTED { SMTPS::disable }`,
		`when CLIENT_ACCEPTED { catch { IMAP::activation_mode require } e; log local0. $e }`,
	} {
		v := mailVirtual(fmt.Sprintf("127.106.5.%d:2525", i+1), "127.106.5.10:2525", starttls.SMTP, starttls.Allow)
		var lg *ruleLog
		v.Rules, lg = compileRules(t, rule)
		logs = append(logs, lg)
		vss[fmt.Sprintf("/Common/smtp%d", i)] = v
	}
	mailVirtuals(t, vss)

	c, r, _ := mailDial(t, "127.106.5.1:2525")
	io.WriteString(c, "MAIL FROM:<a@b>\r\n")
	if got := readReply(t, r); !strings.HasPrefix(got, "530 ") {
		t.Errorf("activation_mode require: %q", got)
	}
	c, r, _ = mailDial(t, "127.106.5.2:2525")
	io.WriteString(c, "EHLO x\r\nSTARTTLS\r\n")
	if got := readReply(t, r); strings.Contains(got, "STARTTLS") {
		t.Errorf("disabled, EHLO: %q", got)
	}
	if got := readReply(t, r); !strings.HasPrefix(got, "454 ") {
		t.Errorf("disabled, STARTTLS reached the member: %q", got)
	}
	c, r, _ = mailDial(t, "127.106.5.3:2525")
	io.WriteString(c, "EHLO x\r\nMAIL FROM:<a@b>\r\n")
	if got := readReply(t, r); !strings.HasSuffix(got, "250 STARTTLS\r\n") {
		t.Errorf("IMAP:: on smtps, EHLO: %q", got)
	}
	if got := readReply(t, r); !strings.HasPrefix(got, "250 ") {
		t.Errorf("IMAP:: on smtps changed the mode: %q", got)
	}
	for i, want := range []string{"mode allow", "", "has no imap profile"} {
		logs[i].mu.Lock()
		got := strings.Join(logs[i].lines, "\n")
		logs[i].mu.Unlock()
		if !strings.Contains(got, want) {
			t.Errorf("rule %d logged %q, want %q", i, got, want)
		}
	}
}
