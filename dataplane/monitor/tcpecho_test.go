package monitor

import (
	"io"
	"net"
	"net/netip"
	"testing"
	"time"
)

// echoServer serves up to 8 connections on addr (loopback) with answer,
// which the tcp-echo and scripted tests script.
func echoServer(t *testing.T, addr string, answer func(c net.Conn)) (netip.AddrPort, error) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return netip.AddrPort{}, err
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for i := 0; i < 8; i++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				answer(c)
			}()
		}
	}()
	return netip.MustParseAddrPort(ln.Addr().String()), nil
}

func TestProbeTCPEcho(t *testing.T) {
	echo := func(c net.Conn) { io.CopyN(c, c, 1<<10) }
	for _, c := range []struct {
		name     string
		answer   func(net.Conn)
		up       bool
		errSub   string
		errIs    error
		deadline time.Duration
	}{
		{name: "echoed", answer: echo, up: true},
		{name: "echoed a byte at a time", answer: func(c net.Conn) {
			b := make([]byte, 1)
			for i := 0; i < 64; i++ {
				if _, err := c.Read(b); err != nil {
					return
				}
				c.Write(b)
			}
		}, up: true},
		{name: "a banner instead", answer: func(c net.Conn) { c.Write([]byte("220 mail.example ESMTP\r\n")) }, errIs: ErrNoEcho},
		{name: "closed without an echo", answer: func(c net.Conn) { io.ReadFull(c, make([]byte, 34)) },
			errSub: "Connection closed after 0 of the 34 bytes sent came back"},
		{name: "half an echo", answer: func(c net.Conn) {
			b := make([]byte, 34)
			io.ReadFull(c, b)
			c.Write(b[:10])
		}, errSub: "Connection closed after 10 of the 34 bytes"},
		{name: "silent", answer: func(c net.Conn) { c.Read(make([]byte, 64)); time.Sleep(time.Second) }, errIs: ErrNoResponse, deadline: 300 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			target, err := echoServer(t, "127.0.0.1:0", c.answer)
			if err != nil {
				t.Fatal(err)
			}
			d := c.deadline
			if d == 0 {
				d = 5 * time.Second
			}
			// The member's own port is not where the echo is asked for.
			o, err := probe(t, &Spec{Type: TCPEcho, EchoPort: target.Port()}, netip.AddrPortFrom(target.Addr(), 1), d)
			wantVerdict(t, o, err, c.up, c.errSub, c.errIs)
		})
	}
	t.Run("refused", func(t *testing.T) {
		target := closedPort(t, "127.0.0.1:0")
		o, err := probe(t, &Spec{Type: TCPEcho, EchoPort: target.Port()}, target, 5*time.Second)
		wantVerdict(t, o, err, false, "Unable to connect; connect: connection refused", nil)
	})
	t.Run("port 7 by default", func(t *testing.T) {
		target, err := echoServer(t, "127.0.83.7:7", echo)
		if err != nil {
			t.Skipf("cannot listen on the echo port here: %v", err)
		}
		o, err := probe(t, &Spec{Type: TCPEcho}, netip.AddrPortFrom(target.Addr(), 80), 5*time.Second)
		wantVerdict(t, o, err, true, "", nil)
	})
}
