package monitor

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	ber "github.com/go-asn1-ber/asn1-ber"
	"github.com/go-ldap/ldap/v3"
)

// LDAP protocol operations (RFC 4511 §4.2 to §4.12) the fake server knows.
const (
	ldapBindRequest      = 0
	ldapBindResponse     = 1
	ldapUnbindRequest    = 2
	ldapSearchRequest    = 3
	ldapSearchEntry      = 4
	ldapSearchDone       = 5
	ldapSearchReference  = 19
	ldapExtendedRequest  = 23
	ldapExtendedResponse = 24
	ldapStartTLSOID      = "1.3.6.1.4.1.1466.20037"
)

// ldapEntry is one entry the fake server returns; attrs may be empty.
type ldapEntry struct {
	dn    string
	attrs map[string][]string
}

// ldapScript is how the fake LDAP server answers.
type ldapScript struct {
	dn, password string      // the bind that succeeds; any other is invalidCredentials
	entries      []ldapEntry // returned by every search
	refs         []string    // SearchResultReference URIs, after the entries
	code         int         // the SearchResultDone result code
	startTLSCode int         // the StartTLS result code
	ssl          bool        // TLS from the first byte
	silent       bool        // read, never answer
	hangup       bool        // close at once
}

// ldapFake is a small LDAP server for the probe's connections, answering
// as its script says; what the probe sent is recorded in seen, which the
// test reads after wait.
type ldapFake struct {
	ldapScript
	cert tls.Certificate

	addr  netip.AddrPort
	ln    net.Listener
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns []net.Conn
	seen  ldapSeen
}

// ldapSeen is what the probe sent.
type ldapSeen struct {
	binds                int
	bindDN, bindPassword string
	searches             int
	base, filter         string
	scope                int64
	sizeLimit, timeLimit int64
	attrs                []string
	startTLS, unbind     bool
	errs                 []string
}

// startLDAP listens on loopback and serves up to 4 connections, each for at
// most 5 seconds and 16 requests. Cleanup closes the listener and the
// connections and waits for every goroutine.
func startLDAP(t *testing.T, script ldapScript) *ldapFake {
	t.Helper()
	f := &ldapFake{ldapScript: script, cert: selfSigned(t, "ldap.test", false)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no loopback listener: %v", err)
	}
	f.ln, f.addr = ln, netip.MustParseAddrPort(ln.Addr().String())
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		for range 4 {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			f.mu.Lock()
			f.conns = append(f.conns, c)
			f.mu.Unlock()
			f.wg.Add(1)
			go func() {
				defer f.wg.Done()
				defer c.Close()
				f.serve(c)
			}()
		}
	}()
	t.Cleanup(func() {
		f.mu.Lock()
		for _, c := range f.conns {
			c.Close()
		}
		f.mu.Unlock()
		f.wait(t)
	})
	return f
}

// wait stops accepting and waits for the connections to end (the probe
// hangs up when it is done), then returns what the probe sent.
func (f *ldapFake) wait(t *testing.T) ldapSeen {
	t.Helper()
	f.ln.Close()
	done := make(chan struct{})
	go func() {
		f.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the fake LDAP server did not finish")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.seen
}

func (f *ldapFake) fail(format string, a ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen.errs = append(f.seen.errs, fmt.Sprintf(format, a...))
}

func (f *ldapFake) tlsConfig() *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{f.cert}}
}

