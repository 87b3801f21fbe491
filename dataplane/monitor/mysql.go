package monitor

import (
	"context"
	"errors"
	"fmt"
	"net/netip"

	"github.com/go-sql-driver/mysql"
)

// openMySQL logs in to a MySQL (or MariaDB) member with
// go-sql-driver/mysql as DB.Username to DB.Database and runs DB.Send when
// set, judged as the postgresql probe judges its answer (sqlSession).
// Choices [M]: no TLS, as the postgresql probe; no username logs in as
// MySQL's anonymous account (the empty user name), since BIG-IP sends a
// user name only "if the monitored target requires authentication"; the
// driver's own logging is silenced, its errors reach the monitor's last
// error instead.
func openMySQL(ctx context.Context, spec *Spec, target netip.AddrPort) (dbSession, error) {
	d := spec.DB
	if d == nil {
		d = &DBCheck{}
	}
	cfg := mysql.NewConfig()
	cfg.Net, cfg.Addr = "tcp", target.String()
	cfg.User, cfg.Passwd, cfg.DBName = d.Username, d.Password, d.Database
	cfg.TLSConfig, cfg.TLS = "false", nil
	cfg.Logger = &mysql.NopLogger{}
	cfg.DialFunc = dialer(ctx).DialContext
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	return openSQL(ctx, connector, describeMySQL)
}

// describeMySQL is a MySQL error in the server's words: its message and
// error number (and SQLSTATE when it sent one), else the cause.
func describeMySQL(err error) error {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		if me.SQLState != [5]byte{} {
			return fmt.Errorf("%s (error %d, SQLSTATE %s)", me.Message, me.Number, me.SQLState[:])
		}
		return fmt.Errorf("%s (error %d)", me.Message, me.Number)
	}
	return unwrapSyscall(err)
}
