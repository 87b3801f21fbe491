//go:build linux

package mblb

import (
	"io"
	"net"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestLoopWriteBeyondIovMax: a client write on a loop of more responses
// than one writev(2) takes (IOV_MAX) goes on until the socket is full or
// all is written. Stopping after the first call, with room left, waited
// for a writability edge that never comes, and the client's last answers
// were never written.
func TestLoopWriteBeyondIovMax(t *testing.T) {
	ln, err := net.Listen("tcp", "127.24.1.30:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, tc := range []struct {
		name    string
		buffers int
	}{
		{"under IOV_MAX", maxIov / 2},
		{"at IOV_MAX", maxIov},
		{"over IOV_MAX", 2*maxIov + 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			peer, err := ln.Accept()
			if err != nil {
				t.Fatal(err)
			}
			defer peer.Close()
			const size = 64 // all of it fits in the socket's buffers
			want := tc.buffers * size
			got := make(chan int, 1)
			go func() {
				peer.SetReadDeadline(time.Now().Add(30 * time.Second))
				n, _ := io.ReadFull(peer, make([]byte, want))
				got <- n
			}()
			f, err := c.(*net.TCPConn).File()
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			fd := int(f.Fd())
			unix.SetNonblock(fd, true)
			s := &ClientConn{lp: &sessLoop{fd: fd}}
			bufs := make(net.Buffers, tc.buffers)
			for i := range bufs {
				bufs[i] = make([]byte, size)
			}
			n, rest, err := s.tryWrite(bufs)
			if err != nil || len(rest) != 0 || n != int64(want) {
				t.Fatalf("wrote %d of %d bytes, %d buffers left, error %v", n, want, len(rest), err)
			}
			if k := <-got; k != want {
				t.Fatalf("the peer read %d of %d bytes", k, want)
			}
		})
	}
}
