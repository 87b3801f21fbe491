package dataplane

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/netip"
	"net/textproto"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/ftpalg"
)

// ftpMember is a small FTP server, enough for the gateway: it logs in
// anyone, serves one file (RETR) and keeps what it is sent (STOR), in
// passive (PASV, EPSV) and active (PORT, EPRT) mode, and after AUTH
// echoes raw bytes. It records the data commands it was sent, the
// addresses it was told, and where its connections came from.
type ftpMember struct {
	t    *testing.T
	addr netip.AddrPort
	file []byte

	mu       sync.Mutex
	cmds     []string         // the data commands' verbs, in order
	told     []netip.AddrPort // PORT/EPRT addresses
	from     []netip.Addr     // control and data connections' sources
	stored   []byte
	authEcho bool // answer AUTH with 234 and echo what follows
}

func startFTPMember(t *testing.T, addr string, file []byte) *ftpMember {
	t.Helper()
	m := &ftpMember{t: t, addr: ap(addr), file: file}
	serveConns(t, addr, m.serve)
	return m
}

func (m *ftpMember) note(verb string, told netip.AddrPort, from netip.Addr) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if verb != "" {
		m.cmds = append(m.cmds, verb)
	}
	if told.IsValid() {
		m.told = append(m.told, told)
	}
	if from.IsValid() {
		m.from = append(m.from, from)
	}
}

func (m *ftpMember) serve(c net.Conn) {
	m.note("", netip.AddrPort{}, ftpalg.AddrOf(c.RemoteAddr()).Addr())
	tc := textproto.NewConn(c)
	tc.PrintfLine("220 test member ready")
	var pasv *net.TCPListener
	var port netip.AddrPort
	defer func() {
		if pasv != nil {
			pasv.Close()
		}
	}()
	for range 100 {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		line, err := tc.ReadLine()
		if err != nil {
			return
		}
		verb, arg, _ := strings.Cut(line, " ")
		switch strings.ToUpper(verb) {
		case "USER":
			tc.PrintfLine("331 password please")
		case "PASS":
			tc.PrintfLine("230 logged in")
		case "TYPE":
			tc.PrintfLine("200 type set")
		case "PASV", "EPSV":
			m.note(verb, netip.AddrPort{}, netip.Addr{})
			if pasv, err = ftpalg.Listen(m.addr.Addr()); err != nil {
				tc.PrintfLine("425 no")
				continue
			}
			la := ftpalg.AddrOf(pasv.Addr())
			if verb == "PASV" {
				tc.PrintfLine("227 Entering Passive Mode (%s).", ftpalg.FormatHostPort(la))
			} else {
				tc.PrintfLine("229 Entering Extended Passive Mode (|||%d|)", la.Port())
			}
		case "PORT", "EPRT":
			if verb == "PORT" {
				port, err = ftpalg.ParseHostPort(arg)
			} else {
				port, err = ftpalg.ParseEPRT(arg)
			}
			m.note(verb, port, netip.Addr{})
			if err != nil {
				tc.PrintfLine("501 bad address")
				continue
			}
			tc.PrintfLine("200 %s command successful", verb)
		case "RETR", "STOR":
			var dc net.Conn
			if pasv != nil {
				pasv.SetDeadline(time.Now().Add(10 * time.Second))
				dc, err = pasv.Accept()
				pasv.Close()
				pasv = nil
			} else {
				d := net.Dialer{LocalAddr: &net.TCPAddr{IP: m.addr.Addr().AsSlice()}, Timeout: 5 * time.Second}
				dc, err = d.Dial("tcp", port.String())
			}
			if err != nil {
				tc.PrintfLine("425 no data connection")
				continue
			}
			m.note("", netip.AddrPort{}, ftpalg.AddrOf(dc.RemoteAddr()).Addr())
			tc.PrintfLine("150 opening data connection")
			dc.SetDeadline(time.Now().Add(10 * time.Second))
			if strings.EqualFold(verb, "RETR") {
				dc.Write(m.file)
			} else {
				got, _ := io.ReadAll(dc)
				m.mu.Lock()
				m.stored = got
				m.mu.Unlock()
			}
			dc.Close()
			tc.PrintfLine("226 transfer complete")
		case "AUTH":
			m.mu.Lock()
			echo := m.authEcho
			m.mu.Unlock()
			if !echo {
				tc.PrintfLine("502 not here")
				continue
			}
			tc.PrintfLine("234 AUTH TLS ok")
			io.Copy(c, tc.R) // the "handshake": echoed until the client ends
			return
		case "QUIT":
			tc.PrintfLine("221 bye")
			return
		default:
			tc.PrintfLine("502 %s not implemented", verb)
		}
	}
}