func (f *ldapFake) serve(c net.Conn) {
	if f.hangup {
		return
	}
	c.SetDeadline(time.Now().Add(5 * time.Second))
	var rw net.Conn = c
	if f.ssl {
		sc := tls.Server(c, f.tlsConfig())
		if err := sc.Handshake(); err != nil {
			f.fail("LDAPS handshake: %v", err)
			return
		}
		rw = sc
	}
	if f.silent {
		io.Copy(io.Discard, rw)
		return
	}
	for range 16 {
		// Unbuffered, so that nothing of a TLS handshake after StartTLS
		// is read as LDAP.
		p, err := ber.ReadPacket(rw)
		if err != nil {
			return
		}
		if len(p.Children) < 2 {
			f.fail("a message without an operation: %s", ber.DescribePacket(p))
			return
		}
		id, _ := p.Children[0].Value.(int64)
		op := p.Children[1]
		if op.ClassType != ber.ClassApplication {
			f.fail("an operation of class %v", op.ClassType)
			return
		}
		var reply [][]byte
		switch op.Tag {
		case ldapBindRequest:
			reply = f.bind(id, op)
		case ldapSearchRequest:
			reply = f.search(id, op)
		case ldapExtendedRequest:
			if len(op.Children) < 1 || op.Children[0].Data.String() != ldapStartTLSOID {
				f.fail("an extended request other than StartTLS")
				return
			}
			f.mu.Lock()
			f.seen.startTLS = true
			f.mu.Unlock()
			if _, err := rw.Write(ldapMessage(id, ldapResult(ldapExtendedResponse, f.startTLSCode, ""))); err != nil || f.startTLSCode != 0 {
				continue
			}
			sc := tls.Server(rw, f.tlsConfig())
			if err := sc.Handshake(); err != nil {
				f.fail("StartTLS handshake: %v", err)
				return
			}
			rw = sc
			continue
		case ldapUnbindRequest:
			f.mu.Lock()
			f.seen.unbind = true
			f.mu.Unlock()
			return
		default:
			f.fail("unexpected operation %d", op.Tag)
			return
		}
		for _, m := range reply {
			if _, err := rw.Write(m); err != nil {
				return
			}
		}
	}
	f.fail("more requests than a probe sends")
}

// bind answers a simple bind: success for the expected DN and password.
func (f *ldapFake) bind(id int64, op *ber.Packet) [][]byte {
	if len(op.Children) < 3 {
		f.fail("a short bind request")
		return [][]byte{ldapMessage(id, ldapResult(ldapBindResponse, ldap.LDAPResultProtocolError, "short bind"))}
	}
	dn, _ := op.Children[1].Value.(string)
	pw := op.Children[2].Data.String()
	f.mu.Lock()
	f.seen.binds++
	f.seen.bindDN, f.seen.bindPassword = dn, pw
	f.mu.Unlock()
	if dn != f.dn || pw != f.password {
		return [][]byte{ldapMessage(id, ldapResult(ldapBindResponse, ldap.LDAPResultInvalidCredentials, "wrong DN or password"))}
	}
	return [][]byte{ldapMessage(id, ldapResult(ldapBindResponse, ldap.LDAPResultSuccess, ""))}
}

// search records the request and answers with the entries, references and
// the chosen result.
func (f *ldapFake) search(id int64, op *ber.Packet) [][]byte {
	if len(op.Children) < 8 {
		f.fail("a short search request")
		return [][]byte{ldapMessage(id, ldapResult(ldapSearchDone, ldap.LDAPResultProtocolError, "short search"))}
	}
	filter, err := ldap.DecompileFilter(op.Children[6])
	if err != nil {
		f.fail("filter: %v", err)
	}
	var attrs []string
	for _, a := range op.Children[7].Children {
		s, _ := a.Value.(string)
		attrs = append(attrs, s)
	}
	f.mu.Lock()
	f.seen.searches++
	f.seen.base, _ = op.Children[0].Value.(string)
	f.seen.scope, _ = op.Children[1].Value.(int64)
	f.seen.sizeLimit, _ = op.Children[3].Value.(int64)
	f.seen.timeLimit, _ = op.Children[4].Value.(int64)
	f.seen.filter, f.seen.attrs = filter, attrs
	f.mu.Unlock()

	var out [][]byte
	for _, e := range f.entries {
		p := ber.Encode(ber.ClassApplication, ber.TypeConstructed, ldapSearchEntry, nil, "entry")
		p.AppendChild(ber.NewString(ber.ClassUniversal, ber.TypePrimitive, ber.TagOctetString, e.dn, "dn"))
		list := ber.NewSequence("attributes")
		for name, vals := range e.attrs {
			a := ber.NewSequence("attribute")
			a.AppendChild(ber.NewString(ber.ClassUniversal, ber.TypePrimitive, ber.TagOctetString, name, "type"))
			set := ber.Encode(ber.ClassUniversal, ber.TypeConstructed, ber.TagSet, nil, "vals")
			for _, v := range vals {
				set.AppendChild(ber.NewString(ber.ClassUniversal, ber.TypePrimitive, ber.TagOctetString, v, "val"))
			}
			a.AppendChild(set)
			list.AppendChild(a)
		}
		p.AppendChild(list)
		out = append(out, ldapMessage(id, p))
	}
	for _, r := range f.refs {
		p := ber.Encode(ber.ClassApplication, ber.TypeConstructed, ldapSearchReference, nil, "reference")
		p.AppendChild(ber.NewString(ber.ClassUniversal, ber.TypePrimitive, ber.TagOctetString, r, "uri"))
		out = append(out, ldapMessage(id, p))
	}
	done := ldapResult(ldapSearchDone, f.code, "")
	if f.code == ldap.LDAPResultReferral {
		ref := ber.Encode(ber.ClassContext, ber.TypeConstructed, 3, nil, "referral")
		ref.AppendChild(ber.NewString(ber.ClassUniversal, ber.TypePrimitive, ber.TagOctetString, "ldap://elsewhere.test/", "uri"))
		done.AppendChild(ref)
	}
	return append(out, ldapMessage(id, done))
}

