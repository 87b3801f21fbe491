package monitor

import (
	"context"
	"errors"
	"fmt"
	"net/netip"

	"github.com/jackc/pgx/v5/pgconn"
)

// DBCheck is a database monitor's settings: the account and database to
// connect with, and optionally a query (Send) whose answer must hold Recv,
// at RecvRow and RecvColumn (1-based; 0: anywhere in the result) [M].
type DBCheck struct {
	Username, Password, Database string
	Send, Recv                   string
	RecvRow, RecvColumn          int
	// Count is how many probes one login serves (count): the
	// connection is kept between them, then closed and opened again; 0
	// logs in for every probe [M: BIG-IP's default 0 is taken as a
	// connection per probe]. A failed probe closes it.
	Count int
}

// dbSession is a database monitor's login, which a monitor with a count
// keeps between probes.
type dbSession interface {
	// check is one probe on the connection.
	check(ctx context.Context, d *DBCheck) (Outcome, error)
	close()
}

// dbKept is an instance's kept login and how many probes it served.
type dbKept struct {
	s    dbSession
	used int
}

func (k *dbKept) close() {
	if k.s != nil {
		k.s.close()
		k.s = nil
	}
	k.used = 0
}

// openDB logs in to a database member as the monitor says.
func openDB(ctx context.Context, spec *Spec, target netip.AddrPort, kept bool) (dbSession, error) {
	switch spec.Type {
	case PostgreSQL:
		return openPostgreSQL(ctx, spec, target)
	case MySQL:
		return openMySQL(ctx, spec, target)
	case MSSQL:
		return openMSSQL(ctx, spec, target, kept)
	}
	return nil, fmt.Errorf("%s is not a database monitor", spec.Type)
}

// probeDB is one database probe: a login, the check and the logout, or
// with a count, the check on the login kept from the probes before.
func probeDB(ctx context.Context, spec *Spec, target netip.AddrPort, k *dbKept) (Outcome, error) {
	d := spec.DB
	if d == nil {
		d = &DBCheck{}
	}
	if err := d.check(); err != nil {
		return Outcome{}, err
	}
	keep := k != nil && d.Count > 0
	if !keep || k.s == nil {
		tracef(ctx, "login as %q to database %q", d.Username, d.Database)
	} else {
		tracef(ctx, "on the login kept for %d probes", k.used)
	}
	if !keep {
		s, err := openDB(ctx, spec, target, false)
		if err != nil {
			return Outcome{}, err
		}
		defer s.close()
		return s.check(ctx, d)
	}
	if k.s == nil {
		s, err := openDB(ctx, spec, target, true)
		if err != nil {
			return Outcome{}, err
		}
		k.s, k.used = s, 0
	}
	out, err := k.s.check(ctx, d)
	k.used++
	if err != nil || !out.Up || k.used >= d.Count {
		k.close()
	}
	return out, err
}

func (d *DBCheck) equal(o *DBCheck) bool {
	if d == nil || o == nil {
		return d == o
	}
	return *d == *o
}

func (d *DBCheck) check() error {
	if d == nil {
		return nil
	}
	if d.RecvRow < 0 || d.RecvColumn < 0 {
		return errors.New("recv-row and recv-column count from 1")
	}
	if d.Count < 0 {
		return errors.New("count is a number from 0")
	}
	return nil
}

// openPostgreSQL connects to a PostgreSQL member with pgx's pgconn (no
// TLS [M]) and authenticates as DB.Username (postgres when none [M]) to
// DB.Database (the user's own when none). A server that refuses the
// login is down.
func openPostgreSQL(ctx context.Context, spec *Spec, target netip.AddrPort) (dbSession, error) {
	d := spec.DB
	if d == nil {
		d = &DBCheck{}
	}
	cfg, err := pgconn.ParseConfig("sslmode=disable")
	if err != nil {
		return nil, err
	}
	cfg.Host, cfg.Port = target.Addr().String(), target.Port()
	cfg.User, cfg.Password, cfg.Database = d.Username, d.Password, d.Database
	if cfg.User == "" {
		cfg.User = "postgres"
	}
	cfg.TLSConfig, cfg.Fallbacks = nil, nil
	cfg.DialFunc = dialer(ctx).DialContext
	conn, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		if ctx.Err() != nil || isTimeout(err) {
			return nil, ErrNoResponse
		}
		return nil, fmt.Errorf("Unable to connect; %v", unwrapPG(err))
	}
	return &pgSession{conn: conn, fresh: true}, nil
}

// pgSession is a postgresql monitor's login.
type pgSession struct {
	conn  *pgconn.PgConn
	fresh bool
}

// check runs DB.Send when set: with DB.Recv, the answer must hold it; a
// query that fails is down. Without one, a kept connection is pinged.
func (s *pgSession) check(ctx context.Context, d *DBCheck) (Outcome, error) {
	fresh := s.fresh
	s.fresh = false
	if d.Send == "" {
		if !fresh {
			if err := s.conn.Ping(ctx); err != nil {
				if ctx.Err() != nil || isTimeout(err) {
					return Outcome{}, ErrNoResponse
				}
				return Outcome{}, fmt.Errorf("Ping failed; %v", unwrapPG(err))
			}
		}
		return Outcome{Up: true}, nil
	}
	tracef(ctx, "query %s", quoted([]byte(d.Send)))
	results, err := s.conn.Exec(ctx, d.Send).ReadAll()
	if err != nil {
		if ctx.Err() != nil {
			return Outcome{}, ErrNoResponse
		}
		return Outcome{}, fmt.Errorf("Query failed; %v", unwrapPG(err))
	}
	sets := make([]dbTable, len(results))
	for i, r := range results {
		sets[i] = r.Rows
	}
	traceSets(ctx, sets)
	if d.Recv == "" || d.holds(sets) {
		return Outcome{Up: true}, nil
	}
	return Outcome{}, ErrNoMatch
}

func (s *pgSession) close() { s.conn.Close(context.Background()) }

func isTimeout(err error) bool {
	return netTimeout(err) || pgconn.Timeout(err)
}

// unwrapPG is a pgx error's own words: the server's message (and SQLSTATE)
// for a server error, else the cause.
func unwrapPG(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s (SQLSTATE %s)", pe.Message, pe.Code)
	}
	return unwrapSyscall(err)
}
