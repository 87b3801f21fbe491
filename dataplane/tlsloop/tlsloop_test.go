//go:build linux

package tlsloop

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// testCert is a self-signed ECDSA certificate for 127.41.0.1.
func testCert(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "loop.example"},
		DNSNames:     []string{"loop.example"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// capture is the client's socket: writes go through, or are held (hold)
// for the test to send in pieces of its choosing.
type capture struct {
	net.Conn
	hold bool
	held []byte
}

func (c *capture) Write(p []byte) (int, error) {
	if c.hold {
		c.held = append(c.held, p...)
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// session is a handshaken pair: a crypto/tls client over cc, and the
// server's Conn detached onto fd.
type session struct {
	client *tls.Conn
	cc     *capture
	srv    *Conn
	fd     int
}

func newSession(t *testing.T, vers uint16) *session {
	t.Helper()
	return newSessionOn(t, vers, "127.41.0.1", nil)
}

// newSessionOn is newSession listening on host, the server's handshake
// connection wrapped by wrap when set.
func newSessionOn(t *testing.T, vers uint16, host string, wrap func(net.Conn) net.Conn) *session {
	t.Helper()
	ln, err := net.Listen("tcp", host+":0")
	if err != nil {
		t.Skipf("cannot listen on %s: %v", host, err)
	}
	defer ln.Close()
	cfg := &tls.Config{Certificates: []tls.Certificate{testCert(t)}, MinVersion: vers, MaxVersion: vers}
	type accepted struct {
		c   net.Conn
		srv *Conn
		err error
	}
	ch := make(chan accepted, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			ch <- accepted{err: err}
			return
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		var hc net.Conn = c
		if wrap != nil {
			hc = wrap(c)
		}
		srv := Server(hc, cfg)
		ch <- accepted{c, srv, srv.TLS().Handshake()}
	}()
	raw, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	raw.SetDeadline(time.Now().Add(10 * time.Second))
	cc := &capture{Conn: raw}
	client := tls.Client(cc, &tls.Config{InsecureSkipVerify: true, MinVersion: vers, MaxVersion: vers})
	if err := client.Handshake(); err != nil {
		t.Fatal(err)
	}
	a := <-ch
	if a.err != nil {
		t.Fatal(a.err)
	}
	fd := detach(t, a.c)
	a.srv.Detach(fd)
	return &session{client: client, cc: cc, srv: a.srv, fd: fd}
}

// detach is what the loop's side does: a non-blocking descriptor of c's
// socket outside the net package, and c closed.
func detach(t *testing.T, c net.Conn) int {
	t.Helper()
	rc, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	fd := -1
	rc.Control(func(s uintptr) { fd, err = unix.Dup(int(s)) })
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Time{})
	c.Close()
	if err := unix.SetNonblock(fd, true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return fd
}

// wait polls fd for ev, for at most 5 s. A poll the Go runtime's
// preemption signal interrupts (EINTR) is tried again, 100 times at most.
func wait(t *testing.T, fd int, ev int16) {
	t.Helper()
	p := []unix.PollFd{{Fd: int32(fd), Events: ev}}
	for i := 0; ; i++ {
		n, err := unix.Poll(p, 5000)
		if err == unix.EINTR && i < 100 {
			continue
		}
		if err != nil || n == 0 {
			t.Fatalf("poll: %d %v", n, err)
		}
		return
	}
}

// readServer reads plaintext from the server's side, as a loop would,
// until want bytes came (or EOF, with untilEOF); it reports whether EOF
// was seen.
func (s *session) readServer(t *testing.T, want int, untilEOF bool) ([]byte, bool) {
	t.Helper()
	var got []byte
	buf := make([]byte, 4096)
	for i := 0; i < 10000 && (untilEOF || len(got) < want); i++ {
		n, err := s.srv.Read(buf)
		got = append(got, buf[:n]...)
		if s.srv.Buffered() > 0 {
			if ferr := s.srv.Flush(); ferr != nil {
				t.Fatal(ferr)
			}
		}
		switch {
		case err == nil:
		case err == ErrWouldBlock:
			if untilEOF || len(got) < want {
				wait(t, s.fd, unix.POLLIN)
				s.srv.Readable(false)
			}
		case errors.Is(err, io.EOF):
			return got, true
		default:
			t.Fatalf("read: %v", err)
		}
	}
	return got, false
}

func TestServerOnLoop(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 4096) // 64 KiB: several records
	tests := []struct {
		name string
		// send makes the client send what the server is to read.
		send    func(t *testing.T, s *session) []byte
		wantEOF bool
	}{
		{"one record", func(t *testing.T, s *session) []byte {
			s.client.Write([]byte("hello"))
			return []byte("hello")
		}, false},
		{"partial records", func(t *testing.T, s *session) []byte {
			s.cc.hold = true
			s.client.Write([]byte("split into pieces"))
			held := s.cc.held
			for i := 0; i < len(held); i += 3 {
				if _, err := s.cc.Conn.Write(held[i:min(i+3, len(held))]); err != nil {
					t.Fatal(err)
				}
				if i+3 < len(held) {
					// The piece arrives: the server reads it and needs more.
					wait(t, s.fd, unix.POLLIN)
					s.srv.Readable(false)
					if n, err := s.srv.Read(make([]byte, 64)); n != 0 || err != ErrWouldBlock {
						t.Fatalf("partial record: read %d, %v", n, err)
					}
				}
			}
			return []byte("split into pieces")
		}, false},
		{"several records per read", func(t *testing.T, s *session) []byte {
			s.cc.hold = true
			s.client.Write([]byte("one,"))
			s.client.Write([]byte("two,"))
			s.client.Write([]byte("three"))
			s.cc.Conn.Write(s.cc.held)
			return []byte("one,two,three")
		}, false},
		{"large", func(t *testing.T, s *session) []byte {
			go s.client.Write(big)
			return big
		}, false},
		{"close_notify", func(t *testing.T, s *session) []byte {
			s.client.Write([]byte("last"))
			s.client.CloseWrite()
			return []byte("last")
		}, true},
		{"FIN without close_notify", func(t *testing.T, s *session) []byte {
			s.client.Write([]byte("cut"))
			s.cc.Conn.(*net.TCPConn).CloseWrite()
			return []byte("cut")
		}, true},
	}
	for _, vers := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		for _, tc := range tests {
			t.Run(tls.VersionName(vers)+"/"+tc.name, func(t *testing.T) {
				s := newSession(t, vers)
				want := tc.send(t, s)
				got, eof := s.readServer(t, len(want), tc.wantEOF)
				if !bytes.Equal(got, want) {
					t.Fatalf("read %d bytes %.40q, want %d %.40q", len(got), got, len(want), want)
				}
				if eof != tc.wantEOF {
					t.Fatalf("EOF %v, want %v", eof, tc.wantEOF)
				}
			})
		}
	}
}

// TestServerWrites: records the socket does not take wait in the Conn and
// go out on writability; close_notify follows them.
func TestServerWrites(t *testing.T) {
	for _, vers := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		t.Run(tls.VersionName(vers), func(t *testing.T) {
			s := newSession(t, vers)
			unix.SetsockoptInt(s.fd, unix.SOL_SOCKET, unix.SO_SNDBUF, 4096)
			want := bytes.Repeat([]byte("response-body."), 100000) // 1.4 MB
			got := make(chan []byte, 1)
			go func() {
				b, _ := io.ReadAll(s.client)
				got <- b
			}()
			for i := 0; i < 10; i++ { // several writes, some while bytes wait
				if n, err := s.srv.Write(want[i*len(want)/10 : (i+1)*len(want)/10]); err != nil || n != len(want)/10 {
					t.Fatalf("write: %d %v", n, err)
				}
			}
			if s.srv.Buffered() == 0 {
				t.Log("the socket took everything at once")
			}
			s.srv.CloseWrite()
			for i := 0; i < 100000 && s.srv.Buffered() > 0; i++ {
				wait(t, s.fd, unix.POLLOUT)
				if err := s.srv.Flush(); err != nil {
					t.Fatal(err)
				}
			}
			if s.srv.Buffered() > 0 {
				t.Fatal("buffered ciphertext never went")
			}
			if b := <-got; !bytes.Equal(b, want) {
				t.Fatalf("client read %d bytes, want %d", len(b), len(want))
			}
		})
	}
}

