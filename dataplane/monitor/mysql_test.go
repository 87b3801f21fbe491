package monitor

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/sha1"
	"encoding/binary"
	"io"
	"net"
	"net/netip"
	"testing"
	"time"
)

// mysqlServer is a fake MySQL server for the mysql probe's tests: it
// greets with a protocol 10 handshake offering mysql_native_password,
// checks the login (user, scrambled password, database), and answers each
// COM_QUERY with a text result set of rows, or with queryErr. seen gets
// user@database, then each query.
type mysqlServer struct {
	user, password, database string
	rows                     [][]string // a nil cell is NULL: use mysqlNull
	queryErr                 string
	silent                   bool
	seen                     chan string
	addr                     string // where to listen; "": 127.0.0.1, any port
}

// mysqlNull marks a NULL cell in mysqlServer.rows.
const mysqlNull = "\x00NULL"

// The capability flags the fake server offers: long password, long flag,
// connect with db, protocol 4.1, transactions, secure connection, plugin
// auth and length-encoded auth data.
const mysqlServerCaps = 1 | 4 | 8 | 0x200 | 0x2000 | 0x8000 | 0x80000 | 0x200000

func (s *mysqlServer) start(t *testing.T) netip.AddrPort {
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

// mysqlConn frames packets: a 3-byte length, a sequence number, the body.
type mysqlConn struct {
	r   *bufio.Reader
	w   net.Conn
	seq byte
}

func (c *mysqlConn) read() ([]byte, error) {
	var h [4]byte
	if _, err := io.ReadFull(c.r, h[:]); err != nil {
		return nil, err
	}
	n := int(h[0]) | int(h[1])<<8 | int(h[2])<<16
	c.seq = h[3] + 1
	b := make([]byte, n)
	_, err := io.ReadFull(c.r, b)
	return b, err
}

func (c *mysqlConn) write(body []byte) {
	h := []byte{byte(len(body)), byte(len(body) >> 8), byte(len(body) >> 16), c.seq}
	c.seq++
	c.w.Write(append(h, body...))
}

func (c *mysqlConn) writeErr(code uint16, state, msg string) {
	b := []byte{0xff, byte(code), byte(code >> 8), '#'}
	c.write(append(append(b, state...), msg...))
}

func (c *mysqlConn) writeEOF() { c.write([]byte{0xfe, 0, 0, 2, 0}) }

func lenencStr(b []byte, s string) []byte {
	return append(append(b, byte(len(s))), s...) // the test's strings are short
}

// nativeScramble is mysql_native_password's answer to the server's nonce:
// SHA1(password) XOR SHA1(nonce + SHA1(SHA1(password))).
func nativeScramble(nonce []byte, password string) []byte {
	if password == "" {
		return nil
	}
	h1 := sha1.Sum([]byte(password))
	h2 := sha1.Sum(h1[:])
	h3 := sha1.Sum(append(append([]byte{}, nonce...), h2[:]...))
	for i := range h3 {
		h3[i] ^= h1[i]
	}
	return h3[:]
}

func (s *mysqlServer) serve(nc net.Conn) {
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	if s.silent {
		buf := make([]byte, 1024)
		nc.Read(buf)
		return
	}
	c := &mysqlConn{r: bufio.NewReader(nc), w: nc}
	nonce := []byte("abcdefgh" + "ijklmnopqrst")
	hs := append([]byte{10}, "8.0.36-fake\x00"...)
	hs = append(hs, 1, 0, 0, 0)
	hs = append(hs, nonce[:8]...)
	caps := uint32(mysqlServerCaps)
	hs = append(hs, 0, byte(caps), byte(caps>>8), 33, 2, 0, byte(caps>>16), byte(caps>>24), 21)
	hs = append(hs, make([]byte, 10)...)
	hs = append(hs, nonce[8:]...)
	hs = append(hs, 0)
	hs = append(hs, "mysql_native_password\x00"...)
	c.write(hs)
	resp, err := c.read()
	if err != nil || len(resp) < 32 {
		return
	}
	caps = binary.LittleEndian.Uint32(resp)
	rest := resp[32:]
	user, rest, _ := bytes.Cut(rest, []byte{0})
	if len(rest) == 0 || int(rest[0]) > len(rest)-1 {
		return
	}
	auth := rest[1 : 1+int(rest[0])]
	rest = rest[1+int(rest[0]):]
	var db []byte
	if caps&8 != 0 {
		db, _, _ = bytes.Cut(rest, []byte{0})
	}
	s.seen <- string(user) + "@" + string(db)
	switch {
	case string(user) != s.user || !bytes.Equal(auth, nativeScramble(nonce, s.password)):
		pw := "NO"
		if len(auth) > 0 {
			pw = "YES"
		}
		c.writeErr(1045, "28000", "Access denied for user '"+string(user)+"'@'localhost' (using password: "+pw+")")
		return
	case s.database != "" && string(db) != s.database:
		c.writeErr(1049, "42000", "Unknown database '"+string(db)+"'")
		return
	}
	c.write([]byte{0, 0, 0, 2, 0, 0, 0})
	for i := 0; i < 8; i++ {
		cmd, err := c.read()
		if err != nil || len(cmd) == 0 || cmd[0] != 3 { // COM_QUIT, or anything else
			return
		}
		s.seen <- string(cmd[1:])
		if s.queryErr != "" {
			c.writeErr(1146, "42S02", s.queryErr)
			continue
		}
		c.write([]byte{byte(len(s.rows[0]))})
		for j := range s.rows[0] {
			col := lenencStr(nil, "def")
			col = lenencStr(lenencStr(lenencStr(col, ""), ""), "")
			col = lenencStr(lenencStr(col, "c"+string(rune('1'+j))), "")
			col = append(col, 0x0c, 33, 0, 0, 1, 0, 0, 0xfd, 0, 0, 0, 0, 0)
			c.write(col)
		}
		c.writeEOF()
		for _, r := range s.rows {
			var row []byte
			for _, v := range r {
				if v == mysqlNull {
					row = append(row, 0xfb)
				} else {
					row = lenencStr(row, v)
				}
			}
			c.write(row)
		}
		c.writeEOF()
	}
}

func TestProbeMySQL(t *testing.T) {
	rows := [][]string{{"ok", "1"}, {"ready", mysqlNull}}
	for _, c := range []struct {
		name     string
		db       *DBCheck
		srv      mysqlServer
		up       bool
		errSub   string
		errIs    error
		login    string
		query    string
		deadline time.Duration
	}{
		{name: "login only", db: &DBCheck{Username: "mon", Password: "pw", Database: "app"},
			srv: mysqlServer{user: "mon", password: "pw", database: "app"}, up: true, login: "mon@app"},
		{name: "query, value anywhere", db: &DBCheck{Username: "mon", Password: "pw", Send: "SELECT status, n FROM health", Recv: "ready"},
			srv: mysqlServer{user: "mon", password: "pw", rows: rows}, up: true, login: "mon@", query: "SELECT status, n FROM health"},
		{name: "query, value at its row and column", db: &DBCheck{Username: "mon", Password: "pw", Send: "SELECT 1", Recv: "1", RecvRow: 1, RecvColumn: 2},
			srv: mysqlServer{user: "mon", password: "pw", rows: rows}, up: true},
		{name: "query, value elsewhere", db: &DBCheck{Username: "mon", Password: "pw", Send: "SELECT 1", Recv: "ready", RecvRow: 1},
			srv: mysqlServer{user: "mon", password: "pw", rows: rows}, errIs: ErrNoMatch},
		{name: "a row with a NULL", db: &DBCheck{Username: "mon", Password: "pw", Send: "SELECT 1", Recv: "ready", RecvRow: 2, RecvColumn: 1},
			srv: mysqlServer{user: "mon", password: "pw", rows: rows}, up: true},
		{name: "wrong password", db: &DBCheck{Username: "mon", Password: "bad"}, srv: mysqlServer{user: "mon", password: "pw"},
			errSub: "Unable to connect; Access denied for user 'mon'@'localhost' (using password: YES) (error 1045, SQLSTATE 28000)"},
		{name: "unknown database", db: &DBCheck{Username: "mon", Password: "pw", Database: "nope"}, srv: mysqlServer{user: "mon", password: "pw", database: "app"},
			errSub: "Unknown database 'nope' (error 1049"},
		{name: "query fails", db: &DBCheck{Username: "mon", Password: "pw", Send: "SELECT * FROM gone"},
			srv:    mysqlServer{user: "mon", password: "pw", queryErr: "Table 'app.gone' doesn't exist"},
			errSub: "Query failed; Table 'app.gone' doesn't exist (error 1146, SQLSTATE 42S02)"},
		{name: "anonymous", srv: mysqlServer{}, up: true, login: "@"},
		{name: "silent", db: &DBCheck{Username: "mon"}, srv: mysqlServer{silent: true}, errIs: ErrNoResponse, deadline: 300 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.srv.seen = make(chan string, 16)
			target := c.srv.start(t)
			d := c.deadline
			if d == 0 {
				d = 5 * time.Second
			}
			o, err := probe(t, &Spec{Type: MySQL, DB: c.db}, target, d)
			wantVerdict(t, o, err, c.up, c.errSub, c.errIs)
			wantSeen(t, c.srv.seen, c.login, c.query)
		})
	}
	t.Run("refused", func(t *testing.T) {
		target := closedPort(t, "127.0.0.1:0")
		o, err := probe(t, &Spec{Type: MySQL}, target, 5*time.Second)
		wantVerdict(t, o, err, false, "Unable to connect; connect: connection refused", nil)
	})
	if err := (&Spec{Type: MySQL, DB: &DBCheck{RecvColumn: -1}}).Check(); err == nil {
		t.Error("a negative recv-column was accepted")
	}
}
