package dataplane

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	ber "github.com/go-asn1-ber/asn1-ber"
	"github.com/go-ldap/ldap/v3"

	"github.com/openltm/openltm/dataplane/starttls"
	"github.com/openltm/openltm/dataplane/tlsprof"
)

// ldapMember is a small LDAP server for the StartTLS tests: it answers
// simple binds (any DN with the password "secret"), a search with one
// entry (cn=<the bound DN's first value>), and StartTLS with startTLSCode
// (success: the handshake follows, with its own certificate).
// demandTLS refuses binds and searches over plaintext with
// confidentialityRequired, as a directory that requires TLS does. What
// it heard is recorded: each operation, with "+tls" when it came over
// TLS.
type ldapMember struct {
	startTLSCode int
	demandTLS    bool
	cert         tls.Certificate

	mu    sync.Mutex
	heard []string
}

func startLDAPMember(t *testing.T, addr string, startTLSCode int, demandTLS bool) *ldapMember {
	t.Helper()
	cert, key, _ := testCert(t, "member.example")
	pair, err := tlsprof.Pair("member", cert, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := &ldapMember{startTLSCode: startTLSCode, demandTLS: demandTLS, cert: pair}
	serveConns(t, addr, m.serve)
	return m
}

func (m *ldapMember) ops() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.heard...)
}

func (m *ldapMember) note(s string) {
	m.mu.Lock()
	m.heard = append(m.heard, s)
	m.mu.Unlock()
}

func (m *ldapMember) serve(c net.Conn) {
	var rw net.Conn = c
	onTLS := false
	for range 64 {
		c.SetDeadline(time.Now().Add(20 * time.Second))
		p, err := ber.ReadPacket(rw) // unbuffered: nothing of a handshake is read as LDAP
		if err != nil || len(p.Children) < 2 {
			return
		}
		id, _ := p.Children[0].Value.(int64)
		op := p.Children[1]
		suffix := ""
		if onTLS {
			suffix = "+tls"
		}
		var out []byte
		switch op.Tag {
		case 0: // bind
			dn, _ := op.Children[1].Value.(string)
			m.note("bind " + dn + suffix)
			code := ldap.LDAPResultSuccess
			switch {
			case m.demandTLS && !onTLS:
				code = ldap.LDAPResultConfidentialityRequired
			case op.Children[2].Data.String() != "secret":
				code = ldap.LDAPResultInvalidCredentials
			}
			out = ldapTestMessage(id, ldapTestResult(1, code, ""))
		case 3: // search
			base, _ := op.Children[0].Value.(string)
			m.note("search " + base + suffix)
			if m.demandTLS && !onTLS {
				out = ldapTestMessage(id, ldapTestResult(5, ldap.LDAPResultConfidentialityRequired, "TLS required"))
				break
			}
			e := ber.Encode(ber.ClassApplication, ber.TypeConstructed, 4, nil, "entry")
			e.AppendChild(ber.NewString(ber.ClassUniversal, ber.TypePrimitive, ber.TagOctetString, "cn=alice,"+base, "dn"))
			attrs := ber.NewSequence("attributes")
			a := ber.NewSequence("attribute")
			a.AppendChild(ber.NewString(ber.ClassUniversal, ber.TypePrimitive, ber.TagOctetString, "cn", "type"))
			set := ber.Encode(ber.ClassUniversal, ber.TypeConstructed, ber.TagSet, nil, "vals")
			set.AppendChild(ber.NewString(ber.ClassUniversal, ber.TypePrimitive, ber.TagOctetString, "alice", "val"))
			a.AppendChild(set)
			attrs.AppendChild(a)
			e.AppendChild(attrs)
			out = append(ldapTestMessage(id, e), ldapTestMessage(id, ldapTestResult(5, 0, ""))...)
		case 23: // extended
			name := ""
			if len(op.Children) > 0 {
				name = op.Children[0].Data.String()
			}
			m.note("extended " + name + suffix)
			code := m.startTLSCode
			if name != starttls.StartTLSOID || onTLS {
				code = ldap.LDAPResultProtocolError
			}
			if _, err := rw.Write(ldapTestMessage(id, ldapTestResult(24, code, ""))); err != nil || code != 0 {
				continue
			}
			sc := tls.Server(rw, &tls.Config{Certificates: []tls.Certificate{m.cert}})
			if err := sc.Handshake(); err != nil {
				m.note("handshake failed")
				return
			}
			rw, onTLS = sc, true
			continue
		case 2: // unbind
			m.note("unbind" + suffix)
			return
		default:
			m.note(fmt.Sprintf("op %d", op.Tag))
			return
		}
		if _, err := rw.Write(out); err != nil {
			return
		}
	}
}

