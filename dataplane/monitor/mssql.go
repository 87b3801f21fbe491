package monitor

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	mssql "github.com/microsoft/go-mssqldb"
)

// openMSSQL logs in to a Microsoft SQL Server member with
// microsoft/go-mssqldb as DB.Username to DB.Database and runs DB.Send
// when set, judged as the postgresql probe judges its answer (sqlSession).
// Choices [M]: the driver's default encryption, which protects the login
// when the server can and carries the rest in clear, with the server's
// certificate not verified (BIG-IP does not verify its members'); a user
// name written DOMAIN\user logs in with NTLM, any other with SQL Server
// authentication, an empty one as the empty login (which SQL Server
// refuses, so a monitor without username is down).
func openMSSQL(ctx context.Context, spec *Spec, target netip.AddrPort, kept bool) (dbSession, error) {
	d := spec.DB
	if d == nil {
		d = &DBCheck{}
	}
	q := url.Values{"encrypt": {"false"}, "trustservercertificate": {"true"}, "app name": {"openltm monitor"}}
	if d.Database != "" {
		q.Set("database", d.Database)
	}
	dsn := url.URL{Scheme: "sqlserver", User: url.UserPassword(d.Username, d.Password), Host: target.String(), RawQuery: q.Encode()}
	connector, err := mssql.NewConnector(dsn.String())
	if err != nil {
		return nil, err
	}
	if !kept {
		connector.Dialer = deadlineDialer{}
		return openSQL(ctx, connector, describeMSSQL)
	}
	// A kept connection outlives this probe: each probe gives it its
	// own deadline (probeDeadline), which the connection's reads and
	// writes take.
	kd := &keptDialer{}
	connector.Dialer = kd
	kd.set(ctx)
	s, err := openSQL(ctx, connector, describeMSSQL)
	if err != nil {
		return nil, err
	}
	return &deadlineSession{dbSession: s, kd: kd}, nil
}

// keptDialer dials connections whose deadline is the current probe's.
type keptDialer struct{ dl atomic.Int64 }

func (k *keptDialer) set(ctx context.Context) {
	if dl, ok := ctx.Deadline(); ok {
		k.dl.Store(dl.UnixNano())
	} else {
		k.dl.Store(0)
	}
}

func (k *keptDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := dialer(ctx).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &probeDeadlineConn{Conn: c, dl: &k.dl}, nil
}

// probeDeadlineConn sets the current probe's deadline before each read
// and write.
type probeDeadlineConn struct {
	net.Conn
	dl *atomic.Int64
}

func (c *probeDeadlineConn) deadline() time.Time {
	if n := c.dl.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

func (c *probeDeadlineConn) Read(b []byte) (int, error) {
	c.Conn.SetReadDeadline(c.deadline())
	return c.Conn.Read(b)
}

func (c *probeDeadlineConn) Write(b []byte) (int, error) {
	c.Conn.SetWriteDeadline(c.deadline())
	return c.Conn.Write(b)
}

// deadlineSession is a kept mssql login: each check sets its deadline
// on the connection first.
type deadlineSession struct {
	dbSession
	kd *keptDialer
}

func (s *deadlineSession) check(ctx context.Context, d *DBCheck) (Outcome, error) {
	s.kd.set(ctx)
	return s.dbSession.check(ctx, d)
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
