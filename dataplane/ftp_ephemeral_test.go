package dataplane

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/ftpalg"
)

// TestFTPDataEphemeral: an ftp profile's data connection, passive or
// active, is a connection table flow of its own while it lasts (the
// client and the virtual's address on the client side, the member on
// the server side), counted in the virtual's Ephemeral column and not
// its clients'; delete sys connection resets it.
func TestFTPDataEphemeral(t *testing.T) {
	t.Parallel()
	file := bytes.Repeat([]byte("ephemeral ftp data\n"), 100)
	startFTPMember(t, "127.200.41.11:2121", file)
	p, _ := newPlane(t)
	cfg := basic("127.200.41.1:2121", "127.200.41.11:2121")
	cfg.Virtuals["/Common/vs"].FTP = &ftpalg.Options{Profile: "/Common/ftp", DataPort: 20, TranslateExtended: true}
	mustApply(t, p, cfg)
	vs := ap("127.200.41.1:2121")

	for _, tc := range []struct {
		name string
		mode string
	}{
		{"passive", "PASV"},
		{"active", "PORT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := p.Virtual("/Common/vs")
			cl := ftpClient(t, vs.String())
			dc := openData(t, cl, vs, tc.mode)
			defer dc.Close()
			if _, err := dc.Write([]byte("held open")); err != nil {
				t.Fatal(err)
			}
			// The data flow is in the table beside the control connection.
			var data *Connection
			for i := 0; i < 200 && data == nil; i++ {
				p.Connections(ConnFilter{CSClientPort: ftpalg.AddrOf(dc.LocalAddr()).Port()}, func(c *Connection) bool {
					cp := *c
					data = &cp
					return false
				})
				if data == nil || data.CSBytesIn < 9 {
					data = nil
					time.Sleep(20 * time.Millisecond)
				}
			}
			if data == nil {
				t.Fatal("the data connection is not in the connection table")
			}
			if data.CSServer != ftpalg.AddrOf(dc.RemoteAddr()) || data.CSServer.Addr() != vs.Addr() ||
				data.SSServer.Addr() != netip.MustParseAddr("127.200.41.11") || data.Virtual != "/Common/vs" || data.Protocol != "tcp" {
				t.Fatalf("data flow %+v", data)
			}
			st, _ := p.Virtual("/Common/vs")
			if st.Ephemeral.CurConns != 1 || st.Ephemeral.TotConns != before.Ephemeral.TotConns+1 || st.Ephemeral.BitsIn < before.Ephemeral.BitsIn+72 {
				t.Errorf("ephemeral %+v", st.Ephemeral)
			}
			if st.ClientSide.CurConns != 1 {
				t.Errorf("client side: %d current connections, want the control connection alone", st.ClientSide.CurConns)
			}
			// delete sys connection resets it.
			if n := p.DeleteConnections(ConnFilter{CSClientPort: ftpalg.AddrOf(dc.LocalAddr()).Port()}); n != 1 {
				t.Fatalf("deleted %d flows", n)
			}
			dc.SetReadDeadline(time.Now().Add(10 * time.Second))
			_, err := io.ReadAll(dc)
			var ne net.Error
			if err == nil || (errors.As(err, &ne) && ne.Timeout()) {
				t.Fatalf("the data connection was not reset: %v", err)
			}
			for i := 0; i < 200; i++ {
				if st, _ = p.Virtual("/Common/vs"); st.Ephemeral.CurConns == 0 {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if st.Ephemeral.CurConns != 0 {
				t.Errorf("ephemeral after the delete %+v", st.Ephemeral)
			}
		})
	}
}

// openData asks for a data connection in mode (PASV or PORT) and starts
// a STOR on it, returning the client's end.
func openData(t *testing.T, c interface {
	PrintfLine(string, ...any) error
	ReadResponse(int) (int, string, error)
}, vs netip.AddrPort, mode string) net.Conn {
	t.Helper()
	if mode == "PASV" {
		c.PrintfLine("PASV")
		_, msg, err := c.ReadResponse(227)
		if err != nil {
			t.Fatal(err)
		}
		to, err := ftpalg.Parse227(msg)
		if err != nil {
			t.Fatal(err)
		}
		dc, err := net.DialTimeout("tcp", to.String(), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		c.PrintfLine("STOR f")
		if _, _, err := c.ReadResponse(150); err != nil {
			t.Fatal(err)
		}
		return dc
	}
	ln, err := ftpalg.Listen(netip.MustParseAddr("127.0.0.1")) // the control connection's client: data goes to no third party
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c.PrintfLine("PORT %s", ftpalg.FormatHostPort(ftpalg.AddrOf(ln.Addr())))
	if _, _, err := c.ReadResponse(200); err != nil {
		t.Fatal(err)
	}
	c.PrintfLine("STOR f")
	if _, _, err := c.ReadResponse(150); err != nil {
		t.Fatal(err)
	}
	ln.SetDeadline(time.Now().Add(10 * time.Second))
	dc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	return dc
}
