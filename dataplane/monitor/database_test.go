package monitor

import (
	"cmp"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// pgServer is a fake PostgreSQL server (pgx's pgproto3 backend) for one
// connection at a time: it asks for a cleartext password, accepts
// user/password, and answers each simple query with rows; seen gets the
// startup's user and database, then each query.
type pgServer struct {
	user, password string
	rows           [][]string
	queryErr       string // when set, queries fail with this message
	silent         bool
	seen           chan string
	addr           string // where to listen; "": 127.0.0.1, any port
}

func (s *pgServer) start(t *testing.T) netip.AddrPort {
	t.Helper()
	ln, err := net.Listen("tcp", cmp.Or(s.addr, "127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for i := 0; i < 8; i++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go s.serve(c)
		}
	}()
	return netip.MustParseAddrPort(ln.Addr().String())
}

func (s *pgServer) serve(c net.Conn) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if s.silent {
		buf := make([]byte, 1024)
		c.Read(buf)
		time.Sleep(time.Second)
		return
	}
	b := pgproto3.NewBackend(c, c)
	msg, err := b.ReceiveStartupMessage()
	if err != nil {
		return
	}
	sm, ok := msg.(*pgproto3.StartupMessage)
	if !ok {
		return
	}
	s.seen <- sm.Parameters["user"] + "@" + sm.Parameters["database"]
	b.Send(&pgproto3.AuthenticationCleartextPassword{})
	b.Flush()
	if m, err := b.Receive(); err != nil {
		return
	} else if pw, ok := m.(*pgproto3.PasswordMessage); !ok || sm.Parameters["user"] != s.user || pw.Password != s.password {
		b.Send(&pgproto3.ErrorResponse{Severity: "FATAL", Code: "28P01", Message: `password authentication failed for user "` + sm.Parameters["user"] + `"`})
		b.Flush()
		return
	}
	b.Send(&pgproto3.AuthenticationOk{})
	b.Send(&pgproto3.ParameterStatus{Name: "server_version", Value: "16.0"})
	b.Send(&pgproto3.BackendKeyData{ProcessID: 1, SecretKey: []byte{0, 0, 0, 2}})
	b.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
	b.Flush()
	for i := 0; i < 8; i++ {
		m, err := b.Receive()
		if err != nil {
			return
		}
		q, ok := m.(*pgproto3.Query)
		if !ok { // Terminate
			return
		}
		s.seen <- q.String
		if s.queryErr != "" {
			b.Send(&pgproto3.ErrorResponse{Severity: "ERROR", Code: "42P01", Message: s.queryErr})
		} else {
			var fields []pgproto3.FieldDescription
			for j := range s.rows[0] {
				fields = append(fields, pgproto3.FieldDescription{Name: []byte("c" + string(rune('0'+j))), DataTypeOID: 25, DataTypeSize: -1, TypeModifier: -1})
			}
			b.Send(&pgproto3.RowDescription{Fields: fields})
			for _, r := range s.rows {
				var vals [][]byte
				for _, v := range r {
					vals = append(vals, []byte(v))
				}
				b.Send(&pgproto3.DataRow{Values: vals})
			}
			b.Send(&pgproto3.CommandComplete{CommandTag: []byte("SELECT 1")})
		}
		b.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
		b.Flush()
	}
}

func TestProbePostgreSQL(t *testing.T) {
	rows := [][]string{{"ok", "1"}, {"ready", "2"}}
	for _, c := range []struct {
		name     string
		db       *DBCheck
		srv      pgServer
		up       bool
		errSub   string
		errIs    error
		startup  string
		query    string
		deadline time.Duration
	}{
		{name: "login only", db: &DBCheck{Username: "mon", Password: "pw", Database: "app"}, srv: pgServer{user: "mon", password: "pw"}, up: true, startup: "mon@app"},
		{name: "query, value anywhere", db: &DBCheck{Username: "mon", Password: "pw", Send: "SELECT status, n FROM health", Recv: "ready"},
			srv: pgServer{user: "mon", password: "pw", rows: rows}, up: true, startup: "mon@", query: "SELECT status, n FROM health"},
		{name: "query, value at its row and column", db: &DBCheck{Username: "mon", Password: "pw", Send: "SELECT 1", Recv: "2", RecvRow: 2, RecvColumn: 2},
			srv: pgServer{user: "mon", password: "pw", rows: rows}, up: true},
		{name: "query, value elsewhere", db: &DBCheck{Username: "mon", Password: "pw", Send: "SELECT 1", Recv: "ready", RecvRow: 1},
			srv: pgServer{user: "mon", password: "pw", rows: rows}, errIs: ErrNoMatch},
		{name: "wrong password", db: &DBCheck{Username: "mon", Password: "bad"}, srv: pgServer{user: "mon", password: "pw"},
			errSub: `password authentication failed for user "mon" (SQLSTATE 28P01)`},
		{name: "query fails", db: &DBCheck{Username: "mon", Password: "pw", Send: "SELECT * FROM gone"}, srv: pgServer{user: "mon", password: "pw", queryErr: `relation "gone" does not exist`},
			errSub: `Query failed; relation "gone" does not exist (SQLSTATE 42P01)`},
		{name: "default user", srv: pgServer{user: "postgres", password: ""}, up: true, startup: "postgres@"},
		{name: "silent", db: &DBCheck{Username: "mon"}, srv: pgServer{silent: true}, errIs: ErrNoResponse, deadline: 300 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.srv.seen = make(chan string, 16)
			target := c.srv.start(t)
			d := c.deadline
			if d == 0 {
				d = 5 * time.Second
			}
			o, err := probe(t, &Spec{Type: PostgreSQL, DB: c.db}, target, d)
			wantVerdict(t, o, err, c.up, c.errSub, c.errIs)
			wantSeen(t, c.srv.seen, c.startup, c.query)
		})
	}
	if err := (&Spec{Type: PostgreSQL, DB: &DBCheck{RecvRow: -1}}).Check(); err == nil {
		t.Error("a negative recv-row was accepted")
	}
}
