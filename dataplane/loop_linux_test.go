//go:build linux

package dataplane

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/evloop"
)

// TestLoopBulkBothWaysWithStalls pushes several MiB each way through a loop
// flow while each reader stalls for a moment, so that the buffer and
// splice paths both meet a full destination and resume from its
// writability edge; a half-close then ends each direction.
func TestLoopBulkBothWaysWithStalls(t *testing.T) {
	t.Parallel()
	const size = 6<<20 + 77
	payload, want := bulkPayload(size)
	got := bulkMember(t, "127.20.30.2:9000", payload)

	p, _ := newPlane(t)
	mustApply(t, p, basic("127.20.30.1:8000", "127.20.30.2:9000"))
	c := dialVS(t, "127.20.30.1:8000")
	go func() { c.c.Write(payload); c.c.CloseWrite() }()
	time.Sleep(200 * time.Millisecond) // let the download back up
	c.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	down, err := io.ReadAll(c.c)
	if err != nil || len(down) != size || !bytes.Equal(down, payload) {
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
	eventually(t, "counters", func() bool {
		v, _ := p.Virtual("/Common/vs")
		return v.ClientSide.BitsOut == size*8 && v.ClientSide.BitsIn == size*8
	})
}

// TestLoopSmallWritesKeepOrderAndFIN: many small writes each way, sent
// without waiting by sixteen clients at once, arrive whole and in order,
// and each side's FIN follows its last bytes, whether the loops leave a
// short read's bytes for the end of their batch (sending them together:
// with sixteen flows the loops are busy enough to) or write them at once.
func TestLoopSmallWritesKeepOrderAndFIN(t *testing.T) {
	for i, batching := range []bool{true, false} {
		t.Run(fmt.Sprintf("batching=%v", batching), func(t *testing.T) {
			evloop.SetSendBatching(batching)
			defer evloop.SetSendBatching(true)
			member := fmt.Sprintf("127.20.32.%d:9000", 2+i)
			serveConns(t, member, func(c net.Conn) {
				io.Copy(c, c) // echo until the client's FIN
				c.(*net.TCPConn).CloseWrite()
			})
			p, _ := newPlane(t)
			vs := fmt.Sprintf("127.20.32.%d:8000", 10+i)
			mustApply(t, p, basic(vs, member))
			var want bytes.Buffer
			for k := 0; k < 300; k++ {
				fmt.Fprintf(&want, "message %d;", k)
			}
			batched := evloop.BatchedSends()
			const clients = 16
			errs := make(chan error, clients)
			for k := 0; k < clients; k++ {
				c := dialVS(t, vs)
				go func() {
					b := want.Bytes()
					for len(b) > 0 { // about a dozen bytes per write
						n := min(len(b), 12)
						c.c.Write(b[:n])
						b = b[n:]
					}
					c.c.CloseWrite()
				}()
				go func() {
					c.c.SetReadDeadline(time.Now().Add(10 * time.Second))
					got, err := io.ReadAll(c.c)
					if err == nil && !bytes.Equal(got, want.Bytes()) {
						err = fmt.Errorf("read %d bytes (want %d), not the bytes sent", len(got), want.Len())
					}
					c.c.Close()
					errs <- err
				}()
			}
			for k := 0; k < clients; k++ {
				if err := <-errs; err != nil {
					t.Fatalf("a client: %v", err)
				}
			}
			if batching && evloop.BatchedSends() == batched {
				t.Error("sixteen busy flows sent no writes together")
			}
			eventually(t, "table empty", func() bool { return p.ConnectionCount() == 0 })
		})
	}
}

// TestLoopServerSpeaksFirst: a member that greets before the client sends
// anything (SMTP-like) reaches the client without waiting for it.
func TestLoopServerSpeaksFirst(t *testing.T) {
	t.Parallel()
	serveConns(t, "127.20.31.2:9000", func(c net.Conn) {
		c.Write([]byte("220 ready\r\n"))
		io.Copy(io.Discard, c)
	})
	p, _ := newPlane(t)
	mustApply(t, p, basic("127.20.31.1:8000", "127.20.31.2:9000"))
	for i := 0; i < 20; i++ {
		c := dialVS(t, "127.20.31.1:8000")
		c.c.SetReadDeadline(time.Now().Add(3 * time.Second))
		b := make([]byte, 11)
		if _, err := io.ReadFull(c.c, b); err != nil || string(b) != "220 ready\r\n" {
			t.Fatalf("greeting %d: %q, %v", i, b, err)
		}
		c.c.Close()
	}
}

// TestLoopDeleteConnection: delete sys connection reaches a loop flow from
// another goroutine and resets both sides.
func TestLoopDeleteConnection(t *testing.T) {
	t.Parallel()
	startServer(t, "127.20.32.2:9000", "S1")
	p, _ := newPlane(t)
	mustApply(t, p, basic("127.20.32.1:8000", "127.20.32.2:9000"))
	c := dialVS(t, "127.20.32.1:8000")
	c.c.Write([]byte("hello\n"))
	c.c.SetReadDeadline(time.Now().Add(3 * time.Second))
	if _, err := c.c.Read(make([]byte, 64)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "one flow", func() bool { return p.ConnectionCount() == 1 })
	if n := p.DeleteConnections(ConnFilter{}); n != 1 {
		t.Fatalf("deleted %d flows, want 1", n)
	}
	if _, err := c.c.Read(make([]byte, 64)); err == nil {
		t.Fatal("the client still reads after its flow was deleted")
	}
	eventually(t, "table empty", func() bool { return p.ConnectionCount() == 0 })
}

// bulkPayload is size bytes of a pattern, and their SHA-256.
func bulkPayload(size int) ([]byte, [32]byte) {
	payload := make([]byte, size)
	for i := range payload {
		payload[i] = byte(i * 7)
	}
	return payload, sha256.Sum256(payload)
}

// bulkMember accepts one connection on addr, sends payload and its FIN
// while not reading for 200 ms (so the upload backs up), then reads to
// the end and sends the SHA-256 of what it read.
func bulkMember(t *testing.T, addr string, payload []byte) <-chan [32]byte {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
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
	return got
}
