package main

import (
	"bytes"
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a member's log, written by its goroutine while the
// test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestDoHClient(t *testing.T) {
	ln, err := net.Listen("tcp", "127.40.0.1:0")
	if err != nil {
		t.Skip("no 127.40.0.1 on this host:", err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ln, err = net.Listen("tcp", "127.40.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String() // a port nothing listens on
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var member lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"dns", "-doh", "-listen", addr, "-record", "a.example.net. 60 IN A 192.0.2.1"}, nil, &member, &member)
	}()
	defer func() { cancel(); <-done }()
	for i := 0; i < 100 && !strings.Contains(member.String(), "answering"); i++ {
		time.Sleep(20 * time.Millisecond)
	}
	url := "http://" + addr + "/dns-query"
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-url", url, "a.example.net", "A", "b.example.net", "a"}, 0,
			";; a.example.net A: NOERROR, HTTP/2.0, new connection\n192.0.2.1\n;; b.example.net a: NXDOMAIN, HTTP/2.0, reused connection\n"},
		{[]string{"-post", "-http1", "-url", url, "a.example.net", "AAAA", "a.example.net", "A"}, 0,
			";; a.example.net AAAA: NOERROR, HTTP/1.1, new connection\n;; a.example.net A: NOERROR, HTTP/1.1, reused connection\n192.0.2.1\n"},
		{[]string{"-url", url, "a.example.net", "NOPE"}, 1, "tcpkit: NOPE: not a DNS type\n"},
		{[]string{"-url", url, "a.example.net"}, 1, "needs -url and NAME TYPE pairs"},
		{[]string{"a.example.net", "A"}, 1, "needs -url"},
		{[]string{"-url", "http://" + closed + "/dns-query", "a.example.net", "A"}, 1, "connection refused"},
	}
	for _, tt := range tests {
		var out, errb bytes.Buffer
		code := run(context.Background(), append([]string{"doh-client"}, tt.args...), nil, &out, &errb)
		got := out.String()
		if tt.code != 0 {
			got = errb.String()
		}
		if code != tt.code || (tt.code == 0 && got != tt.want) || (tt.code != 0 && !strings.Contains(got, tt.want)) {
			t.Errorf("doh-client %q: status %d, output %q; want %d, %q", tt.args, code, got, tt.code, tt.want)
		}
	}
}
