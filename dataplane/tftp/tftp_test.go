package tftp

import (
	"bytes"
	"errors"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		name string
		in   string
		want Packet
		err  error
	}{
		{"RRQ", "\x00\x01boot.img\x00octet\x00", Packet{Op: RRQ, Filename: "boot.img", Mode: "octet"}, nil},
		{"WRQ netascii", "\x00\x02a.txt\x00NetASCII\x00", Packet{Op: WRQ, Filename: "a.txt", Mode: "NetASCII"}, nil},
		{"RRQ with options", "\x00\x01f\x00octet\x00blksize\x001428\x00tsize\x000\x00timeout\x003\x00",
			Packet{Op: RRQ, Filename: "f", Mode: "octet", Options: []Option{{"blksize", "1428"}, {"tsize", "0"}, {"timeout", "3"}}}, nil},
		{"OACK", "\x00\x06blksize\x008\x00", Packet{Op: OACK, Options: []Option{{"blksize", "8"}}}, nil},
		{"OACK empty", "\x00\x06", Packet{Op: OACK}, nil},
		{"DATA", "\x00\x03\xff\xffabc", Packet{Op: DATA, Block: 65535, Data: []byte("abc")}, nil},
		{"DATA empty (last block)", "\x00\x03\x00\x00", Packet{Op: DATA, Block: 0, Data: []byte{}}, nil},
		{"ACK", "\x00\x04\x01\x02", Packet{Op: ACK, Block: 258}, nil},
		{"ERROR", "\x00\x05\x00\x01File not found\x00", Packet{Op: ERROR, ErrCode: 1, ErrMsg: "File not found"}, nil},
		{"ERROR empty message", "\x00\x05\x00\x00\x00", Packet{Op: ERROR}, nil},

		{"empty", "", Packet{}, ErrShort},
		{"one byte", "\x00", Packet{}, ErrShort},
		{"unknown opcode", "\x00\x07x", Packet{Op: 7}, ErrOpcode},
		{"RRQ unterminated", "\x00\x01boot.img\x00octet", Packet{Op: RRQ}, ErrField},
		{"RRQ no mode", "\x00\x01boot.img\x00", Packet{Op: RRQ}, ErrShort},
		{"RRQ empty name", "\x00\x01\x00octet\x00", Packet{Op: RRQ}, ErrEmpty},
		{"RRQ bad mode", "\x00\x01f\x00binary\x00", Packet{Op: RRQ, Filename: "f", Mode: "binary"}, ErrMode},
		{"RRQ option without value", "\x00\x01f\x00octet\x00blksize\x00", Packet{Op: RRQ, Filename: "f", Mode: "octet"}, ErrOption},
		{"DATA short", "\x00\x03\x00", Packet{Op: DATA}, ErrShort},
		{"ACK short", "\x00\x04\x00", Packet{Op: ACK}, ErrShort},
		{"ACK long", "\x00\x04\x00\x01x", Packet{Op: ACK}, ErrTooLong},
		{"ERROR unterminated", "\x00\x05\x00\x01oops", Packet{Op: ERROR, ErrCode: 1}, ErrField},
	} {
		got, err := Parse([]byte(c.in))
		if !errors.Is(err, c.err) {
			t.Errorf("%s: error %v, want %v", c.name, err, c.err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
		if err == nil && c.want.Op != DATA {
			if b := Append(nil, &got); !bytes.Equal(b, []byte(c.in)) {
				t.Errorf("%s: Append gives %q, want %q", c.name, b, c.in)
			}
		}
	}
}

func TestOpAndOptions(t *testing.T) {
	for _, c := range []struct {
		in      string
		op      Opcode
		request bool
		name    string
	}{
		{"", 0, false, "opcode 0"},
		{"\x00\x01f\x00octet\x00", RRQ, true, "RRQ"},
		{"\x00\x02f\x00octet\x00", WRQ, true, "WRQ"},
		{"\x00\x03\x00\x01", DATA, false, "DATA"},
		{"\x00\x04\x00\x01", ACK, false, "ACK"},
		{"\x00\x05\x00\x01x\x00", ERROR, false, "ERROR"},
		{"\x00\x06", OACK, false, "OACK"},
		{"\x01\x01", 257, false, "opcode 257"},
	} {
		if op := Op([]byte(c.in)); op != c.op || IsRequest([]byte(c.in)) != c.request || op.String() != c.name {
			t.Errorf("%q: %v (request %v), want %v (%v)", c.in, op, IsRequest([]byte(c.in)), c.op, c.request)
		}
	}
	for _, c := range []struct {
		opts []Option
		blk  int
	}{
		{nil, 512},
		{[]Option{{"BLKSIZE", "1428"}}, 1428},
		{[]Option{{"blksize", "8"}}, 8},
		{[]Option{{"blksize", "7"}}, 512},
		{[]Option{{"blksize", "65465"}}, 512},
		{[]Option{{"blksize", "x"}}, 512},
		{[]Option{{"tsize", "0"}, {"blksize", "65464"}}, 65464},
	} {
		p := Packet{Op: RRQ, Options: c.opts}
		if got := p.BlockSize(); got != c.blk {
			t.Errorf("%v: block size %d, want %d", c.opts, got, c.blk)
		}
	}
}

// TestServer: the server answers each transfer from a new port, reads
// and writes files, refuses names with a directory and an existing
// file's WRQ, and says "file not found".
func TestServer(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "f"), []byte("hello, world"), 0o644)
	os.WriteFile(filepath.Join(dir, "exists"), nil, 0o644)
	srv, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.111.9.1:0")))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	go (&Server{Dir: dir, Timeout: 200 * time.Millisecond}).Serve(srv)
	server := srv.LocalAddr().(*net.UDPAddr).AddrPort()
	c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.111.9.2:0")))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	buf := make([]byte, 2048)
	ask := func(to netip.AddrPort, p *Packet) (Packet, netip.AddrPort) {
		t.Helper()
		c.WriteToUDPAddrPort(Append(nil, p), to)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, from, err := c.ReadFromUDPAddrPort(buf)
		if err != nil {
			t.Fatalf("%v %s: %v", p.Op, p.Filename, err)
		}
		got, err := Parse(buf[:n])
		if err != nil {
			t.Fatal(err)
		}
		return got, from
	}
	p, from := ask(server, &Packet{Op: RRQ, Filename: "f", Mode: "octet"})
	if p.Op != DATA || p.Block != 1 || string(p.Data) != "hello, world" || from == server || from.Addr() != server.Addr() {
		t.Fatalf("RRQ: %+v from %s (server %s)", p, from, server)
	}
	c.WriteToUDPAddrPort(Append(nil, &Packet{Op: ACK, Block: 1}), from)

	p, from = ask(server, &Packet{Op: WRQ, Filename: "new", Mode: "octet", Options: []Option{{"blksize", "8"}}})
	if p.Op != OACK || p.BlockSize() != 8 || from == server {
		t.Fatalf("WRQ: %+v from %s", p, from)
	}
	if p, _ = ask(from, &Packet{Op: DATA, Block: 1, Data: []byte("12345678")}); p.Op != ACK || p.Block != 1 {
		t.Fatalf("DATA 1: %+v", p)
	}
	if p, _ = ask(from, &Packet{Op: DATA, Block: 2, Data: []byte("9")}); p.Op != ACK || p.Block != 2 {
		t.Fatalf("DATA 2: %+v", p)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if b, _ := os.ReadFile(filepath.Join(dir, "new")); string(b) == "123456789" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("WRQ: the file was not written")
		}
	}
	for _, c := range []struct {
		p    Packet
		code uint16
	}{
		{Packet{Op: RRQ, Filename: "missing", Mode: "octet"}, ErrNotFound},
		{Packet{Op: RRQ, Filename: "../f", Mode: "octet"}, ErrAccess},
		{Packet{Op: WRQ, Filename: "exists", Mode: "octet"}, ErrExists},
	} {
		if p, _ := ask(server, &c.p); p.Op != ERROR || p.ErrCode != c.code {
			t.Errorf("%v %s: %+v, want error %d", c.p.Op, c.p.Filename, p, c.code)
		}
	}
}
