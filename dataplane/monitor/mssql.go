package monitor

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"

	mssql "github.com/microsoft/go-mssqldb"
)

// probeMSSQL logs in to a Microsoft SQL Server member with
// microsoft/go-mssqldb as DB.Username to DB.Database and runs DB.Send
// when set, judged as the postgresql probe judges its answer (probeSQL).
// Choices [M]: the driver's default encryption, which protects the login
// when the server can and carries the rest in clear, with the server's
// certificate not verified (BIG-IP does not verify its members'); a user
// name written DOMAIN\user logs in with NTLM, any other with SQL Server
// authentication, an empty one as the empty login (which SQL Server
// refuses, so a monitor without username is down).
func probeMSSQL(ctx context.Context, spec *Spec, target netip.AddrPort) (Outcome, error) {
	d := spec.DB
	if d == nil {
		d = &DBCheck{}
	}
	if err := d.check(); err != nil {
		return Outcome{}, err
	}
	q := url.Values{"encrypt": {"false"}, "trustservercertificate": {"true"}, "app name": {"openltm monitor"}}
	if d.Database != "" {
		q.Set("database", d.Database)
	}
	dsn := url.URL{Scheme: "sqlserver", User: url.UserPassword(d.Username, d.Password), Host: target.String(), RawQuery: q.Encode()}
	connector, err := mssql.NewConnector(dsn.String())
	if err != nil {
		return Outcome{}, err
	}
	connector.Dialer = deadlineDialer{}
	return probeSQL(ctx, connector, d, describeMSSQL)
}

// deadlineDialer gives the connection the probe's deadline: the driver
// reads its login answers without watching the context, and a member
// that accepts and then stays silent must be down at the monitor's
// timeout, not at the driver's own.
type deadlineDialer struct{}

func (deadlineDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := dialer(ctx).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	return c, nil
}

// describeMSSQL is a SQL Server error in the server's words: its message
// and error number, else the cause.
func describeMSSQL(err error) error {
	var me mssql.Error
	if errors.As(err, &me) {
		// The driver puts "login error: " before a refused login's message.
		return fmt.Errorf("%s (error %d)", strings.TrimPrefix(me.Message, "login error: "), me.Number)
	}
	return unwrapSyscall(err)
}
