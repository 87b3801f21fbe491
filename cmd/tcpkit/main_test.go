package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuf is a goroutine-safe buffer for a running server's log.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startServer(t *testing.T, addr, label, frame string) *syncBuf {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	log := &syncBuf{}
	done := make(chan error, 1)
	go func() { done <- serverMain(ctx, []string{"-listen", addr, "-label", label, "-frame", frame}, log, log) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			t.Errorf("server did not stop")
		}
	})
	for i := 0; i < 200 && !strings.Contains(log.String(), "listening"); i++ {
		time.Sleep(5 * time.Millisecond)
	}
	return log
}

func TestClientServer(t *testing.T) {
	for _, tc := range []struct {
		name  string
		addr  string
		frame string
		args  []string
		stdin string
		want  []string
		conns int
	}{
		{"count on one connection", "127.21.0.1:9100", "line", []string{"-count", "3", "-interval", "1ms"}, "",
			[]string{"C1 message 1 -> S1 Response", "C1 message 3 -> S1 Response"}, 1},
		{"stdin with reconnect", "127.21.0.2:9100", "line", []string{"-stdin", "-reconnect"}, "alpha\nbeta\n",
			[]string{"alpha -> S1 Response", "beta -> S1 Response"}, 2},
		{"raw framing", "127.21.0.3:9100", "raw", []string{"-frame", "raw", "-count", "2", "-interval", "1ms"}, "",
			[]string{"C1 message 2 -> S1 Response"}, 1},
		{"silent first", "127.21.0.4:9100", "line", []string{"-delay", "20ms"}, "",
			[]string{"C1 message 1 -> S1 Response"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := startServer(t, tc.addr, "S1", tc.frame)
			var out bytes.Buffer
			args := append([]string{"-connect", tc.addr}, tc.args...)
			if err := clientMain(context.Background(), args, strings.NewReader(tc.stdin), &out, &out); err != nil {
				t.Fatalf("client: %v\n%s", err, out.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("client output lacks %q:\n%s", w, out.String())
				}
			}
			if got := strings.Count(out.String(), "connected "); got != tc.conns {
				t.Errorf("client opened %d connections, want %d", got, tc.conns)
			}
			for i := 0; i < 200 && !strings.Contains(log.String(), "received"); i++ {
				time.Sleep(5 * time.Millisecond)
			}
			if !strings.Contains(log.String(), "S1 received") || !strings.Contains(log.String(), "from 127.0.0.1:") {
				t.Errorf("server log lacks who sent what:\n%s", log.String())
			}
		})
	}
}

func TestUsageErrors(t *testing.T) {
	var out bytes.Buffer
	if err := serverMain(context.Background(), nil, &out, &out); err == nil {
		t.Error("server without -listen accepted")
	}
	if err := clientMain(context.Background(), nil, nil, &out, &out); err == nil {
		t.Error("client without -connect accepted")
	}
	if err := serverMain(context.Background(), []string{"-listen", "127.21.0.9:0", "-frame", "xml"}, &out, &out); err == nil {
		t.Error("bad -frame accepted")
	}
}
