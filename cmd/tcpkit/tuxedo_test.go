package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

func startTuxedo(t *testing.T, args ...string) *syncBuf {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	log := &syncBuf{}
	done := make(chan error, 1)
	go func() { done <- tuxedoMain(ctx, args, log, log) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("tuxedo: %v", err)
			}
		case <-time.After(3 * time.Second):
			t.Errorf("tuxedo server did not stop")
		}
	})
	for i := 0; i < 400 && !strings.Contains(log.String(), "listening"); i++ {
		time.Sleep(5 * time.Millisecond)
	}
	return log
}

func TestTuxedo(t *testing.T) {
	for _, tc := range []struct {
		name   string
		server []string
		client []string
		want   []string
	}{
		{"own address", []string{"--wsl", "127.0.73.1:6789", "--wsh-range", "10000-10002", "--label", "S1"},
			[]string{"--wsl", "127.0.73.1:6789", "--count", "4"},
			[]string{"C1-1: WSL 127.0.73.1:6789 answered WSH 127.0.73.1:10000", "C1-1: WSH 127.0.73.1:10000 answered S1 Response",
				"C1-3: WSH 127.0.73.1:10002 answered S1 Response", "C1-4: WSH 127.0.73.1:10000 answered S1 Response"}},
		{"announced address", []string{"--wsl", "127.0.73.2:6789", "--wsh-range", "10500-10500", "--label", "S2", "--announce", "127.0.73.2"},
			[]string{"--wsl", "127.0.73.2:6789", "--hold", "--label", "X"},
			[]string{"X: WSL 127.0.73.2:6789 answered WSH 127.0.73.2:10500", "X: WSH 127.0.73.2:10500 answered S2 Response"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := startTuxedo(t, tc.server...)
			var out bytes.Buffer
			if err := tuxedoClientMain(context.Background(), tc.client, &out, &out); err != nil {
				t.Fatalf("client: %v\n%s", err, out.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("client output lacks %q:\n%s", w, out.String())
				}
			}
			if !strings.Contains(log.String(), "WSL \"CONNECT") {
				t.Errorf("server log:\n%s", log.String())
			}
		})
	}
}

func TestTuxedoUsage(t *testing.T) {
	var out bytes.Buffer
	for _, args := range [][]string{
		nil,
		{"--wsl", "127.0.73.9:6789"},
		{"--wsl", "127.0.73.9:6789", "--wsh-range", "10499-10000"},
		{"--wsl", "nowhere", "--wsh-range", "10000-10001"},
		{"--wsl", "127.0.73.9:6789", "--wsh-range", "10000-10001", "--announce", "vip"},
	} {
		if err := tuxedoMain(context.Background(), args, &out, &out); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
	if err := tuxedoClientMain(context.Background(), nil, &out, &out); err == nil {
		t.Error("client without --wsl accepted")
	}
}