// TestKeyUpdate: a TLS 1.3 client's key update (openssl s_client's K
// command asks for one back) is answered and the data after it read.
func TestKeyUpdate(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("openssl is not installed")
	}
	ln, err := net.Listen("tcp", "127.41.0.2:0")
	if err != nil {
		t.Skipf("cannot listen on 127.41.0.2: %v", err)
	}
	defer ln.Close()
	cmd := exec.Command("openssl", "s_client", "-connect", ln.Addr().String(), "-tls1_3")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("s_client said:\n%s", out.String())
		}
	}()
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	srv := Server(c, &tls.Config{Certificates: []tls.Certificate{testCert(t)}})
	if err := srv.TLS().Handshake(); err != nil {
		t.Fatal(err)
	}
	fd := detach(t, c)
	srv.Detach(fd)
	s := &session{srv: srv, fd: fd}
	// s_client takes a command from a read of stdin by itself: the line
	// after it goes once the key update arrived.
	io.WriteString(stdin, "K\n")
	wait(t, fd, unix.POLLIN)
	srv.Readable(false)
	if n, err := srv.Read(make([]byte, 64)); n != 0 || err != ErrWouldBlock {
		t.Fatalf("read after the key update: %d, %v", n, err)
	}
	want := "after the update\n"
	io.WriteString(stdin, want)
	got, _ := s.readServer(t, len(want), false)
	if string(got) != want {
		t.Fatalf("read %q, want %q; s_client said:\n%s", got, want, out.String())
	}
	if _, err := srv.Write([]byte("answer with the new keys\n")); err != nil {
		t.Fatal(err)
	}
}

