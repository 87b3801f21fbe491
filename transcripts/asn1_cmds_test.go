package transcripts

import (
	"fmt"
	"net"
	"time"

	"github.com/go-ldap/ldap/v3"
	"github.com/rogpeppe/go-internal/testscript"
)

// ldapbind ADDR DN PASSWORD: a simple bind with the go-ldap client,
// printing "bind ok" or the error the client got (a reset connection
// when a rule rejects it).
func cmdLDAPBind(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: ldapbind ADDR DN PASSWORD")
	}
	c, err := ldap.DialURL("ldap://"+args[0], ldap.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}))
	if err == nil {
		c.SetTimeout(20 * time.Second)
		defer c.Close()
		err = c.Bind(args[1], args[2])
	}
	if err != nil {
		fmt.Fprintf(ts.Stdout(), "bind failed: %v\n", err)
		if !neg {
			ts.Fatalf("ldapbind: %v", err)
		}
		return
	}
	fmt.Fprintln(ts.Stdout(), "bind ok")
	if neg {
		ts.Fatalf("ldapbind: the bind succeeded")
	}
}