// ldapMessage wraps an operation in an LDAPMessage.
func ldapMessage(id int64, op *ber.Packet) []byte {
	m := ber.NewSequence("message")
	m.AppendChild(ber.NewInteger(ber.ClassUniversal, ber.TypePrimitive, ber.TagInteger, id, "id"))
	m.AppendChild(op)
	return m.Bytes()
}

// ldapResult is an LDAPResult of the operation app.
func ldapResult(app ber.Tag, code int, diag string) *ber.Packet {
	p := ber.Encode(ber.ClassApplication, ber.TypeConstructed, app, nil, "result")
	p.AppendChild(ber.NewInteger(ber.ClassUniversal, ber.TypePrimitive, ber.TagEnumerated, code, "code"))
	p.AppendChild(ber.NewString(ber.ClassUniversal, ber.TypePrimitive, ber.TagOctetString, "", "matched"))
	p.AppendChild(ber.NewString(ber.ClassUniversal, ber.TypePrimitive, ber.TagOctetString, diag, "diagnostic"))
	return p
}

func TestProbeLDAP(t *testing.T) {
	one := []ldapEntry{{dn: "uid=monitor,ou=people,dc=example,dc=com", attrs: map[string][]string{"uid": {"monitor"}}}}
	bare := []ldapEntry{{dn: "uid=monitor,ou=people,dc=example,dc=com"}}
	const (
		dn   = "cn=monitor,dc=example,dc=com"
		pass = "s3cret pass"
		base = "dc=example,dc=com"
	)
	cases := []struct {
		name   string
		check  *LDAPCheck
		server ldapScript
		up     bool
		err    string // a substring of the error; "" when up
		errIs  error
		seen   func(t *testing.T, s ldapSeen)
	}{
		{name: "anonymous root DSE, nil settings", check: nil, server: ldapScript{entries: one}, up: true,
			seen: func(t *testing.T, s ldapSeen) {
				if s.binds != 1 || s.bindDN != "" || s.bindPassword != "" {
					t.Errorf("bind %d as %q/%q, want one anonymous", s.binds, s.bindDN, s.bindPassword)
				}
				if s.base != "" || s.scope != ldap.ScopeBaseObject || s.filter != "(objectClass=*)" {
					t.Errorf("search %q scope %d %s, want the root DSE", s.base, s.scope, s.filter)
				}
				if s.sizeLimit != 1 || s.timeLimit < 1 || s.timeLimit > 2 || len(s.attrs) != 0 {
					t.Errorf("size limit %d, time limit %d, attributes %q; want 1, 1 or 2, none", s.sizeLimit, s.timeLimit, s.attrs)
				}
				if !s.unbind {
					t.Error("no unbind")
				}
			}},
		{name: "bind with DN and password", check: &LDAPCheck{Base: base, Filter: "(&(objectClass=person)(uid=monitor))", Username: dn, Password: pass},
			server: ldapScript{dn: dn, password: pass, entries: one}, up: true,
			seen: func(t *testing.T, s ldapSeen) {
				if s.bindDN != dn || s.bindPassword != pass {
					t.Errorf("bind as %q/%q, want %q/%q", s.bindDN, s.bindPassword, dn, pass)
				}
				if s.base != base || s.scope != ldap.ScopeSingleLevel || s.filter != "(&(objectClass=person)(uid=monitor))" {
					t.Errorf("search %q scope %d %s", s.base, s.scope, s.filter)
				}
			}},
		{name: "wrong password", check: &LDAPCheck{Base: base, Username: dn, Password: "wrong"},
			server: ldapScript{dn: dn, password: pass, entries: one}, err: `Bind failed; LDAP Result Code 49 "Invalid Credentials": wrong DN or password`,
			seen: func(t *testing.T, s ldapSeen) {
				if s.searches != 0 {
					t.Error("searched after a failed bind")
				}
			}},
		{name: "no entries", check: &LDAPCheck{Base: base}, server: ldapScript{}, errIs: errLDAPNoEntries},
		{name: "no such base", check: &LDAPCheck{Base: base}, server: ldapScript{code: ldap.LDAPResultNoSuchObject},
			err: `Search failed; LDAP Result Code 32 "No Such Object"`},
		{name: "size limit exceeded after one entry", check: &LDAPCheck{Base: base},
			server: ldapScript{entries: one, code: ldap.LDAPResultSizeLimitExceeded}, up: true},
		{name: "mandatory attributes, entry without", check: &LDAPCheck{Base: base, MandatoryAttributes: true},
			server: ldapScript{entries: bare}, errIs: errLDAPNoAttributes,
			seen: func(t *testing.T, s ldapSeen) {
				if s.scope != ldap.ScopeWholeSubtree {
					t.Errorf("scope %d, want the subtree", s.scope)
				}
			}},
		{name: "mandatory attributes, entry with", check: &LDAPCheck{Base: base, MandatoryAttributes: true},
			server: ldapScript{entries: one}, up: true},
		{name: "entry without attributes is enough without mandatory", check: &LDAPCheck{Base: base},
			server: ldapScript{entries: bare}, up: true},
		{name: "referral result, chasing", check: &LDAPCheck{Base: base, ChaseReferrals: true},
			server: ldapScript{code: ldap.LDAPResultReferral}, up: true},
		{name: "referral result, not chasing", check: &LDAPCheck{Base: base},
			server: ldapScript{code: ldap.LDAPResultReferral}, errIs: errLDAPReferral},
		{name: "reference only, chasing", check: &LDAPCheck{Base: base, ChaseReferrals: true},
			server: ldapScript{refs: []string{"ldap://elsewhere.test/dc=example,dc=com"}}, up: true},
		{name: "reference only, not chasing", check: &LDAPCheck{Base: base},
			server: ldapScript{refs: []string{"ldap://elsewhere.test/dc=example,dc=com"}}, errIs: errLDAPReferral},
		{name: "security ssl", check: &LDAPCheck{Base: base, Security: "ssl", Username: dn, Password: pass},
			server: ldapScript{ssl: true, dn: dn, password: pass, entries: one}, up: true,
			seen: func(t *testing.T, s ldapSeen) {
				if s.bindDN != dn || s.searches != 1 || !s.unbind {
					t.Errorf("over LDAPS: bind as %q, %d searches, unbind %v", s.bindDN, s.searches, s.unbind)
				}
			}},
		{name: "security ssl, server hangs up", check: &LDAPCheck{Security: "ssl"},
			server: ldapScript{hangup: true}, err: "SSL handshake failed"},
		{name: "server hangs up", check: &LDAPCheck{}, server: ldapScript{hangup: true}, err: "Bind failed"},
		{name: "security tls", check: &LDAPCheck{Base: base, Security: "tls", Username: dn, Password: pass},
			server: ldapScript{dn: dn, password: pass, entries: one}, up: true,
			seen: func(t *testing.T, s ldapSeen) {
				if !s.startTLS || s.bindDN != dn || s.searches != 1 || !s.unbind {
					t.Errorf("StartTLS %v, bind as %q, %d searches, unbind %v", s.startTLS, s.bindDN, s.searches, s.unbind)
				}
			}},
		{name: "StartTLS refused", check: &LDAPCheck{Security: "tls"},
			server: ldapScript{entries: one, startTLSCode: ldap.LDAPResultUnavailable}, err: `StartTLS failed; LDAP Result Code 52 "Unavailable"`,
			seen: func(t *testing.T, s ldapSeen) {
				if s.binds != 0 {
					t.Error("bound in the clear after StartTLS was refused")
				}
			}},
		{name: "no answer", check: &LDAPCheck{Base: base}, server: ldapScript{silent: true}, errIs: ErrNoResponse},
		{name: "no answer over ssl", check: &LDAPCheck{Base: base, Security: "ssl"}, server: ldapScript{silent: true, ssl: true}, errIs: ErrNoResponse},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := startLDAP(t, c.server)
			d := 3 * time.Second
			if c.server.silent {
				d = 300 * time.Millisecond
			}
			out, err := probe(t, &Spec{Type: LDAP, LDAP: c.check}, f.addr, d)
			wantVerdict(t, out, err, c.up, c.err, c.errIs)
			s := f.wait(t)
			for _, e := range s.errs {
				t.Errorf("fake server: %s", e)
			}
			if c.seen != nil {
				c.seen(t, s)
			}
		})
	}
}

