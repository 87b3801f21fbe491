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
	return nil
}

// probePostgreSQL connects to a PostgreSQL member with pgx's pgconn (no
// TLS [M]), authenticates as DB.Username (postgres when none [M]) to
// DB.Database (the user's own when none), and runs DB.Send when set:
// with DB.Recv, the answer must hold it. A server that refuses the
// login, or a query that fails, is down.
func probePostgreSQL(ctx context.Context, spec *Spec, target netip.AddrPort) (Outcome, error) {
	d := spec.DB
	if d == nil {
		d = &DBCheck{}
	}
	if err := d.check(); err != nil {
		return Outcome{}, err
	}
	cfg, err := pgconn.ParseConfig("sslmode=disable")
	if err != nil {
		return Outcome{}, err
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
			return Outcome{}, ErrNoResponse
		}
		return Outcome{}, fmt.Errorf("Unable to connect; %v", unwrapPG(err))
	}
	defer conn.Close(context.Background())
	if d.Send == "" {
		return Outcome{Up: true}, nil
	}
	results, err := conn.Exec(ctx, d.Send).ReadAll()
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
	if d.Recv == "" || d.holds(sets) {
		return Outcome{Up: true}, nil
	}
	return Outcome{}, ErrNoMatch
}

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
