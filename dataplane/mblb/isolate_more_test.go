package mblb

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// closeConns closes every connection the member holds in order (a FIN),
// as a member ending its sessions would.
func (s *testServer) closeConns() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		c.Close()
	}
}

// TestIsolateServer: isolate-server enabled (the default) keeps a
// member's FIN to the server side: the client stays and is served.
// Disabled (PropagateServerClose), the member's FIN closes, in order,
// the connection's owner or the clients whose requests were on it
// (shared), after the answers they are owed, also those from other
// members and those sent again.
func TestIsolateServer(t *testing.T) {
	cases := []struct {
		name      string
		propagate bool
		shared    bool // OneConnect
		// owedM2: the client is waiting for a slow M2 when M1 closes.
		owedM2 bool
		// muteM1: M1 holds the client's request when it closes (sent
		// again to M2).
		muteM1 bool
	}{
		{"own connection, isolated: the client stays", false, false, false, false},
		{"own connection, passed on: the client is closed", true, false, false, false},
		{"own connection, passed on after another member's answer", true, false, true, false},
		{"shared, isolated: the request goes again, the client stays", false, true, false, true},
		{"shared, passed on: the request goes again, then the client is closed", true, true, false, true},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each case its own addresses, members and engine
			m1 := startServer(t, fmt.Sprintf("127.70.1.%d:0", 10+i), "M1", wireLength)
			m2 := startServer(t, fmt.Sprintf("127.70.1.%d:0", 10+i), "M2", wireLength)
			cfg := baseConfig(newTestPool(m1, m2), nil)
			cfg.Request = lengthFraming
			cfg.ShutdownTimeout = 20 * time.Second
			cfg.PropagateServerClose = tc.propagate
			if tc.shared {
				cfg.OneConnect = &OneConnect{MaxSize: 1}
			}
			vs := startVS(t, fmt.Sprintf("127.70.1.%d:0", 110+i), cfg)
			c := dialVS(t, vs, "c1", wireLength)
			want := []string{}
			if tc.muteM1 {
				m1.mute.Store(true)
				if err := c.send([]byte("c1-0")); err != nil {
					t.Fatal(err)
				}
				waitFor(t, "the request on M1", func() bool { return m1.msgs.Load() == 1 })
				want = append(want, "M2|c1-0") // sent again
			} else {
				if got, err := c.call("c1-0"); err != nil || got != "M1|c1-0" {
					t.Fatalf("first call: %q, %v", got, err)
				}
			}
			if tc.owedM2 {
				m2.delay.Store(int64(300 * time.Millisecond))
				if err := c.send([]byte("c1-1")); err != nil {
					t.Fatal(err)
				}
				waitFor(t, "the request on M2", func() bool { return m2.msgs.Load() == 1 })
				want = append(want, "M2|c1-1")
			}
			m1.closeConns()
			m1.mute.Store(false)
			for _, w := range want {
				b, err := c.recv()
				if err != nil || string(b) != w {
					t.Fatalf("answer %q, %v; want %q", b, err, w)
				}
			}
			if !tc.propagate {
				// Still served: the next message opens or takes another
				// connection.
				if got, err := c.call("c1-9"); err != nil || got == "" {
					t.Fatalf("after the member's close: %q, %v; want an answer", got, err)
				}
				return
			}
			b, err := c.recv()
			if !errors.Is(err, io.EOF) {
				t.Fatalf("after the member's close: %q, %v; want the client closed in order (EOF)", b, err)
			}
		})
	}
}