func TestLDAPSpecCheckAndEqual(t *testing.T) {
	for _, l := range []*LDAPCheck{nil, {}, {Security: "none"}, {Security: "ssl"}, {Security: "tls"},
		{Base: "dc=example,dc=com", Filter: "(&(objectClass=person)(|(uid=a)(cn=b*)))", Username: "cn=x", Password: "p"}} {
		if err := (&Spec{Type: LDAP, LDAP: l}).Check(); err != nil {
			t.Errorf("%+v: Check() = %v", l, err)
		}
	}
	if err := (&Spec{Type: LDAP, LDAP: &LDAPCheck{Security: "starttls"}}).Check(); err == nil ||
		err.Error() != `security "starttls" is not none, ssl or tls` {
		t.Errorf("bad security: Check() = %v", err)
	}
	for _, f := range []string{"uid=monitor", "(uid=monitor", "(&(uid=a)", "(uid=a))"} {
		err := (&Spec{Type: LDAP, LDAP: &LDAPCheck{Filter: f}}).Check()
		if err == nil || !strings.HasPrefix(err.Error(), fmt.Sprintf("filter %q: ", f)) {
			t.Errorf("filter %q: Check() = %v", f, err)
		}
	}
	// The probe refuses what Check refuses, without connecting.
	if _, err := probe(t, &Spec{Type: LDAP, LDAP: &LDAPCheck{Filter: "uid"}}, netip.MustParseAddrPort("127.0.0.1:9"), time.Second); err == nil ||
		!strings.HasPrefix(err.Error(), "filter") {
		t.Errorf("Probe with a bad filter = %v", err)
	}

	a := &Spec{Type: LDAP, LDAP: &LDAPCheck{Base: "dc=x", Filter: "(uid=m)", Username: "u", Password: "p", Security: "tls", ChaseReferrals: true}}
	if !a.Equal(&Spec{Type: LDAP, LDAP: &LDAPCheck{Base: "dc=x", Filter: "(uid=m)", Username: "u", Password: "p", Security: "tls", ChaseReferrals: true}}) {
		t.Error("equal ldap settings compared unequal")
	}
	for _, b := range []*LDAPCheck{nil, {}, {Base: "dc=y", Filter: "(uid=m)", Username: "u", Password: "p", Security: "tls", ChaseReferrals: true},
		{Base: "dc=x", Filter: "(uid=m)", Username: "u", Password: "q", Security: "tls", ChaseReferrals: true},
		{Base: "dc=x", Filter: "(uid=m)", Username: "u", Password: "p", Security: "ssl", ChaseReferrals: true},
		{Base: "dc=x", Filter: "(uid=m)", Username: "u", Password: "p", Security: "tls"},
		{Base: "dc=x", Filter: "(uid=m)", Username: "u", Password: "p", Security: "tls", ChaseReferrals: true, MandatoryAttributes: true}} {
		if a.Equal(&Spec{Type: LDAP, LDAP: b}) {
			t.Errorf("ldap %+v compared equal to %+v", b, a.LDAP)
		}
	}
	if !(&Spec{Type: LDAP}).Equal(&Spec{Type: LDAP}) {
		t.Error("nil ldap settings compared unequal")
	}
}