func ldapTestMessage(id int64, op *ber.Packet) []byte {
	m := ber.NewSequence("message")
	m.AppendChild(ber.NewInteger(ber.ClassUniversal, ber.TypePrimitive, ber.TagInteger, id, "id"))
	m.AppendChild(op)
	return m.Bytes()
}

func ldapTestResult(app ber.Tag, code int, diag string) *ber.Packet {
	p := ber.Encode(ber.ClassApplication, ber.TypeConstructed, app, nil, "result")
	p.AppendChild(ber.NewInteger(ber.ClassUniversal, ber.TypePrimitive, ber.TagEnumerated, code, "code"))
	p.AppendChild(ber.NewString(ber.ClassUniversal, ber.TypePrimitive, ber.TagOctetString, "", "matched"))
	p.AppendChild(ber.NewString(ber.ClassUniversal, ber.TypePrimitive, ber.TagOctetString, diag, "diagnostic"))
	return p
}

// ldapCase is one virtual of a test: client-ldap in client (nil: none,
// and no client-ssl), server-ldap in server (nil: none, and no
// server-ssl), and its rules.
type ldapCase struct {
	vs, member string
	client     *starttls.Mode
	server     *starttls.Mode
	rules      string
}

func mode(m starttls.Mode) *starttls.Mode { return &m }

// ldapVirtuals applies the cases' virtuals and returns the roots that
// trust the client-ssl certificate (ldap.example), the certificate's PEM
// file, and the rules' logs by virtual.
func ldapVirtuals(t *testing.T, cases ...ldapCase) (*x509.CertPool, string, map[string]*ruleLog) {
	t.Helper()
	cert, key, roots := testCert(t, "ldap.example")
	p, _ := newPlane(t)
	cfg := &Config{Virtuals: map[string]*Virtual{}, Pools: map[string]*Pool{}, Monitors: map[string]*Monitor{}}
	logs := map[string]*ruleLog{}
	for i, c := range cases {
		name := fmt.Sprintf("/Common/ldap%d", i)
		v := basic(c.vs, c.member).Virtuals["/Common/vs"]
		pool := basic(c.vs, c.member).Pools["/Common/pool"]
		pool.Name = "/Common/pool_ldap" + fmt.Sprint(i)
		v.Name, v.Pool = name, pool.Name
		if c.client != nil {
			v.TLS = clientSSL(t, cert, key)
			v.STARTTLS = &starttls.Options{Profile: "/Common/clientldap", Protocol: starttls.LDAP, Mode: *c.client}
		}
		if c.server != nil {
			if v.TLS == nil {
				v.TLS = &TLS{}
			}
			v.TLS.Server = serverSSL(t)
			v.ServerLDAP = &starttls.ServerLDAP{Profile: "/Common/serverldap", Mode: *c.server}
		}
		if c.rules != "" {
			v.Rules, logs[c.vs] = compileRules(t, c.rules)
		}
		cfg.Virtuals[name] = v
		cfg.Pools[pool.Name] = pool
	}
	mustApply(t, p, cfg)
	file := t.TempDir() + "/ca.pem"
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certs[0].Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return roots, file, logs
}

// ldapBindSearch binds as cn=admin and searches dc=example, through c.
func ldapBindSearch(c *ldap.Conn) (string, error) {
	if err := c.Bind("cn=admin,dc=example", "secret"); err != nil {
		return "", err
	}
	res, err := c.Search(ldap.NewSearchRequest("dc=example", ldap.ScopeWholeSubtree, ldap.NeverDerefAliases, 0, 10, false, "(cn=*)", []string{"cn"}, nil))
	if err != nil {
		return "", err
	}
	if len(res.Entries) != 1 {
		return "", fmt.Errorf("%d entries", len(res.Entries))
	}
	return res.Entries[0].DN, nil
}