// ftpClient logs in to the virtual at vs.
func ftpClient(t *testing.T, vs string) *textproto.Conn {
	t.Helper()
	return ftpClientFrom(t, netip.Addr{}, vs)
}

// ftpClientFrom logs in to the virtual at vs from the address from (the
// system's choice when not valid).
func ftpClientFrom(t *testing.T, from netip.Addr, vs string) *textproto.Conn {
	t.Helper()
	d := net.Dialer{Timeout: 10 * time.Second}
	if from.IsValid() {
		d.LocalAddr = net.TCPAddrFromAddrPort(netip.AddrPortFrom(from, 0))
	}
	nc, err := d.Dial("tcp", vs)
	if err != nil {
		t.Fatal(err)
	}
	c := textproto.NewConn(nc)
	t.Cleanup(func() { c.Close() })
	for _, s := range []struct {
		cmd  string
		code int
	}{{"", 220}, {"USER anonymous", 331}, {"PASS x", 230}, {"TYPE I", 200}} {
		if s.cmd != "" {
			c.PrintfLine("%s", s.cmd)
		}
		if _, _, err := c.ReadResponse(s.code); err != nil {
			t.Fatalf("%q: %v", s.cmd, err)
		}
	}
	return c
}

// transfer runs one RETR (up false) or STOR (up true) in mode (PASV,
// EPSV, PORT, EPRT) and returns the bytes retrieved and the address the
// client's data connection was with.
func transfer(t *testing.T, c *textproto.Conn, vs netip.AddrPort, mode string, up bool, payload []byte) ([]byte, netip.AddrPort) {
	t.Helper()
	return transferAt(t, c, vs, mode, up, payload, netip.MustParseAddr("127.0.0.1"))
}

// transferAt is transfer with the client's active data listener (PORT,
// EPRT) on the address active.
func transferAt(t *testing.T, c *textproto.Conn, vs netip.AddrPort, mode string, up bool, payload []byte, active netip.Addr) ([]byte, netip.AddrPort) {
	t.Helper()
	var dc net.Conn
	var ln *net.TCPListener
	switch mode {
	case "PASV", "EPSV":
		c.PrintfLine("%s", mode)
		code, msg, err := c.ReadResponse(0)
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		var to netip.AddrPort
		if mode == "PASV" && code == 227 {
			to, err = ftpalg.Parse227(msg)
		} else if code == 229 {
			var p uint16
			p, err = ftpalg.Parse229(msg)
			to = netip.AddrPortFrom(vs.Addr(), p)
		} else {
			t.Fatalf("%s answered %d %s", mode, code, msg)
		}
		if err != nil || to.Addr() != vs.Addr() {
			t.Fatalf("%s: the answer %d %q names %v (%v), not the virtual's address", mode, code, msg, to, err)
		}
		if dc, err = net.DialTimeout("tcp", to.String(), 5*time.Second); err != nil {
			t.Fatalf("%s data connection: %v", mode, err)
		}
	default:
		var err error
		if ln, err = ftpalg.Listen(active); err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		la := ftpalg.AddrOf(ln.Addr())
		if mode == "PORT" {
			c.PrintfLine("PORT %s", ftpalg.FormatHostPort(la))
		} else {
			c.PrintfLine("EPRT %s", ftpalg.FormatEPRT(la))
		}
		if _, _, err := c.ReadResponse(200); err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
	}
	verb := "RETR f"
	if up {
		verb = "STOR f"
	}
	c.PrintfLine("%s", verb)
	if _, _, err := c.ReadResponse(150); err != nil {
		t.Fatalf("%s: %v", verb, err)
	}
	if ln != nil {
		ln.SetDeadline(time.Now().Add(10 * time.Second))
		var err error
		if dc, err = ln.Accept(); err != nil {
			t.Fatalf("%s: no active data connection: %v", mode, err)
		}
	}
	peer := ftpalg.AddrOf(dc.RemoteAddr())
	dc.SetDeadline(time.Now().Add(10 * time.Second))
	var got []byte
	if up {
		dc.Write(payload)
		dc.(*net.TCPConn).CloseWrite()
		io.Copy(io.Discard, dc)
	} else {
		got, _ = io.ReadAll(dc)
	}
	dc.Close()
	if _, _, err := c.ReadResponse(226); err != nil {
		t.Fatalf("%s after %s: %v", verb, mode, err)
	}
	return got, peer
}

