//go:build linux

package dataplane

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"io"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// loopsBusy reports whether the event loops serve any client: a TLS flow
// of a client-ssl standard virtual is theirs once handshaken.
func loopsBusy(p *Plane) bool {
	for _, n := range p.l4.LoopLoads() {
		if n > 0 {
			return true
		}
	}
	return false
}

// TestTLSLoopBulk pushes several MiB each way through a client-ssl
// standard virtual (its flows run on the event loops) while each reader
// stalls, so that records wait for the client's socket and plaintext for
// the member's; close_notify then ends the client's direction and the
// member's FIN comes back as close_notify and FIN. TLS 1.2 and 1.3.
func TestTLSLoopBulk(t *testing.T) {
	const size = 3<<20 + 77
	payload := make([]byte, size)
	for i := range payload {
		payload[i] = byte(i * 7)
	}
	want := sha256.Sum256(payload)
	cert, key, roots := testCert(t, "app.example")
	for i, vers := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		t.Run(tls.VersionName(vers), func(t *testing.T) {
			member := []string{"127.41.1.2:9000", "127.41.2.2:9000"}[i]
			vsAddr := []string{"127.41.1.1:443", "127.41.2.1:443"}[i]
			ln, err := net.Listen("tcp", member)
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			got := make(chan [32]byte, 1)
			go func() {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				defer c.Close()
				go func() { c.Write(payload); c.(*net.TCPConn).CloseWrite() }()
				time.Sleep(200 * time.Millisecond) // let the upload back up
				h := sha256.New()
				c.SetReadDeadline(time.Now().Add(10 * time.Second))
				io.Copy(h, c)
				var sum [32]byte
				copy(sum[:], h.Sum(nil))
				got <- sum
			}()
			p, _ := newPlane(t)
			cfg := basic(vsAddr, member)
			cfg.Virtuals["/Common/vs"].TLS = clientSSL(t, cert, key)
			mustApply(t, p, cfg)
			c, err := tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp", vsAddr,
				&tls.Config{ServerName: "app.example", RootCAs: roots, MinVersion: vers, MaxVersion: vers})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			eventually(t, "the flow on a loop", func() bool { return loopsBusy(p) })
			go func() { c.Write(payload); c.CloseWrite() }()
			time.Sleep(200 * time.Millisecond) // let the download back up
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			down, err := io.ReadAll(c) // ends at close_notify
			if err != nil || !bytes.Equal(down, payload) {
				t.Fatalf("download: %d bytes (want %d), equal %v, %v", len(down), size, bytes.Equal(down, payload), err)
			}
			select {
			case sum := <-got:
				if sum != want {
					t.Fatal("upload corrupted")
				}
			case <-time.After(10 * time.Second):
				t.Fatal("upload did not finish")
			}
			eventually(t, "table empty", func() bool { return p.ConnectionCount() == 0 })
			eventually(t, "loops idle", func() bool { return !loopsBusy(p) })
			eventually(t, "plaintext counted", func() bool {
				v, _ := p.Virtual("/Common/vs")
				return v.ClientSide.BitsOut == size*8 && v.ClientSide.BitsIn == size*8
			})
		})
	}
}

// TestTLSLoopDelete: delete sys connection ends a client-ssl flow during
// its handshake (a client that never sends its hello) and once it runs
// on its loop.
func TestTLSLoopDelete(t *testing.T) {
	cert, key, roots := testCert(t, "app.example")
	startServer(t, "127.41.3.2:9000", "S1")
	p, _ := newPlane(t)
	cfg := basic("127.41.3.1:443", "127.41.3.2:9000")
	cfg.Virtuals["/Common/vs"].TLS = clientSSL(t, cert, key)
	mustApply(t, p, cfg)

	raw := dialVS(t, "127.41.3.1:443") // no handshake
	eventually(t, "the handshaking flow listed", func() bool { return p.ConnectionCount() == 1 })
	if n := p.DeleteConnections(ConnFilter{}); n != 1 {
		t.Fatalf("deleted %d flows, want 1", n)
	}
	raw.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := raw.c.Read(make([]byte, 64)); err == nil || isTimeout(err) {
		t.Fatalf("a deleted handshaking flow: read %v, want its end", err)
	}
	eventually(t, "table empty", func() bool { return p.ConnectionCount() == 0 })

	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp", "127.41.3.1:443", &tls.Config{ServerName: "app.example", RootCAs: roots})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(c)
	io.WriteString(c, "hello\n")
	if line, err := r.ReadString('\n'); err != nil || line != "S1 Response\n" {
		t.Fatalf("answer: %q %v", line, err)
	}
	eventually(t, "one flow", func() bool { return p.ConnectionCount() == 1 })
	if n := p.DeleteConnections(ConnFilter{}); n != 1 {
		t.Fatalf("deleted %d flows, want 1", n)
	}
	if _, err := r.ReadByte(); err == nil || isTimeout(err) {
		t.Fatalf("a deleted flow: read %v, want its end", err)
	}
	eventually(t, "table empty", func() bool { return p.ConnectionCount() == 0 })
	eventually(t, "loops idle", func() bool { return !loopsBusy(p) })
}

// TestTLSLoopOpenSSL: openssl s_client through a client-ssl standard
// virtual, with a TLS 1.3 key update (s_client's K command asks for one
// back) between two lines, each answered by the member.
func TestTLSLoopOpenSSL(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("openssl is not installed")
	}
	cert, key, _ := testCert(t, "app.example")
	startServer(t, "127.41.4.2:9000", "S1")
	p, _ := newPlane(t)
	cfg := basic("127.41.4.1:443", "127.41.4.2:9000")
	cfg.Virtuals["/Common/vs"].TLS = clientSSL(t, cert, key)
	mustApply(t, p, cfg)

	cmd := exec.Command("openssl", "s_client", "-connect", "127.41.4.1:443", "-servername", "app.example", "-tls1_3")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, pw := io.Pipe() // s_client says KEYUPDATE on stderr
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait(); pw.Close() }()
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	// await reads s_client's output until a line containing s.
	await := func(s string) {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("s_client ended before %q", s)
				}
				if strings.Contains(l, s) {
					return
				}
			case <-deadline:
				t.Fatalf("no %q from s_client", s)
			}
		}
	}
	io.WriteString(stdin, "first\n")
	await("S1 Response")
	io.WriteString(stdin, "K\n") // a command is one read of stdin by itself
	await("KEYUPDATE")
	io.WriteString(stdin, "second\n")
	await("S1 Response")
}