func ldapDial(t *testing.T, addr string) *ldap.Conn {
	t.Helper()
	c, err := ldap.DialURL("ldap://"+addr, ldap.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	c.SetTimeout(20 * time.Second)
	t.Cleanup(func() { c.Close() })
	return c
}

func hasOp(ops []string, prefix string) bool {
	for _, o := range ops {
		if strings.HasPrefix(o, prefix) {
			return true
		}
	}
	return false
}

// TestLDAPStartTLSClient: client-ldap in allow, require and none, with
// go-ldap's client. The virtual answers StartTLS and ends the client's
// TLS; the member stays plaintext and never hears StartTLS (allow,
// require); require refuses a bind before StartTLS with
// confidentialityRequired; none passes StartTLS to the member.
func TestLDAPStartTLSClient(t *testing.T) {
	t.Parallel()
	m := startLDAPMember(t, "127.119.1.10:3389", ldap.LDAPResultUnavailable, false)
	roots, _, _ := ldapVirtuals(t,
		ldapCase{vs: "127.119.1.1:389", member: "127.119.1.10:3389", client: mode(starttls.Allow)},
		ldapCase{vs: "127.119.1.2:389", member: "127.119.1.10:3389", client: mode(starttls.Require)},
		ldapCase{vs: "127.119.1.3:389", member: "127.119.1.10:3389", client: mode(starttls.None)},
	)
	tcfg := &tls.Config{ServerName: "ldap.example", RootCAs: roots}

	for _, vs := range []string{"127.119.1.1:389", "127.119.1.2:389"} {
		c := ldapDial(t, vs)
		if err := c.StartTLS(tcfg); err != nil {
			t.Fatalf("%s: StartTLS: %v", vs, err)
		}
		if st, ok := c.TLSConnectionState(); !ok || !st.HandshakeComplete {
			t.Fatalf("%s: no TLS after StartTLS", vs)
		}
		if dn, err := ldapBindSearch(c); err != nil || dn != "cn=alice,dc=example" {
			t.Fatalf("%s: over TLS: %q %v", vs, dn, err)
		}
		if err := c.StartTLS(tcfg); err == nil {
			t.Errorf("%s: a second StartTLS succeeded", vs)
		}
	}
	// allow: a client that does not ask goes on in plaintext.
	if dn, err := ldapBindSearch(ldapDial(t, "127.119.1.1:389")); err != nil || dn != "cn=alice,dc=example" {
		t.Fatalf("allow, plaintext: %q %v", dn, err)
	}
	if hasOp(m.ops(), "extended") {
		t.Errorf("the member heard StartTLS: %q", m.ops())
	}
	// require: refused before StartTLS, and the member hears nothing.
	before := len(m.ops())
	err := ldapDial(t, "127.119.1.2:389").Bind("cn=admin,dc=example", "secret")
	if !ldap.IsErrorWithCode(err, ldap.LDAPResultConfidentialityRequired) {
		t.Errorf("require, plaintext bind: %v", err)
	}
	if got := m.ops(); len(got) != before {
		t.Errorf("require: the member heard %q", got[before:])
	}
	// none: StartTLS is the member's, which has none to offer.
	err = ldapDial(t, "127.119.1.3:389").StartTLS(tcfg)
	if !ldap.IsErrorWithCode(err, ldap.LDAPResultUnavailable) {
		t.Errorf("none: StartTLS: %v", err)
	}
	if !hasOp(m.ops(), "extended "+starttls.StartTLSOID) {
		t.Errorf("none: the member did not hear StartTLS: %q", m.ops())
	}
}

// TestLDAPStartTLSServer: server-ldap sends StartTLS to a member that
// demands TLS, then runs server-ssl; the client speaks plaintext (or,
// with client-ldap too, its own StartTLS to the virtual). A member that
// declines StartTLS resets the client's connection under require and
// stays plaintext under allow.
func TestLDAPStartTLSServer(t *testing.T) {
	t.Parallel()
	secure := startLDAPMember(t, "127.119.2.10:3389", ldap.LDAPResultSuccess, true)
	plain := startLDAPMember(t, "127.119.2.11:3389", ldap.LDAPResultUnavailable, false)
	roots, _, _ := ldapVirtuals(t,
		ldapCase{vs: "127.119.2.1:389", member: "127.119.2.10:3389", server: mode(starttls.Require)},
		ldapCase{vs: "127.119.2.2:389", member: "127.119.2.10:3389", server: mode(starttls.Allow), client: mode(starttls.Require)},
		ldapCase{vs: "127.119.2.3:389", member: "127.119.2.11:3389", server: mode(starttls.Require)},
		ldapCase{vs: "127.119.2.4:389", member: "127.119.2.11:3389", server: mode(starttls.Allow)},
	)
	if dn, err := ldapBindSearch(ldapDial(t, "127.119.2.1:389")); err != nil || dn != "cn=alice,dc=example" {
		t.Fatalf("server-ldap: %q %v", dn, err)
	}
	c := ldapDial(t, "127.119.2.2:389")
	if err := c.StartTLS(&tls.Config{ServerName: "ldap.example", RootCAs: roots}); err != nil {
		t.Fatalf("client-ldap and server-ldap: StartTLS: %v", err)
	}
	if dn, err := ldapBindSearch(c); err != nil || dn != "cn=alice,dc=example" {
		t.Fatalf("client-ldap and server-ldap: %q %v", dn, err)
	}
	ops := secure.ops()
	if !hasOp(ops, "bind cn=admin,dc=example+tls") {
		t.Errorf("the member heard %q", ops)
	}
	for _, o := range ops {
		if strings.HasPrefix(o, "bind") && !strings.HasSuffix(o, "+tls") {
			t.Errorf("a bind reached the member in plaintext: %q", ops)
		}
	}
	// require: the member declines, the client is reset. The virtual
	// talks to the member as soon as it accepts, so on a loaded machine
	// the reset can reach the client before its own connect has
	// returned: a dial that fails is the same outcome.
	if c, err := ldap.DialURL("ldap://127.119.2.3:389", ldap.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second})); err == nil {
		c.SetTimeout(20 * time.Second)
		_, err := ldapBindSearch(c)
		c.Close()
		if err == nil {
			t.Error("require toward a member without StartTLS: the bind went through")
		}
	} else if !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("require toward a member without StartTLS: %v, want a reset", err)
	}
	if hasOp(plain.ops(), "bind") {
		t.Errorf("require: the bind reached the member: %q", plain.ops())
	}
	// allow: it goes on in plaintext.
	if dn, err := ldapBindSearch(ldapDial(t, "127.119.2.4:389")); err != nil || dn != "cn=alice,dc=example" {
		t.Fatalf("allow toward a member without StartTLS: %q %v", dn, err)
	}
	if !hasOp(plain.ops(), "bind cn=admin,dc=example") {
		t.Errorf("allow: %q", plain.ops())
	}
}