// TestMemberEndCrossesRequest: a member ends each connection in order
// right after its answer, and the client's next request may cross that
// FIN (the member's kernel then resets it: the member never took it).
// With isolate-server enabled the client never pays for it: every
// request is answered, on another connection if need be (the pool has
// no other member, so nothing may exclude this one). Disabled, the
// member's end reaches the client in order: EOF, never a reset.
func TestMemberEndCrossesRequest(t *testing.T) {
	for i, propagate := range []bool{false, true} {
		t.Run(fmt.Sprintf("propagate=%v", propagate), func(t *testing.T) {
			m1 := startServer(t, fmt.Sprintf("127.70.6.%d:0", 10+i), "M1", wireLength)
			m1.hangUpAfter.Store(1)
			cfg := baseConfig(newTestPool(m1), nil)
			cfg.Request = lengthFraming
			cfg.ShutdownTimeout = 20 * time.Second
			cfg.PropagateServerClose = propagate
			vs := startVS(t, fmt.Sprintf("127.70.6.%d:0", 110+i), cfg)
			for round := range 20 { // bounded: each round races the member's FIN once
				c := dialVS(t, vs, "c1", wireLength)
				for k := range 3 {
					got, err := c.call(fmt.Sprintf("c1-%d-%d", round, k))
					if !propagate {
						if want := fmt.Sprintf("M1|c1-%d-%d", round, k); err != nil || got != want {
							t.Fatalf("round %d call %d: %q, %v; want %q", round, k, got, err, want)
						}
						continue
					}
					if k == 0 && (err != nil || got == "") {
						t.Fatalf("round %d: first call %q, %v", round, got, err)
					}
					if err != nil {
						if !errors.Is(err, io.EOF) {
							t.Fatalf("round %d call %d: %v; want the client closed in order (EOF)", round, k, err)
						}
						break
					}
				}
				c.c.Close()
			}
		})
	}
}

// TestIsolateClient: isolate-client disabled (the default) passes a
// client's orderly close on to its own member connection, which closes
// with it; enabled (KeepOnClientClose), the member's connection stays
// open until it expires idle.
func TestIsolateClient(t *testing.T) {
	for i, keep := range []bool{false, true} {
		t.Run(fmt.Sprintf("keep=%v", keep), func(t *testing.T) {
			t.Parallel() // each case its own addresses, member and engine
			ln, err := net.Listen("tcp", fmt.Sprintf("127.70.2.%d:0", 10+i))
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			// The member answers one request, then reports whether its
			// connection was still open a second after, and whether it
			// was closed (EOF) within the idle timeout's reach.
			type seen struct{ openAfter, closedLater bool }
			got := make(chan seen, 1)
			go func() {
				var s seen
				defer func() { got <- s }()
				c, err := ln.Accept()
				if err != nil {
					return
				}
				defer c.Close()
				r := bufio.NewReader(c)
				var hdr [4]byte
				if _, err := io.ReadFull(r, hdr[:]); err != nil {
					return
				}
				req := make([]byte, binary.BigEndian.Uint32(hdr[:]))
				if _, err := io.ReadFull(r, req); err != nil {
					return
				}
				c.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(req))), req...))
				c.SetReadDeadline(time.Now().Add(time.Second))
				_, err = r.ReadByte()
				s.openAfter = errors.Is(err, os.ErrDeadlineExceeded)
				c.SetReadDeadline(time.Now().Add(15 * time.Second))
				_, err = r.ReadByte()
				s.closedLater = err != nil && !errors.Is(err, os.ErrDeadlineExceeded)
			}()
			pool := newTestPool(&testServer{ln: ln, label: "M1"})
			cfg := Config{Pick: pool.Pick, Dial: dialMember, Request: lengthFraming,
				IdleTimeout: 2 * time.Second, KeepOnClientClose: keep}
			vs := startVS(t, fmt.Sprintf("127.70.2.%d:0", 110+i), cfg)
			c := dialVS(t, vs, "c1", wireLength)
			if got, err := c.call("hello"); err != nil || got != "hello" {
				t.Fatalf("call: %q, %v", got, err)
			}
			c.c.(*net.TCPConn).CloseWrite()
			if _, err := c.recv(); !errors.Is(err, io.EOF) {
				t.Fatalf("client after its FIN: %v, want EOF", err)
			}
			select {
			case s := <-got:
				if s.openAfter != keep {
					t.Errorf("member's connection open a second after the client's FIN: %v, want %v", s.openAfter, keep)
				}
				if keep && !s.closedLater {
					t.Errorf("kept member connection never expired idle")
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the member never finished")
			}
		})
	}
}

