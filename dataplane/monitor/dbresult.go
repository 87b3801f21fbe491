package monitor

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"strings"
)

// dbTable is one result set of a database monitor's query, each cell as
// the text the server sent (nil for NULL), so every SQL monitor judges
// recv the same way whatever its driver.
type dbTable [][][]byte

// holds reports whether the result sets hold d.Recv where d says: at
// d.RecvRow and d.RecvColumn (1-based, counted in each result set; 0:
// any). A NULL cell never matches.
func (d *DBCheck) holds(sets []dbTable) bool {
	for _, rows := range sets {
		for i, row := range rows {
			if d.RecvRow > 0 && i != d.RecvRow-1 {
				continue
			}
			for j, cell := range row {
				if d.RecvColumn > 0 && j != d.RecvColumn-1 {
					continue
				}
				if cell != nil && string(cell) == d.Recv {
					return true
				}
			}
		}
	}
	return false
}

// maxDBCells bounds how much of a query's answer a probe keeps: a
// monitor's query is a health check, and a runaway SELECT must not fill
// the daemon's memory.
const maxDBCells = 64 << 10

// sqlTables reads every result set of a database/sql query (mysql,
// mssql) as text: database/sql turns numbers, dates and bytes into the
// strings the server's clients print. Reading stops at maxDBCells.
func sqlTables(rows *sql.Rows) ([]dbTable, error) {
	var sets []dbTable
	cells := 0
	for {
		cols, err := rows.Columns()
		if err != nil {
			return nil, err
		}
		var t dbTable
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for cells < maxDBCells && rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				return nil, err
			}
			row := make([][]byte, len(cols))
			for i, v := range vals {
				if v.Valid {
					row[i] = []byte(v.String)
				}
			}
			t = append(t, row)
			cells += len(cols)
		}
		if err := rows.Err(); err != nil {
			return nil, err
		}
		sets = append(sets, t)
		if cells >= maxDBCells || !rows.NextResultSet() {
			return sets, rows.Err()
		}
	}
}

// netTimeout reports whether err is a network timeout: the member did not
// answer before the deadline.
func netTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// traceSets notes a query's answer: its first row, and how many rows.
func traceSets(ctx context.Context, sets []dbTable) {
	if ctx.Value(traceKey{}) == nil {
		return
	}
	n := 0
	var first [][]byte
	for _, t := range sets {
		if first == nil && len(t) > 0 {
			first = t[0]
		}
		n += len(t)
	}
	cells := make([]string, len(first))
	for i, c := range first {
		if c == nil {
			cells[i] = "NULL"
		} else {
			cells[i] = quoted(c)
		}
	}
	tracef(ctx, "answered %d rows, the first [%s]", n, strings.Join(cells, " "))
}

// sqlSession is a mysql or mssql monitor's login through database/sql,
// kept between probes when the monitor's count asks.
type sqlSession struct {
	db       *sql.DB
	conn     *sql.Conn
	describe func(error) error
	fresh    bool
}

// openSQL logs in by connector. describe puts a driver's error in the
// server's own words (its message and error number). A refused login is
// down; silence until the deadline is no response.
func openSQL(ctx context.Context, connector driver.Connector, describe func(error) error) (dbSession, error) {
	db := sql.OpenDB(connector)
	db.SetMaxIdleConns(1)
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, sqlFailed(ctx, "Unable to connect", err, describe)
	}
	return &sqlSession{db: db, conn: conn, describe: describe, fresh: true}, nil
}

func sqlFailed(ctx context.Context, what string, err error, describe func(error) error) error {
	if ctx.Err() != nil || netTimeout(err) {
		return ErrNoResponse
	}
	return fmt.Errorf("%s; %v", what, describe(err))
}

// check runs d.Send when set, whose answer must hold d.Recv
// (DBCheck.holds); without one, a kept connection is asked whether it
// still works (a ping), a fresh one has just logged in.
func (s *sqlSession) check(ctx context.Context, d *DBCheck) (Outcome, error) {
	fresh := s.fresh
	s.fresh = false
	if d.Send == "" {
		if !fresh {
			if err := s.conn.PingContext(ctx); err != nil {
				return Outcome{}, sqlFailed(ctx, "Ping failed", err, s.describe)
			}
		}
		return Outcome{Up: true}, nil
	}
	tracef(ctx, "query %s", quoted([]byte(d.Send)))
	rows, err := s.conn.QueryContext(ctx, d.Send)
	if err != nil {
		return Outcome{}, sqlFailed(ctx, "Query failed", err, s.describe)
	}
	defer rows.Close()
	sets, err := sqlTables(rows)
	if err != nil {
		return Outcome{}, sqlFailed(ctx, "Query failed", err, s.describe)
	}
	traceSets(ctx, sets)
	if d.Recv == "" || d.holds(sets) {
		return Outcome{Up: true}, nil
	}
	return Outcome{}, ErrNoMatch
}

func (s *sqlSession) close() {
	s.conn.Close()
	s.db.Close()
}
