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

// TestShutdownTimeout: a client that resets while its request is still
// unanswered leaves its own server connection open for the answer owed
// on it, within ShutdownTimeout, instead of closing it under the member.
func TestShutdownTimeout(t *testing.T) {
	cases := []struct {
		name    string
		timeout time.Duration
		delay   time.Duration // before the member answers
		// openAtAnswer: the connection was still open when the member
		// answered.
		openAtAnswer bool
	}{
		{"off: closed with the client", 0, 2 * time.Second, false},
		{"the answer comes in time", 10 * time.Second, 300 * time.Millisecond, true},
		{"the timeout ends the wait", 200 * time.Millisecond, 2 * time.Second, false},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", fmt.Sprintf("127.24.2.%d:0", 10+i))
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			type outcome struct {
				openAtAnswer, eofAfter bool
				err                    error
			}
			res := make(chan outcome, 1)
			go func() {
				c, err := ln.Accept()
				if err != nil {
					res <- outcome{err: err}
					return
				}
				defer c.Close()
				r := bufio.NewReader(c)
				var hdr [4]byte
				if _, err := io.ReadFull(r, hdr[:]); err != nil {
					res <- outcome{err: err}
					return
				}
				req := make([]byte, binary.BigEndian.Uint32(hdr[:]))
				if _, err := io.ReadFull(r, req); err != nil {
					res <- outcome{err: err}
					return
				}
				// Still open when the answer is due? A read that times out
				// then says so; EOF or a reset before says the proxy closed
				// it.
				c.SetReadDeadline(time.Now().Add(tc.delay))
				_, err = r.ReadByte()
				var o outcome
				o.openAtAnswer = errors.Is(err, os.ErrDeadlineExceeded)
				if !o.openAtAnswer {
					res <- o
					return
				}
				c.SetReadDeadline(time.Time{})
				c.Write(append(hdr[:], req...))
				c.SetReadDeadline(time.Now().Add(5 * time.Second))
				_, err = r.ReadByte()
				o.eofAfter = err == io.EOF
				res <- o
			}()
			pool := newTestPool(&testServer{ln: ln, label: "M1"})
			vs := startVS(t, fmt.Sprintf("127.24.2.%d:0", 110+i), Config{Pick: pool.Pick, Dial: dialMember,
				Request: lengthFraming, ShutdownTimeout: tc.timeout})
			c, err := net.Dial("tcp", vs.addr())
			if err != nil {
				t.Fatal(err)
			}
			c.Write([]byte{0, 0, 0, 5, 'h', 'e', 'l', 'l', 'o'})
			// Wait for the request to reach the member, then leave.
			for i := 0; i < 200 && vs.e.MemberStats(1).Requests == 0; i++ {
				time.Sleep(10 * time.Millisecond)
			}
			if vs.e.MemberStats(1).Requests == 0 {
				t.Fatal("the request never reached the member")
			}
			c.(*net.TCPConn).SetLinger(0)
			c.Close()
			var o outcome
			select {
			case o = <-res:
			case <-time.After(15 * time.Second):
				t.Fatal("the member never finished")
			}
			if o.err != nil {
				t.Fatal(o.err)
			}
			if o.openAtAnswer != tc.openAtAnswer {
				t.Errorf("connection open when the member answered: %v, want %v", o.openAtAnswer, tc.openAtAnswer)
			}
			if o.openAtAnswer && !o.eofAfter {
				t.Errorf("after the answer owed, the connection was not closed in order")
			}
		})
	}
}