// TestLDAPStartTLSRules: LDAP::disable in CLIENT_ACCEPTED passes the
// client's StartTLS to the member; LDAP::activation_mode require there
// refuses a plaintext bind; in SERVER_CONNECTED, on a virtual with both
// profiles, LDAP::disable keeps the member's side plaintext.
func TestLDAPStartTLSRules(t *testing.T) {
	t.Parallel()
	m := startLDAPMember(t, "127.119.3.10:3389", ldap.LDAPResultUnavailable, false)
	_, _, logs := ldapVirtuals(t,
		ldapCase{vs: "127.119.3.1:389", member: "127.119.3.10:3389", client: mode(starttls.Allow),
			rules: `when CLIENT_ACCEPTED { log local0. "mode [LDAP::activation_mode]"; LDAP::disable }`},
		ldapCase{vs: "127.119.3.2:389", member: "127.119.3.10:3389", client: mode(starttls.Allow),
			rules: `when CLIENT_ACCEPTED { LDAP::activation_mode require }`},
		ldapCase{vs: "127.119.3.3:389", member: "127.119.3.10:3389", client: mode(starttls.Allow), server: mode(starttls.Require),
			rules: `when SERVER_CONNECTED { LDAP::disable }`},
		ldapCase{vs: "127.119.3.4:389", member: "127.119.3.10:3389",
			rules: `when CLIENT_ACCEPTED { catch { LDAP::enable } e; log local0. $e }`},
	)
	err := ldapDial(t, "127.119.3.1:389").StartTLS(&tls.Config{InsecureSkipVerify: true})
	if !ldap.IsErrorWithCode(err, ldap.LDAPResultUnavailable) {
		t.Errorf("LDAP::disable: StartTLS: %v", err)
	}
	err = ldapDial(t, "127.119.3.2:389").Bind("cn=admin,dc=example", "secret")
	if !ldap.IsErrorWithCode(err, ldap.LDAPResultConfidentialityRequired) {
		t.Errorf("LDAP::activation_mode require: bind: %v", err)
	}
	if dn, err := ldapBindSearch(ldapDial(t, "127.119.3.3:389")); err != nil || dn != "cn=alice,dc=example" {
		t.Errorf("LDAP::disable serverside: %q %v", dn, err)
	}
	ldapBindSearch(ldapDial(t, "127.119.3.4:389"))
	for vs, want := range map[string]string{"127.119.3.1:389": "mode allow", "127.119.3.4:389": "has no client-ldap or server-ldap profile"} {
		got := ""
		for range 100 { // the log line may follow the answer
			logs[vs].mu.Lock()
			got = strings.Join(logs[vs].lines, "\n")
			logs[vs].mu.Unlock()
			if strings.Contains(got, want) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if !strings.Contains(got, want) {
			t.Errorf("%s logged %q, want %q", vs, got, want)
		}
	}
	if n := strings.Count(strings.Join(m.ops(), "\n"), "extended"); n != 1 {
		t.Errorf("the member heard StartTLS %d times: %q", n, m.ops())
	}
}

// TestLDAPStartTLSPipelined: a bind sent in plaintext right behind the
// StartTLS request, before its answer, is dropped: it reaches neither
// the member nor the TLS session, which goes on with the client's next
// request.
func TestLDAPStartTLSPipelined(t *testing.T) {
	t.Parallel()
	m := startLDAPMember(t, "127.119.4.10:3389", ldap.LDAPResultUnavailable, false)
	roots, _, _ := ldapVirtuals(t, ldapCase{vs: "127.119.4.1:389", member: "127.119.4.10:3389", client: mode(starttls.Allow)})
	raw, err := net.DialTimeout("tcp", "127.119.4.1:389", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.SetDeadline(time.Now().Add(20 * time.Second))
	bind := ber.Encode(ber.ClassApplication, ber.TypeConstructed, 0, nil, "bind")
	bind.AppendChild(ber.NewInteger(ber.ClassUniversal, ber.TypePrimitive, ber.TagInteger, 3, "version"))
	bind.AppendChild(ber.NewString(ber.ClassUniversal, ber.TypePrimitive, ber.TagOctetString, "cn=injected", "dn"))
	bind.AppendChild(ber.NewString(ber.ClassContext, ber.TypePrimitive, 0, "secret", "pw"))
	if _, err := raw.Write(append(starttls.LDAPStartTLSRequest(1), ldapTestMessage(2, bind)...)); err != nil {
		t.Fatal(err)
	}
	p, err := ber.ReadPacket(raw)
	if err != nil {
		t.Fatal(err)
	}
	if code, _ := p.Children[1].Children[0].Value.(int64); code != 0 {
		t.Fatalf("StartTLS answered %d", code)
	}
	tc := tls.Client(raw, &tls.Config{ServerName: "ldap.example", RootCAs: roots})
	if err := tc.Handshake(); err != nil {
		t.Fatalf("handshake after StartTLS: %v", err)
	}
	c := ldap.NewConn(tc, true)
	c.Start()
	c.SetTimeout(20 * time.Second)
	defer c.Close()
	if dn, err := ldapBindSearch(c); err != nil || dn != "cn=alice,dc=example" {
		t.Fatalf("over TLS: %q %v", dn, err)
	}
	if hasOp(m.ops(), "bind cn=injected") {
		t.Errorf("the pipelined bind reached the member: %q", m.ops())
	}
}

// TestLDAPStartTLSLdapsearch: OpenLDAP's ldapsearch with -ZZ (StartTLS
// required) and -Z through client-ldap virtuals.
func TestLDAPStartTLSLdapsearch(t *testing.T) {
	t.Parallel()
	bin, err := exec.LookPath("ldapsearch")
	if err != nil {
		t.Skip("ldapsearch is needed (Debian ldap-utils)")
	}
	m := startLDAPMember(t, "127.119.5.10:3389", ldap.LDAPResultUnavailable, false)
	_, ca, _ := ldapVirtuals(t,
		ldapCase{vs: "127.119.5.1:389", member: "127.119.5.10:3389", client: mode(starttls.Require)},
		ldapCase{vs: "127.119.5.2:389", member: "127.119.5.10:3389", client: mode(starttls.None)},
	)
	run := func(vs, flag string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, flag, "-x", "-H", "ldap://"+vs, "-D", "cn=admin,dc=example", "-w", "secret",
			"-b", "dc=example", "-o", "nettimeout=10", "-LLL", "(cn=*)", "cn")
		// The certificate names ldap.example, not the address dialled:
		// the handshake is checked against the CA, the name is not.
		cmd.Env = append(os.Environ(), "LDAPTLS_CACERT="+ca, "LDAPTLS_REQCERT=allow", "LDAPCONF=/dev/null", "LDAPRC=/dev/null", "HOME="+t.TempDir())
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run("127.119.5.1:389", "-ZZ")
	if err != nil || !strings.Contains(out, "dn: cn=alice,dc=example") {
		t.Fatalf("ldapsearch -ZZ: %v\n%s", err, out)
	}
	// -Z tries StartTLS and goes on without it: the none virtual passes it
	// to the member, which declines.
	out, err = run("127.119.5.2:389", "-Z")
	if err != nil || !strings.Contains(out, "dn: cn=alice,dc=example") {
		t.Fatalf("ldapsearch -Z: %v\n%s", err, out)
	}
	if n := strings.Count(strings.Join(m.ops(), "\n"), "extended"); n != 1 {
		t.Errorf("the member heard StartTLS %d times: %q", n, m.ops())
	}
}