// TestIsolateExpire: isolate-expire enabled (the default) lets each side
// expire alone: an idle client's own connection still owing an answer
// drains within the shutdown timeout, and a client's idle connection to
// one member closes while the client goes on with another. Disabled
// (PropagateExpire), the client's expiry closes its connection at once,
// and the connection's expiry ends the client.
func TestIsolateExpire(t *testing.T) {
	t.Run("client expires", func(t *testing.T) {
		for i, propagate := range []bool{false, true} {
			t.Run(fmt.Sprintf("propagate=%v", propagate), func(t *testing.T) {
				t.Parallel() // each case its own addresses, member and engine
				m1 := startServer(t, fmt.Sprintf("127.70.3.%d:0", 10+i), "M1", wireLength)
				m1.mute.Store(true)
				cfg := baseConfig(newTestPool(m1), nil)
				cfg.Request = lengthFraming
				cfg.IdleTimeout = time.Second
				cfg.ShutdownTimeout = 30 * time.Second
				cfg.PropagateExpire = propagate
				vs := startVS(t, fmt.Sprintf("127.70.3.%d:0", 110+i), cfg)
				c := dialVS(t, vs, "c1", wireLength)
				if err := c.send([]byte("c1-0")); err != nil {
					t.Fatal(err)
				}
				waitFor(t, "the request on M1", func() bool { return m1.msgs.Load() == 1 })
				if _, err := c.recv(); err == nil {
					t.Fatal("an answer from a mute member")
				}
				// The client has expired (its read failed): is its member
				// connection, which owes an answer, still open?
				if propagate {
					waitFor(t, "the member connection closed", func() bool { return m1.openConns() == 0 })
					return
				}
				time.Sleep(500 * time.Millisecond)
				if n := m1.openConns(); n != 1 {
					t.Fatalf("member connections open while draining: %d, want 1", n)
				}
			})
		}
	})
	t.Run("member connection expires", func(t *testing.T) {
		for i, propagate := range []bool{false, true} {
			t.Run(fmt.Sprintf("propagate=%v", propagate), func(t *testing.T) {
				t.Parallel() // each case its own addresses, member and engine
				m1 := startServer(t, fmt.Sprintf("127.70.3.%d:0", 20+i), "M1", wireLength)
				m2 := startServer(t, fmt.Sprintf("127.70.3.%d:0", 20+i), "M2", wireLength)
				pool := newTestPool(m1, m2)
				cfg := baseConfig(pool, nil)
				// Messages naming M1 go there, the others to M2.
				cfg.Pick = func(ch Choice) (Member, error) {
					ch.Target.Member = m2.addr()
					if bytes.Contains(ch.Msg, []byte("to-m1")) {
						ch.Target.Member = m1.addr()
					}
					return pool.Pick(ch)
				}
				cfg.Request = lengthFraming
				cfg.IdleTimeout = time.Second
				cfg.PropagateExpire = propagate
				vs := startVS(t, fmt.Sprintf("127.70.3.%d:0", 120+i), cfg)
				c := dialVS(t, vs, "c1", wireLength)
				if got, err := c.call("to-m1"); err != nil || got != "M1|to-m1" {
					t.Fatalf("call M1: %q, %v", got, err)
				}
				// Keep the client busy with M2 while its M1 connection idles.
				var failed error
				waitFor(t, "M1's connection expired", func() bool {
					if failed == nil {
						if got, err := c.call("to-m2"); err != nil {
							failed = err
						} else if got != "M2|to-m2" {
							t.Fatalf("call M2: %q", got)
						}
					}
					return m1.openConns() == 0 && (failed != nil || !propagate)
				})
				switch {
				case propagate && failed == nil:
					t.Fatal("the client outlived its connection's expiry")
				case !propagate && failed != nil:
					t.Fatalf("the client ended with its connection's expiry: %v", failed)
				case !propagate:
					if got, err := c.call("to-m1"); err != nil || got != "M1|to-m1" {
						t.Fatalf("call M1 again: %q, %v", got, err)
					}
				}
			})
		}
	})
}
