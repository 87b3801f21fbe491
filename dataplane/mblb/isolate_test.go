package mblb

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// TestIsolateAbort: isolate-abort enabled (the default) keeps a reset to
// its side: a member's reset sends the request it held to another
// member, and a client's reset leaves its own server connection to drain
// within the shutdown timeout. Disabled (PropagateAbort), a member's
// reset resets its client, and a client's reset resets its own server
// connection at once.
func TestIsolateAbort(t *testing.T) {
	cases := []struct {
		name      string
		propagate bool
		memberRST bool // else the client resets
		// memberRST: the client is reset (else M2 answers); client
		// reset: the member's connection was still open when it was
		// ready to answer.
		want bool
	}{
		{"member reset, isolated: another member answers", false, true, false},
		{"member reset, passed on: the client is reset", true, true, true},
		{"client reset, isolated: the member's connection drains", false, false, true},
		{"client reset, passed on: the member's connection is reset", true, false, false},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.memberRST {
				m1 := startServer(t, fmt.Sprintf("127.33.4.%d:0", 10+i), "M1", wireLength)
				m2 := startServer(t, fmt.Sprintf("127.33.4.%d:0", 10+i), "M2", wireLength)
				m1.mute.Store(true)
				cfg := baseConfig(newTestPool(m1, m2), nil)
				cfg.Request = lengthFraming
				cfg.PropagateAbort = tc.propagate
				vs := startVS(t, fmt.Sprintf("127.33.4.%d:0", 110+i), cfg)
				c := dialVS(t, vs, "c1", wireLength)
				if err := c.send([]byte("c1-0")); err != nil {
					t.Fatal(err)
				}
				waitFor(t, "the request on M1", func() bool { return m1.msgs.Load() == 1 })
				m1.kill() // every connection reset
				b, err := c.recv()
				switch {
				case tc.want && err == nil:
					t.Fatalf("answer %q, want a reset", b)
				case tc.want && !isReset(err):
					t.Fatalf("error %v, want a reset", err)
				case !tc.want && (err != nil || string(b) != "M2|c1-0"):
					t.Fatalf("answer %q, %v; want M2's", b, err)
				}
				return
			}
			ln, err := net.Listen("tcp", fmt.Sprintf("127.33.4.%d:0", 10+i))
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			open := make(chan bool, 1)
			go func() {
				c, err := ln.Accept()
				if err != nil {
					open <- false
					return
				}
				defer c.Close()
				r := bufio.NewReader(c)
				var hdr [4]byte
				if _, err := io.ReadFull(r, hdr[:]); err != nil {
					open <- false
					return
				}
				if _, err := io.ReadFull(r, make([]byte, binary.BigEndian.Uint32(hdr[:]))); err != nil {
					open <- false
					return
				}
				// Still open a while later? A read that times out says so;
				// EOF or a reset says the proxy closed it.
				c.SetReadDeadline(time.Now().Add(time.Second))
				_, err = r.ReadByte()
				open <- errors.Is(err, os.ErrDeadlineExceeded)
			}()
			pool := newTestPool(&testServer{ln: ln, label: "M1"})
			cfg := Config{Pick: pool.Pick, Dial: dialMember, Request: lengthFraming,
				ShutdownTimeout: 10 * time.Second, PropagateAbort: tc.propagate}
			vs := startVS(t, fmt.Sprintf("127.33.4.%d:0", 110+i), cfg)
			c, err := net.Dial("tcp", vs.addr())
			if err != nil {
				t.Fatal(err)
			}
			c.Write([]byte{0, 0, 0, 5, 'h', 'e', 'l', 'l', 'o'})
			waitFor(t, "the request on the member", func() bool { return vs.e.MemberStats(1).Requests == 1 })
			c.(*net.TCPConn).SetLinger(0)
			c.Close()
			select {
			case got := <-open:
				if got != tc.want {
					t.Errorf("member's connection open after the client's reset: %v, want %v", got, tc.want)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the member never finished")
			}
		})
	}
}
