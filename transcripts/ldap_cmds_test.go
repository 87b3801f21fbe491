package transcripts

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"strings"
	"sync"
	"time"

	ber "github.com/go-asn1-ber/asn1-ber"
	"github.com/rogpeppe/go-internal/testscript"
)

// ldapMembers are the LDAP servers the script started, by address.
var ldapMembers sync.Map // string -> *ldapMember

// ldapMember is a small LDAP directory for the LDAP StartTLS transcript:
// simple binds with the password "secret", a search that finds
// cn=alice under its base, and StartTLS with its own certificate (or
// unavailable with -no-starttls). -demand-tls refuses binds and searches
// in plaintext with confidentialityRequired. It notes each operation,
// with "over TLS" when it came so.
type ldapMember struct {
	noStartTLS, demandTLS bool
	cert                  tls.Certificate

	mu    sync.Mutex
	heard []string
}

// ldapserver ADDR [-no-starttls] [-demand-tls]: start a member.
func cmdLDAPServer(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: ldapserver ADDR [-no-starttls] [-demand-tls]")
	}
	m := &ldapMember{cert: ldapSelfSigned(ts)}
	for _, a := range args[1:] {
		switch a {
		case "-no-starttls":
			m.noStartTLS = true
		case "-demand-tls":
			m.demandTLS = true
		default:
			ts.Fatalf("ldapserver: unknown flag %s", a)
		}
	}
	ln, err := net.Listen("tcp", args[0])
	if err != nil {
		ts.Fatalf("ldapserver: %v", err)
	}
	ldapMembers.Store(args[0], m)
	ts.Defer(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go m.serve(c)
		}
	}()
}

// ldapseen ADDR: print what the member at ADDR heard, one operation a
// line.
func cmdLDAPSeen(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: ldapseen ADDR")
	}
	v, ok := ldapMembers.Load(args[0])
	if !ok {
		ts.Fatalf("ldapseen: no member at %s", args[0])
	}
	m := v.(*ldapMember)
	m.mu.Lock()
	defer m.mu.Unlock()
	ts.Stdout().Write([]byte(strings.Join(m.heard, "\n") + "\n"))
}

func ldapSelfSigned(ts *testscript.TestScript) tls.Certificate {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ts.Check(err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "member.example"}, DNSNames: []string{"member.example"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	ts.Check(err)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: k}
}

func (m *ldapMember) note(s string) {
	m.mu.Lock()
	m.heard = append(m.heard, s)
	m.mu.Unlock()
}

func (m *ldapMember) serve(c net.Conn) {
	defer c.Close()
	var rw net.Conn = c
	onTLS := false
	for range 64 {
		c.SetDeadline(time.Now().Add(30 * time.Second))
		p, err := ber.ReadPacket(rw) // unbuffered: a handshake after StartTLS is not read as LDAP
		if err != nil || len(p.Children) < 2 {
			return
		}
		id, _ := p.Children[0].Value.(int64)
		op := p.Children[1]
		how := ""
		if onTLS {
			how = " over TLS"
		}
		var out []byte
		switch op.Tag {
		case 0: // BindRequest
			dn, _ := op.Children[1].Value.(string)
			m.note("bind " + dn + how)
			code := 0
			switch {
			case m.demandTLS && !onTLS:
				code = 13 // confidentialityRequired
			case op.Children[2].Data.String() != "secret":
				code = 49 // invalidCredentials
			}
			out = ldapMsg(id, ldapRes(1, code))
		case 3: // SearchRequest
			base, _ := op.Children[0].Value.(string)
			m.note("search " + base + how)
			if m.demandTLS && !onTLS {
				out = ldapMsg(id, ldapRes(5, 13))
				break
			}
			e := ber.Encode(ber.ClassApplication, ber.TypeConstructed, 4, nil, "entry")
			e.AppendChild(ber.NewString(ber.ClassUniversal, ber.TypePrimitive, ber.TagOctetString, "cn=alice,"+base, "dn"))
			a := ber.NewSequence("attribute")
			a.AppendChild(ber.NewString(ber.ClassUniversal, ber.TypePrimitive, ber.TagOctetString, "cn", "type"))
			set := ber.Encode(ber.ClassUniversal, ber.TypeConstructed, ber.TagSet, nil, "vals")
			set.AppendChild(ber.NewString(ber.ClassUniversal, ber.TypePrimitive, ber.TagOctetString, "alice", "val"))
			a.AppendChild(set)
			attrs := ber.NewSequence("attributes")
			attrs.AppendChild(a)
			e.AppendChild(attrs)
			out = append(ldapMsg(id, e), ldapMsg(id, ldapRes(5, 0))...)
		case 23: // ExtendedRequest
			m.note("StartTLS" + how)
			code := 0
			if m.noStartTLS || onTLS {
				code = 52 // unavailable
			}
			if _, err := rw.Write(ldapMsg(id, ldapRes(24, code))); err != nil || code != 0 {
				continue
			}
			sc := tls.Server(rw, &tls.Config{Certificates: []tls.Certificate{m.cert}})
			if err := sc.Handshake(); err != nil {
				return
			}
			rw, onTLS = sc, true
			continue
		case 2: // UnbindRequest
			return
		default:
			return
		}
		if _, err := rw.Write(out); err != nil {
			return
		}
	}
}

func ldapMsg(id int64, op *ber.Packet) []byte {
	p := ber.NewSequence("message")
	p.AppendChild(ber.NewInteger(ber.ClassUniversal, ber.TypePrimitive, ber.TagInteger, id, "id"))
	p.AppendChild(op)
	return p.Bytes()
}

func ldapRes(app ber.Tag, code int) *ber.Packet {
	p := ber.Encode(ber.ClassApplication, ber.TypeConstructed, app, nil, "result")
	p.AppendChild(ber.NewInteger(ber.ClassUniversal, ber.TypePrimitive, ber.TagEnumerated, code, "code"))
	p.AppendChild(ber.NewString(ber.ClassUniversal, ber.TypePrimitive, ber.TagOctetString, "", "matched"))
	p.AppendChild(ber.NewString(ber.ClassUniversal, ber.TypePrimitive, ber.TagOctetString, "", "diagnostic"))
	return p
}
