package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestMessageClients(t *testing.T) {
	for _, tc := range []struct {
		name   string
		addr   string
		server []string
		client []string
		want   string
	}{
		{"length, pipelined, 64 KiB", "127.0.93.1:9100", []string{"-frame", "length"},
			[]string{"-frame", "length", "-size", "65536", "-window", "8", "-count", "20", "-summary", "-label", "A"},
			"A: 20 answers in order; S1 Response 20"},
		{"line echo, pipelined", "127.0.93.2:9100", []string{"-echo"},
			[]string{"-window", "4", "-count", "10", "-summary", "-label", "B"},
			"B: 10 answers in order; S1 Response 10"},
		{"length, synchronous lines", "127.0.93.3:9100", []string{"-frame", "length"},
			[]string{"-frame", "length", "-count", "2", "-interval", "1ms", "-label", "C"},
			"C message 2 -> S1 Response"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			log := &syncBuf{}
			done := make(chan error, 1)
			go func() {
				done <- serverMain(ctx, append([]string{"-listen", tc.addr, "-quiet"}, tc.server...), log, log)
			}()
			defer func() { cancel(); <-done }()
			for i := 0; i < 200 && !strings.Contains(log.String(), "listening"); i++ {
				time.Sleep(5 * time.Millisecond)
			}
			out := &syncBuf{}
			if err := clientMain(context.Background(), append([]string{"-connect", tc.addr}, tc.client...), nil, out, out); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if !strings.Contains(out.String(), tc.want) {
				t.Fatalf("output:\n%s\nwant %q", out, tc.want)
			}
		})
	}
}

func TestServerCrashAfter(t *testing.T) {
	log := &syncBuf{}
	done := make(chan error, 1)
	go func() {
		done <- serverMain(context.Background(), []string{"-listen", "127.0.93.4:9100", "-frame", "length", "-crash-after", "2"}, log, log)
	}()
	for i := 0; i < 200 && !strings.Contains(log.String(), "listening"); i++ {
		time.Sleep(5 * time.Millisecond)
	}
	out := &syncBuf{}
	err := clientMain(context.Background(), []string{"-connect", "127.0.93.4:9100", "-frame", "length", "-count", "5", "-interval", "1ms"}, nil, out, out)
	if err == nil || !strings.Contains(out.String(), "message 2 -> S1") || strings.Contains(out.String(), "message 3 ->") {
		t.Fatalf("client: %v\n%s", err, out)
	}
	select {
	case err := <-done:
		if !errors.Is(err, errCrashed) {
			t.Fatalf("server ended with %v", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("server did not crash")
	}
}

func TestLoad(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	log := &syncBuf{}
	done := make(chan error, 1)
	go func() {
		done <- serverMain(ctx, []string{"-listen", "127.0.93.5:9100", "-frame", "length", "-quiet"}, log, log)
	}()
	defer func() { cancel(); <-done }()
	for i := 0; i < 200 && !strings.Contains(log.String(), "listening"); i++ {
		time.Sleep(5 * time.Millisecond)
	}
	out := &syncBuf{}
	if err := loadMain(context.Background(), []string{"-connect", "127.0.93.5:9100", "-clients", "2", "-window", "4", "-duration", "200ms"}, out, out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "msg/s") {
		t.Fatalf("load: %s", out)
	}
}
