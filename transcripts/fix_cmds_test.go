package transcripts

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/openltm/openltm/dataplane/fix/fixtest"
	"github.com/rogpeppe/go-internal/testscript"
)

// fixAcceptors are the scripts' FIX members by name, for fixseen.
var fixAcceptors sync.Map

// fixacceptor ADDR NAME: run a FIX acceptor (dataplane/fix/fixtest) as
// a member until the script ends. It checks every message's BodyLength
// and CheckSum and answers Logon and NewOrderSingle with NAME as its
// SenderCompID, so a script sees which member a session reached.
func cmdFIXAcceptor(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: fixacceptor ADDR NAME")
	}
	a, err := fixtest.StartAcceptor(args[0], args[1])
	if err != nil {
		ts.Fatalf("fixacceptor: %v", err)
	}
	key := ts.Getenv("WORK") + "/" + args[1]
	fixAcceptors.Store(key, a)
	ts.Defer(func() { a.Close(); fixAcceptors.Delete(key) })
}

// fixseen NAME: print the messages acceptor NAME accepted ("got ...")
// and those it refused for a bad BodyLength or CheckSum ("refused ...").
func cmdFIXSeen(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: fixseen NAME")
	}
	v, ok := fixAcceptors.Load(ts.Getenv("WORK") + "/" + args[0])
	if !ok {
		ts.Fatalf("fixseen: no acceptor %s", args[0])
	}
	a := v.(*fixtest.Acceptor)
	var b strings.Builder
	for _, m := range a.Messages() {
		fmt.Fprintf(&b, "got %s\n", m)
	}
	for _, m := range a.Refused() {
		fmt.Fprintf(&b, "refused %s\n", m)
	}
	ts.Stdout().Write([]byte(b.String()))
}

// fixsession ADDR SENDER ?BEGIN? ?-badsum? ?-tls CAFILE?: a FIX
// session to ADDR as SENDER (BeginString BEGIN, FIX.4.4 by default):
// Logon, NewOrderSingle (with tag 10001=desk7) and Heartbeat, printing
// each answer. -badsum sends the order with a wrong CheckSum first; -tls
// speaks TLS, checking the server's certificate against CAFILE (the
// script's file) but not its name. It fails when the connection ends
// before the Logon's and the order's answers are in.
func cmdFIXSession(ts *testscript.TestScript, neg bool, args []string) {
	const usage = "usage: fixsession ADDR SENDER ?BEGIN? ?-badsum? ?-tls CAFILE?"
	if len(args) < 2 {
		ts.Fatalf(usage)
	}
	begin, badsum, ca := "FIX.4.4", false, ""
	for i := 2; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-badsum":
			badsum = true
		case a == "-tls" && i+1 < len(args):
			i++
			ca = ts.MkAbs(args[i])
		case strings.HasPrefix(a, "FIX"):
			begin = a
		default:
			ts.Fatalf(usage)
		}
	}
	sender := args[1]
	err := func() error {
		var c *fixtest.Client
		if ca == "" {
			var err error
			if c, err = fixtest.Dial(args[0]); err != nil {
				return err
			}
		} else {
			tc, err := dialTLSVerified(args[0], ca)
			if err != nil {
				return err
			}
			c = fixtest.NewClient(tc)
		}
		defer c.Close()
		order := fixtest.Build(begin, "35=D", "34=2", "49="+sender, "56=EXEC", "11=ORD1", "21=1", "38=100", "40=2", "44=101.25", "54=1", "55=IBM", "10001=desk7")
		msgs := [][]byte{order, fixtest.Build(begin, "35=0", "34=3", "49="+sender, "56=EXEC")}
		if badsum {
			bad := append([]byte(nil), order...)
			bad[len(bad)-2] = '0' + (bad[len(bad)-2]-'0'+1)%10
			msgs = append([][]byte{bad}, msgs...)
		}
		c.Send(fixtest.Build(begin, "35=A", "34=1", "49="+sender, "56=EXEC", "98=0", "108=30"))
		m, err := c.Recv(15 * time.Second)
		if err != nil {
			return err
		}
		fmt.Fprintf(ts.Stdout(), "%s\n", m)
		c.Send(msgs...)
		if m, err = c.Recv(15 * time.Second); err != nil {
			return err
		}
		fmt.Fprintf(ts.Stdout(), "%s\n", m)
		return nil
	}()
	if err != nil {
		fmt.Fprintf(ts.Stderr(), "fixsession: %v\n", err)
	}
	if (err != nil) != neg {
		if neg {
			ts.Fatalf("fixsession: the session went through")
		}
		ts.Fatalf("fixsession: %v", err)
	}
}

// dialTLSVerified opens a TLS connection to addr whose certificate chains
// to the PEM certificates in caFile; the name in it is not checked, as
// with mosquitto's --insecure: the scripts' certificates are not issued
// for loopback addresses.
func dialTLSVerified(addr, caFile string) (*tls.Conn, error) {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		return nil, errors.New("no certificate in " + caFile)
	}
	cfg := &tls.Config{InsecureSkipVerify: true, VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
		certs := make([]*x509.Certificate, len(raw))
		for i, b := range raw {
			c, err := x509.ParseCertificate(b)
			if err != nil {
				return err
			}
			certs[i] = c
		}
		if len(certs) == 0 {
			return errors.New("no certificate from the server")
		}
		inter := x509.NewCertPool()
		for _, c := range certs[1:] {
			inter.AddCert(c)
		}
		_, err := certs[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter})
		return err
	}}
	return tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", addr, cfg)
}