// TestFTPProfile: an ftp profile's virtual carries passive (PASV, EPSV)
// and active (PORT, EPRT) transfers both ways: the client is told only
// the virtual's address and sees its active data connections come from
// it, the member is told and sees only the server side's address (the
// SNAT automap address when set), and translate-extended decides whether
// the member is sent EPSV/EPRT or PASV/PORT.
func TestFTPProfile(t *testing.T) {
	t.Parallel()
	file := bytes.Repeat([]byte("openltm ftp data\n"), 20000)
	m1 := startFTPMember(t, "127.0.228.31:2121", file)
	m2 := startFTPMember(t, "127.0.228.32:2121", file)
	p, _ := newPlane(t)
	cfg := basic("127.0.228.21:2121", "127.0.228.31:2121")
	cfg.Virtuals["/Common/vs"].FTP = &ftpalg.Options{Profile: "/Common/ftp", DataPort: 20, TranslateExtended: true}
	kept := basic("127.0.228.22:2121", "127.0.228.32:2121").Virtuals["/Common/vs"]
	kept.Name, kept.Pool = "/Common/vs_kept", "/Common/pool2"
	kept.SNAT = SNAT{Type: SNATAutomap}
	kept.FTP = &ftpalg.Options{Profile: "/Common/ftp_kept"}
	cfg.Virtuals[kept.Name] = kept
	cfg.Pools["/Common/pool2"] = &Pool{Name: "/Common/pool2", LBMode: RoundRobin,
		Members: []Member{{Node: "/Common/127.0.228.32", Addr: ap("127.0.228.32:2121")}}}
	cfg.SelfIPs = []netip.Addr{netip.MustParseAddr("127.0.228.5")}
	mustApply(t, p, cfg)

	for _, c := range []struct {
		name   string
		vs     string
		member *ftpMember
		mode   string
		up     bool
		sent   string     // what the member was sent
		source netip.Addr // where the member saw the connections from
	}{
		{"pasv retr", "127.0.228.21:2121", m1, "PASV", false, "PASV", netip.MustParseAddr("127.0.0.1")},
		{"epsv translated", "127.0.228.21:2121", m1, "EPSV", false, "PASV", netip.MustParseAddr("127.0.0.1")},
		{"port stor", "127.0.228.21:2121", m1, "PORT", true, "PORT", netip.MustParseAddr("127.0.0.1")},
		{"eprt translated", "127.0.228.21:2121", m1, "EPRT", false, "PORT", netip.MustParseAddr("127.0.0.1")},
		{"epsv kept, automap", "127.0.228.22:2121", m2, "EPSV", true, "EPSV", netip.MustParseAddr("127.0.228.5")},
		{"eprt kept, automap", "127.0.228.22:2121", m2, "EPRT", false, "EPRT", netip.MustParseAddr("127.0.228.5")},
		{"pasv, automap", "127.0.228.22:2121", m2, "PASV", false, "PASV", netip.MustParseAddr("127.0.228.5")},
	} {
		c.member.mu.Lock()
		c.member.cmds, c.member.told, c.member.from, c.member.stored = nil, nil, nil, nil
		c.member.mu.Unlock()
		vs := ap(c.vs)
		cl := ftpClient(t, c.vs)
		got, peer := transfer(t, cl, vs, c.mode, c.up, file)
		if c.up {
			c.member.mu.Lock()
			got = c.member.stored
			c.member.mu.Unlock()
		}
		if !bytes.Equal(got, file) {
			t.Errorf("%s: %d bytes arrived, want %d", c.name, len(got), len(file))
		}
		if (c.mode == "PORT" || c.mode == "EPRT") && peer.Addr() != vs.Addr() {
			t.Errorf("%s: the active data connection came from %v, not the virtual's address", c.name, peer)
		}
		cl.PrintfLine("QUIT")
		cl.ReadResponse(221)
		c.member.mu.Lock()
		cmds, told, from := c.member.cmds, c.member.told, c.member.from
		c.member.mu.Unlock()
		if len(cmds) != 1 || cmds[0] != c.sent {
			t.Errorf("%s: the member was sent %v, want %s", c.name, cmds, c.sent)
		}
		for _, a := range told {
			if a.Addr() != c.source {
				t.Errorf("%s: the member was told %v, want an address of %v", c.name, a, c.source)
			}
		}
		if len(from) != 2 || from[0] != c.source || from[1] != c.source {
			t.Errorf("%s: the member saw connections from %v, want two from %v", c.name, from, c.source)
		}
	}
}

