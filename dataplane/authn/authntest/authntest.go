// Package authntest runs the servers the auth profiles' tests ask: a
// real OpenLDAP slapd with its own configuration and database in a
// directory of the test's, a RADIUS server and a TACACS+ server.
package authntest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-ldap/ldap/v3"
	"layeh.com/radius"
	"layeh.com/radius/rfc2865"
	"layeh.com/radius/rfc2866"
)

// SlapdPath is where Debian's slapd package puts the server.
const SlapdPath = "/usr/sbin/slapd"

// Available says whether slapd and slapadd can run here.
func Available() error {
	for _, p := range []string{SlapdPath, "/usr/sbin/slapadd"} {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("%s is missing (Debian package slapd)", p)
		}
	}
	if _, err := os.Stat("/etc/ldap/schema/inetorgperson.schema"); err != nil {
		return errors.New("the OpenLDAP schemas are missing (Debian package slapd)")
	}
	return nil
}

// Suffix, RootDN and RootPW are the test directory's base and its
// administrator.
const (
	Suffix = "dc=example,dc=com"
	RootDN = "cn=admin," + Suffix
	RootPW = "adminpw"
)

// Users are the test directory's people, by uid, with their passwords:
// under ou=people; carol and dave are members of cn=staff,ou=groups.
var Users = map[string]string{"carol": "ldappw", "dave": "davepw", "erin": "erinpw"}

// ldif is the test directory.
func ldif() string {
	var b strings.Builder
	fmt.Fprintf(&b, "dn: %s\nobjectClass: dcObject\nobjectClass: organization\no: Example\ndc: example\n\n", Suffix)
	fmt.Fprintf(&b, "dn: ou=people,%s\nobjectClass: organizationalUnit\nou: people\n\n", Suffix)
	fmt.Fprintf(&b, "dn: ou=groups,%s\nobjectClass: organizationalUnit\nou: groups\n\n", Suffix)
	for _, u := range []string{"carol", "dave", "erin"} {
		fmt.Fprintf(&b, "dn: uid=%s,ou=people,%s\nobjectClass: inetOrgPerson\nuid: %s\ncn: %s\nsn: %s\nmail: %s@example.com\nuserPassword: %s\n\n",
			u, Suffix, u, strings.ToUpper(u[:1])+u[1:], u, u, Users[u])
	}
	fmt.Fprintf(&b, "dn: cn=staff,ou=groups,%s\nobjectClass: groupOfNames\ncn: staff\nmember: uid=carol,ou=people,%s\nmember: uid=dave,ou=people,%s\n\n", Suffix, Suffix, Suffix)
	return b.String()
}

// Slapd is a running slapd.
type Slapd struct {
	Addr string
	cmd  *exec.Cmd
	done chan struct{}
}

// StartSlapd runs slapd on addr (host:port) with its configuration and
// database under dir, loaded with the test directory, and waits until
// it answers.
func StartSlapd(dir, addr string) (*Slapd, error) {
	return StartSlapdTLS(dir, addr, TLS{})
}

// TLS is the certificate (and key), PEM files, slapd offers StartTLS
// with on its ldap address and, when LDAPSAddr is set, LDAPS on that
// one.
type TLS struct {
	CertFile, KeyFile string
	LDAPSAddr         string
}

