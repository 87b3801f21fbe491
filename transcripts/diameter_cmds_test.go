package transcripts

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/openltm/openltm/dataplane/diameter/diamtest"
	"github.com/rogpeppe/go-internal/testscript"
)

// diamServers are the scripts' Diameter members by name, for diamseen.
var diamServers sync.Map

// diamserver ADDR NAME ?-watchdog? ?-silent? ?-mutecer? ?-tls?: run a
// Diameter peer (dataplane/diameter/diamtest) as a member until the
// script ends. It answers the CER and every request with NAME as its
// Origin-Host, so a script sees which member a request reached;
// -watchdog sends a DWR after each CEA; -silent leaves every request but
// the CER unanswered, -mutecer the CER too; -tls speaks TLS from the
// connection's start (a self-signed certificate for member.example).
// diamseen marks a request that came with the T flag "retransmitted".
func cmdDiamServer(ts *testscript.TestScript, neg bool, args []string) {
	watchdog, silent, mute, overTLS := false, false, false, false
	for _, a := range args[min(len(args), 2):] {
		switch a {
		case "-watchdog":
			watchdog = true
		case "-silent":
			silent = true
		case "-mutecer":
			mute = true
		case "-tls":
			overTLS = true
		default:
			neg = true
		}
	}
	if neg || len(args) < 2 {
		ts.Fatalf("usage: diamserver ADDR NAME ?-watchdog? ?-silent? ?-mutecer? ?-tls?")
	}
	var s *diamtest.Server
	var err error
	if overTLS {
		s, err = diamtest.StartTLS(args[0], args[1], &tls.Config{Certificates: []tls.Certificate{ldapSelfSigned(ts)}}) // ldap_cmds_test.go
	} else {
		s, err = diamtest.Start(args[0], args[1], watchdog)
	}
	if err != nil {
		ts.Fatalf("diamserver: %v", err)
	}
	s.Silent(silent)
	s.MuteCER(mute)
	key := ts.Getenv("WORK") + "/" + args[1]
	diamServers.Store(key, s)
	ts.Defer(func() { s.Close(); diamServers.Delete(key) })
}

// diamseen NAME ?-from?: print the requests member NAME received, one a
// line ("got COMMAND session=... origin=...", with -from the address and
// port its connection came from too), and the watchdog answers it got
// ("dwa N").
func cmdDiamSeen(ts *testscript.TestScript, neg bool, args []string) {
	from := len(args) == 2 && args[1] == "-from"
	if from {
		args = args[:1]
	}
	if neg || len(args) != 1 {
		ts.Fatalf("usage: diamseen NAME ?-from?")
	}
	v, ok := diamServers.Load(ts.Getenv("WORK") + "/" + args[0])
	if !ok {
		ts.Fatalf("diamseen: no server %s", args[0])
	}
	s := v.(*diamtest.Server)
	var b strings.Builder
	for _, g := range s.Got() {
		t := ""
		if g.Retransmit {
			t = " retransmitted"
		}
		if from {
			t += " from=" + g.From
		}
		fmt.Fprintf(&b, "got %d session=%s origin=%s host-ip=%s%s\n", g.Code, g.Session, g.Origin, g.HostIP, t)
	}
	fmt.Fprintf(&b, "dwa %d\n", s.DWAs())
	ts.Stdout().Write([]byte(b.String()))
}

// diamclient ?-tls CAFILE NAME? ?-realm REALM? ?-host DEST? ADDR HOST SESSION...: a Diameter peer
// HOST connected to ADDR: a CER, then one Credit-Control-Request per
// SESSION, all sent at once, printing the CEA ("cea origin=... realm=...
// host-ip=...") and each answer in request order ("cca SESSION
// origin=... result=..."). -tls speaks TLS from the connection's start
// (crypto/tls), checking the server's certificate for NAME against
// CAFILE. -realm gives the requests' Destination-Realm
// (members.example), -host their Destination-Host (none). -raw STRING as the only SESSION sends STRING
// instead of a CER and expects the connection reset.
func cmdDiamClient(ts *testscript.TestScript, neg bool, args []string) {
	var tc *tls.Config
	if len(args) > 0 && args[0] == "-tls" {
		if len(args) < 3 {
			ts.Fatalf("usage: diamclient -tls CAFILE NAME ADDR HOST SESSION...")
		}
		pem, err := os.ReadFile(ts.MkAbs(args[1]))
		ts.Check(err)
		roots := x509.NewCertPool()
		if !roots.AppendCertsFromPEM(pem) {
			ts.Fatalf("diamclient: no certificate in %s", args[1])
		}
		tc = &tls.Config{RootCAs: roots, ServerName: args[2]}
		args = args[3:]
	}
	realm := "members.example"
	if len(args) > 1 && args[0] == "-realm" {
		realm, args = args[1], args[2:]
	}
	dest := ""
	if len(args) > 1 && args[0] == "-host" {
		dest, args = args[1], args[2:]
	}
	if len(args) < 2 {
		ts.Fatalf("usage: diamclient ?-tls CAFILE NAME? ADDR HOST SESSION... | diamclient ADDR -raw STRING")
	}
	err := func() error {
		var c *diamtest.Client
		var err error
		if tc != nil {
			c, err = diamtest.DialTLS(args[0], tc)
		} else {
			c, err = diamtest.Dial(args[0])
		}
		if err != nil {
			return err
		}
		defer c.Close()
		if args[1] == "-raw" {
			c.Write([]byte(strings.Join(args[2:], " ")))
			switch err := c.Wait(); err {
			case diamtest.ErrReset:
				fmt.Fprintln(ts.Stdout(), "reset")
				return nil
			case nil:
				return errors.New("the connection was closed, not reset")
			default:
				return err
			}
		}
		cea, err := c.CER(args[1])
		if err != nil {
			return err
		}
		fmt.Fprintf(ts.Stdout(), "cea origin=%s realm=%s host-ip=%s result=%d\n", cea.Origin, cea.OriginRealm, cea.HostIP, cea.Result)
		if len(args) == 2 {
			return nil
		}
		sessions := args[2:]
		codes := make([]uint32, len(sessions))
		avps := make([][]byte, len(sessions))
		for i, s := range sessions {
			codes[i], avps[i] = 272, diamtest.RequestTo(args[1], s, realm, dest)
		}
		ans, err := c.Exchange(codes, 4, avps...)
		if err != nil {
			return err
		}
		for i, a := range ans {
			fmt.Fprintf(ts.Stdout(), "cca %s origin=%s realm=%s result=%d\n", sessions[i], a.Origin, a.OriginRealm, a.Result)
		}
		return nil
	}()
	if err != nil {
		fmt.Fprintf(ts.Stderr(), "diamclient: %v\n", err)
	}
	if (err != nil) != neg {
		if neg {
			ts.Fatalf("diamclient: the exchange went through")
		}
		ts.Fatalf("diamclient: %v", err)
	}
}