// TestFTPProfileAuth: AUTH TLS is refused without allow-ftps; with it,
// after the member's 234 the bytes pass untouched both ways.
func TestFTPProfileAuth(t *testing.T) {
	t.Parallel()
	m := startFTPMember(t, "127.0.228.33:2121", nil)
	m.authEcho = true
	p, _ := newPlane(t)
	cfg := basic("127.0.228.23:2121", "127.0.228.33:2121")
	cfg.Virtuals["/Common/vs"].FTP = &ftpalg.Options{Profile: "/Common/ftp", TranslateExtended: true}
	allowed := basic("127.0.228.24:2121", "127.0.228.33:2121").Virtuals["/Common/vs"]
	allowed.Name = "/Common/vs_ftps"
	allowed.FTP = &ftpalg.Options{Profile: "/Common/ftps", TranslateExtended: true, AllowFTPS: true}
	cfg.Virtuals[allowed.Name] = allowed
	mustApply(t, p, cfg)

	for _, c := range []struct {
		name    string
		vs      string
		code    int
		through bool
	}{
		{"refused", "127.0.228.23:2121", 534, false},
		{"allowed", "127.0.228.24:2121", 234, true},
	} {
		cl := ftpClient(t, c.vs)
		cl.PrintfLine("AUTH TLS")
		if _, msg, err := cl.ReadResponse(c.code); err != nil {
			t.Errorf("%s: %v %s", c.name, err, msg)
			continue
		}
		if !c.through {
			continue
		}
		// Not a line: no line end, bytes a line reader would hold.
		hello := []byte{0x16, 0x03, 0x01, 0x00, 0x05, 'h', 'e', 'l', 'l', 'o'}
		cl.W.Write(hello)
		cl.W.Flush()
		got := make([]byte, len(hello))
		if _, err := io.ReadFull(bufio.NewReader(cl.R), got); err != nil || !bytes.Equal(got, hello) {
			t.Errorf("%s: after 234 read %q, %v; want the bytes echoed", c.name, got, err)
		}
	}
}
