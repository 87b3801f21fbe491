package monitor

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
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

// probeSQL is the mysql and mssql probes' conversation through
// database/sql: a login by connector, then d.Send when set, whose answer
// must hold d.Recv (DBCheck.holds). describe puts a driver's error in the
// server's own words (its message and error number). A refused login or
// a failing query is down; silence until the deadline is no response.
func probeSQL(ctx context.Context, connector driver.Connector, d *DBCheck, describe func(error) error) (Outcome, error) {
	db := sql.OpenDB(connector)
	defer db.Close()
	failed := func(what string, err error) (Outcome, error) {
		if ctx.Err() != nil || netTimeout(err) {
			return Outcome{}, ErrNoResponse
		}
		return Outcome{}, fmt.Errorf("%s; %v", what, describe(err))
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return failed("Unable to connect", err)
	}
	defer conn.Close()
	if d.Send == "" {
		return Outcome{Up: true}, nil
	}
	rows, err := conn.QueryContext(ctx, d.Send)
	if err != nil {
		return failed("Query failed", err)
	}
	defer rows.Close()
	sets, err := sqlTables(rows)
	if err != nil {
		return failed("Query failed", err)
	}
	if d.Recv == "" || d.holds(sets) {
		return Outcome{Up: true}, nil
	}
	return Outcome{}, ErrNoMatch
}
