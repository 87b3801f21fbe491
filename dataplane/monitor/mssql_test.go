package monitor

import (
	"cmp"
	"encoding/binary"
	"io"
	"net"
	"net/netip"
	"testing"
	"time"
	"unicode/utf16"
)

// tdsServer is a fake SQL Server for the mssql probe's tests, speaking
// enough TDS 7.4 for a login and a query without TLS: its PRELOGIN answer
// says encryption is not supported, a LOGIN7 with the right user and
// password gets a LOGINACK (else error 18456), and each SQL batch is
// answered with rows of nvarchar columns (a nil cell: NULL), or with
// queryErr. seen gets user@database, then each query.
type tdsServer struct {
	user, password string
	rows           [][]*string
	queryErr       string
	seen           chan string
	addr           string // where to listen; "": 127.0.0.1, any port
}

func (s *tdsServer) start(t *testing.T) netip.AddrPort {
	t.Helper()
	addr, err := echoServer(t, cmp.Or(s.addr, "127.0.0.1:0"), s.serve)
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// readTDS reads one message (its packets up to end of message): the
// first packet's type and the payload.
func readTDS(c net.Conn) (byte, []byte, error) {
	var typ byte
	var payload []byte
	for i := 0; i < 16; i++ {
		var h [8]byte
		if _, err := io.ReadFull(c, h[:]); err != nil {
			return 0, nil, err
		}
		if i == 0 {
			typ = h[0]
		}
		b := make([]byte, int(binary.BigEndian.Uint16(h[2:]))-8)
		if _, err := io.ReadFull(c, b); err != nil {
			return 0, nil, err
		}
		payload = append(payload, b...)
		if h[1]&1 != 0 {
			break
		}
	}
	return typ, payload, nil
}

func writeTDS(c net.Conn, typ byte, payload []byte) {
	h := []byte{typ, 1, 0, 0, 0, 0, 1, 0}
	binary.BigEndian.PutUint16(h[2:], uint16(8+len(payload)))
	c.Write(append(h, payload...))
}

func ucs2(s string) []byte {
	var b []byte
	for _, r := range utf16.Encode([]rune(s)) {
		b = binary.LittleEndian.AppendUint16(b, r)
	}
	return b
}

func fromUCS2(b []byte) string {
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return string(utf16.Decode(u))
}

// login7Field is the string at the LOGIN7 record's offset/length pair at
// i (lengths count UCS-2 characters).
func login7Field(rec []byte, i int) []byte {
	off, n := int(binary.LittleEndian.Uint16(rec[i:])), 2*int(binary.LittleEndian.Uint16(rec[i+2:]))
	if off+n > len(rec) {
		return nil
	}
	return rec[off : off+n]
}

func bVarchar(b []byte, s string) []byte {
	return append(append(b, byte(len([]rune(s)))), ucs2(s)...)
}

// tdsDone is a DONE token: status (0x10 count, 0x02 error) and rows.
func tdsDone(b []byte, status uint16, rows uint64) []byte {
	b = append(b, 0xfd)
	b = binary.LittleEndian.AppendUint16(b, status)
	b = binary.LittleEndian.AppendUint16(b, 0xc1)
	return binary.LittleEndian.AppendUint64(b, rows)
}

func tdsError(number uint32, msg string) []byte {
	body := binary.LittleEndian.AppendUint32(nil, number)
	body = append(body, 1, 14)
	body = binary.LittleEndian.AppendUint16(body, uint16(len([]rune(msg))))
	body = append(body, ucs2(msg)...)
	body = bVarchar(body, "fake")
	body = bVarchar(body, "")
	body = binary.LittleEndian.AppendUint32(body, 1)
	b := binary.LittleEndian.AppendUint16([]byte{0xaa}, uint16(len(body)))
	return tdsDone(append(b, body...), 0x02, 0)
}

func (s *tdsServer) serve(c net.Conn) {
	if typ, _, err := readTDS(c); err != nil || typ != 0x12 { // PRELOGIN
		return
	}
	// VERSION (6 bytes) and ENCRYPTION: 2, not supported.
	writeTDS(c, 4, []byte{0, 0, 11, 0, 6, 1, 0, 17, 0, 1, 0xff, 16, 0, 0x07, 0xd0, 0, 0, 2})
	typ, rec, err := readTDS(c)
	if err != nil || typ != 0x10 || len(rec) < 94 { // LOGIN7
		return
	}
	user := fromUCS2(login7Field(rec, 40))
	pw := login7Field(rec, 44)
	for i, b := range pw {
		b ^= 0xa5
		pw[i] = b<<4 | b>>4
	}
	s.seen <- user + "@" + fromUCS2(login7Field(rec, 68))
	if user != s.user || fromUCS2(pw) != s.password {
		writeTDS(c, 4, tdsError(18456, "Login failed for user '"+user+"'."))
		return
	}
	ack := []byte{1, 0x74, 0, 0, 4}
	ack = bVarchar(ack, "Microsoft SQL Server")
	ack = append(ack, 16, 0, 0x07, 0xd0)
	resp := binary.LittleEndian.AppendUint16([]byte{0xad}, uint16(len(ack)))
	writeTDS(c, 4, tdsDone(append(resp, ack...), 0, 0))
	for i := 0; i < 8; i++ {
		typ, batch, err := readTDS(c)
		if err != nil || typ != 1 || len(batch) < 4 {
			return
		}
		s.seen <- fromUCS2(batch[binary.LittleEndian.Uint32(batch):])
		if s.queryErr != "" {
			writeTDS(c, 4, tdsError(208, s.queryErr))
			continue
		}
		out := binary.LittleEndian.AppendUint16([]byte{0x81}, uint16(len(s.rows[0])))
		for j := range s.rows[0] {
			out = append(out, 0, 0, 0, 0, 1, 0)                            // user type, flags: nullable
			out = append(out, 0xe7, 0x40, 0x1f, 0x09, 0x04, 0xd0, 0, 0x34) // nvarchar(4000), collation
			out = bVarchar(out, "c"+string(rune('1'+j)))
		}
		for _, r := range s.rows {
			out = append(out, 0xd1)
			for _, v := range r {
				if v == nil {
					out = append(out, 0xff, 0xff)
					continue
				}
				out = binary.LittleEndian.AppendUint16(out, uint16(2*len([]rune(*v))))
				out = append(out, ucs2(*v)...)
			}
		}
		writeTDS(c, 4, tdsDone(out, 0x10, uint64(len(s.rows))))
	}
}

func TestProbeMSSQL(t *testing.T) {
	str := func(s string) *string { return &s }
	rows := [][]*string{{str("ok"), str("1")}, {str("ready"), nil}}
	for _, c := range []struct {
		name   string
		db     *DBCheck
		srv    tdsServer
		up     bool
		errSub string
		errIs  error
		login  string
		query  string
	}{
		{name: "login only", db: &DBCheck{Username: "mon", Password: "pw", Database: "app"}, srv: tdsServer{user: "mon", password: "pw"}, up: true, login: "mon@app"},
		{name: "query, value anywhere", db: &DBCheck{Username: "mon", Password: "pw", Send: "SELECT status, n FROM health", Recv: "ready"},
			srv: tdsServer{user: "mon", password: "pw", rows: rows}, up: true, login: "mon@", query: "SELECT status, n FROM health"},
		{name: "query, value at its row and column", db: &DBCheck{Username: "mon", Password: "pw", Send: "SELECT 1", Recv: "1", RecvRow: 1, RecvColumn: 2},
			srv: tdsServer{user: "mon", password: "pw", rows: rows}, up: true},
		{name: "query, value elsewhere", db: &DBCheck{Username: "mon", Password: "pw", Send: "SELECT 1", Recv: "ready", RecvColumn: 2},
			srv: tdsServer{user: "mon", password: "pw", rows: rows}, errIs: ErrNoMatch},
		{name: "wrong password", db: &DBCheck{Username: "mon", Password: "bad"}, srv: tdsServer{user: "mon", password: "pw"},
			errSub: "Unable to connect; Login failed for user 'mon'. (error 18456)"},
		{name: "query fails", db: &DBCheck{Username: "mon", Password: "pw", Send: "SELECT * FROM gone"},
			srv: tdsServer{user: "mon", password: "pw", queryErr: "Invalid object name 'gone'."}, errSub: "Query failed; Invalid object name 'gone'. (error 208)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.srv.seen = make(chan string, 16)
			target := c.srv.start(t)
			o, err := probe(t, &Spec{Type: MSSQL, DB: c.db}, target, 5*time.Second)
			wantVerdict(t, o, err, c.up, c.errSub, c.errIs)
			wantSeen(t, c.srv.seen, c.login, c.query)
		})
	}
	t.Run("refused", func(t *testing.T) {
		target := closedPort(t, "127.0.0.1:0")
		o, err := probe(t, &Spec{Type: MSSQL}, target, 5*time.Second)
		wantVerdict(t, o, err, false, "Unable to connect", nil)
	})
	t.Run("silent", func(t *testing.T) {
		target, err := echoServer(t, "127.0.0.1:0", func(c net.Conn) { io.Copy(io.Discard, c) })
		if err != nil {
			t.Fatal(err)
		}
		o, err := probe(t, &Spec{Type: MSSQL}, target, 300*time.Millisecond)
		wantVerdict(t, o, err, false, "", ErrNoResponse)
	})
}