// StartSlapdTLS is StartSlapd with TLS: StartTLS, and LDAPS on
// t.LDAPSAddr when set (no TLS when t.CertFile is empty).
func StartSlapdTLS(dir, addr string, t TLS) (*Slapd, error) {
	if err := Available(); err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	db := filepath.Join(dir, "db")
	if err := os.MkdirAll(db, 0o700); err != nil {
		return nil, err
	}
	conf := filepath.Join(dir, "slapd.conf")
	text := fmt.Sprintf(`include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
pidfile %s
modulepath /usr/lib/ldap
moduleload back_mdb
database mdb
maxsize 10485760
suffix "%s"
rootdn "%s"
rootpw %s
directory %s
`, filepath.Join(dir, "slapd.pid"), Suffix, RootDN, RootPW, db)
	if t.CertFile != "" {
		text = fmt.Sprintf("TLSCertificateFile %s\nTLSCertificateKeyFile %s\n", t.CertFile, t.KeyFile) + text
	}
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data.ldif")
	if err := os.WriteFile(data, []byte(ldif()), 0o600); err != nil {
		return nil, err
	}
	if out, err := exec.Command("/usr/sbin/slapadd", "-f", conf, "-l", data).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("slapadd: %v: %s", err, out)
	}
	s := &Slapd{Addr: addr, done: make(chan struct{})}
	// -d 0: in the foreground, without debugging output.
	urls := "ldap://" + addr + "/"
	if t.CertFile != "" && t.LDAPSAddr != "" {
		urls += " ldaps://" + t.LDAPSAddr + "/"
	}
	s.cmd = exec.Command(SlapdPath, "-f", conf, "-h", urls, "-d", "0")
	logf, err := os.Create(filepath.Join(dir, "slapd.log"))
	if err != nil {
		return nil, err
	}
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	if err := s.cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	go func() {
		s.cmd.Wait()
		logf.Close()
		close(s.done)
	}()
	deadline := time.Now().Add(15 * time.Second)
	for {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return s, nil
		}
		select {
		case <-s.done:
			b, _ := os.ReadFile(filepath.Join(dir, "slapd.log"))
			return nil, fmt.Errorf("slapd ended: %s", b)
		default:
		}
		if time.Now().After(deadline) {
			s.Close()
			return nil, fmt.Errorf("slapd does not answer on %s within 15s", addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Close stops slapd and waits for it.
func (s *Slapd) Close() {
	if s.cmd.Process != nil {
		s.cmd.Process.Kill()
	}
	<-s.done
}

// RADIUS is a RADIUS server: alice/wonder is accepted (with Filter-Id
// staff), bob is challenged with "Enter the PIN" and accepted once he
// answers 1234, anyone else rejected. It answers every
// Accounting-Request, and keeps what each said.
type RADIUS struct {
	srv *radius.PacketServer
	// Requests counts the Access-Requests it answered.
	Requests atomic.Int64
	mu       sync.Mutex
	acct     []string
}

// Accounting lists the Accounting-Requests it answered, each as
// "USER SESSION-ID STATUS-TYPE".
func (r *RADIUS) Accounting() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.acct...)
}

// StartRADIUS serves on addr (host:port, UDP) with secret.
func StartRADIUS(addr, secret string) (*RADIUS, error) {
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		return nil, err
	}
	r := &RADIUS{}
	r.srv = &radius.PacketServer{SecretSource: radius.StaticSecretSource([]byte(secret)), Handler: radius.HandlerFunc(func(w radius.ResponseWriter, req *radius.Request) {
		if req.Code == radius.CodeAccountingRequest {
			r.mu.Lock()
			r.acct = append(r.acct, fmt.Sprintf("%s %s %d", rfc2865.UserName_GetString(req.Packet),
				rfc2866.AcctSessionID_GetString(req.Packet), rfc2866.AcctStatusType_Get(req.Packet)))
			r.mu.Unlock()
			w.Write(req.Response(radius.CodeAccountingResponse))
			return
		}
		r.Requests.Add(1)
		u, p := rfc2865.UserName_GetString(req.Packet), rfc2865.UserPassword_GetString(req.Packet)
		resp := req.Response(radius.CodeAccessReject)
		switch {
		case u == "alice" && p == "wonder":
			resp = req.Response(radius.CodeAccessAccept)
			rfc2865.FilterID_SetString(resp, "staff")
		case u == "bob" && string(rfc2865.State_Get(req.Packet)) == "chal" && p == "1234":
			resp = req.Response(radius.CodeAccessAccept)
		case u == "bob":
			resp = req.Response(radius.CodeAccessChallenge)
			rfc2865.ReplyMessage_SetString(resp, "Enter the PIN")
			rfc2865.State_SetString(resp, "chal")
		}
		w.Write(resp)
	})}
	go r.srv.Serve(pc)
	return r, nil
}

// Close stops the server.
func (r *RADIUS) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r.srv.Shutdown(ctx)
}

// asAdmin runs f on a connection to the directory bound as its
// administrator.
func asAdmin(addr string, f func(*ldap.Conn) error) error {
	c, err := ldap.DialURL("ldap://" + addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Bind(RootDN, RootPW); err != nil {
		return err
	}
	return f(c)
}

// AddCertificate adds a certificate (DER) to an entry's
// userCertificate;binary, as the directory's administrator.
func AddCertificate(addr, dn string, der []byte) error {
	return AddValues(addr, dn, "userCertificate;binary", string(der))
}

// AddEntry adds an entry to the directory, as its administrator: attrs
// are its attributes' values, objectClass among them.
func AddEntry(addr, dn string, attrs map[string][]string) error {
	return asAdmin(addr, func(c *ldap.Conn) error {
		a := ldap.NewAddRequest(dn, nil)
		for k, v := range attrs {
			a.Attribute(k, v)
		}
		return c.Add(a)
	})
}

// AddValues adds values to an entry's attribute, as the directory's
// administrator.
func AddValues(addr, dn, attr string, values ...string) error {
	return asAdmin(addr, func(c *ldap.Conn) error {
		m := ldap.NewModifyRequest(dn, nil)
		m.Add(attr, values)
		return c.Modify(m)
	})
}