// TestAttach: a session on the loop, with records still buffered, goes
// back to a blocking connection (a tunnel leaving the loop): the buffered
// records come first, then plaintext both ways, then close_notify and FIN.
func TestAttach(t *testing.T) {
	for _, vers := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		t.Run(tls.VersionName(vers), func(t *testing.T) {
			s := newSession(t, vers)
			s.srv.Write([]byte("buffered,"))
			if s.srv.Buffered() == 0 {
				t.Fatal("a record went before Flush")
			}
			nfd, err := unix.Dup(s.fd)
			if err != nil {
				t.Fatal(err)
			}
			f := os.NewFile(uintptr(nfd), "")
			nc, err := net.FileConn(f)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			b, err := s.srv.Attach(nc.(*net.TCPConn))
			if err != nil {
				t.Fatal(err)
			}
			b.Write([]byte("blocking"))
			b.(*Blocking).CloseWrite()
			s.client.SetDeadline(time.Now().Add(5 * time.Second))
			got, err := io.ReadAll(s.client)
			if err != nil || string(got) != "buffered,blocking" {
				t.Fatalf("client read %q, %v", got, err)
			}
			s.client.Write([]byte("up"))
			b.SetDeadline(time.Now().Add(5 * time.Second))
			buf := make([]byte, 16)
			if n, err := b.Read(buf); err != nil || string(buf[:n]) != "up" {
				t.Fatalf("server read %q, %v", buf[:n], err)
			}
		})
	}
}

// TestMore: Read says when it has nothing more before the next edge (one
// record, read whole, the socket drained), and asks for another call
// while records it was given may wait.
func TestMore(t *testing.T) {
	for _, vers := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		t.Run(tls.VersionName(vers), func(t *testing.T) {
			s := newSession(t, vers)
			buf := make([]byte, 4096)
			for _, msgs := range [][]string{{"one"}, {"a", "b", "c"}, {"after"}} {
				s.cc.hold = true
				s.cc.held = nil
				for _, m := range msgs {
					s.client.Write([]byte(m))
				}
				s.cc.Conn.Write(s.cc.held)
				want := strings.Join(msgs, "")
				var got []byte
				for i := 0; i < 100 && len(got) < len(want); i++ {
					n, err := s.srv.Read(buf)
					got = append(got, buf[:n]...)
					if err == ErrWouldBlock {
						wait(t, s.fd, unix.POLLIN)
						s.srv.Readable(false)
					} else if err != nil {
						t.Fatal(err)
					}
				}
				if string(got) != want {
					t.Fatalf("read %q, want %q", got, want)
				}
				switch {
				case len(msgs) == 1 && s.srv.More():
					t.Fatalf("%q: More after the only record", want)
				case s.srv.More():
					// Several records: More may stay true; the next Read
					// then finds nothing.
					if n, err := s.srv.Read(buf); n != 0 || err != ErrWouldBlock {
						t.Fatalf("%q: read %d, %v after the last record", want, n, err)
					}
				}
			}
		})
	}
}

// ender is a handshake connection that wants to know how the session
// ended (tlsprof.WatchConn's part).
type ender struct {
	net.Conn
	ended int
}

func (e *ender) PeerEnded() { e.ended++ }

// TestPeerEnded: once on the loop, the socket's end of stream where a
// record was due (a FIN without close_notify) is told to the handshake's
// connection, once; close_notify is not.
func TestPeerEnded(t *testing.T) {
	for _, vers := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		for _, tc := range []struct {
			name  string
			clean bool
			want  int
		}{
			{"close_notify", true, 0},
			{"FIN without close_notify", false, 1},
		} {
			t.Run(tls.VersionName(vers)+"/"+tc.name, func(t *testing.T) {
				var e *ender
				s := newSessionOn(t, vers, "127.13.30.1", func(c net.Conn) net.Conn { e = &ender{Conn: c}; return e })
				s.client.Write([]byte("last"))
				if tc.clean {
					s.client.CloseWrite()
				}
				s.cc.Conn.(*net.TCPConn).CloseWrite()
				got, eof := s.readServer(t, 4, true)
				if string(got) != "last" || !eof {
					t.Fatalf("read %q, EOF %v", got, eof)
				}
				s.srv.Read(make([]byte, 16)) // read again after the end: told once
				if e.ended != tc.want {
					t.Fatalf("PeerEnded %d times, want %d", e.ended, tc.want)
				}
			})
		}
	}
}
