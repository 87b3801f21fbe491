package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/openltm/openltm/shell"
)

func TestEmbeddedDaemonWhenNoneAnswers(t *testing.T) {
	dir, err := os.MkdirTemp("", "emb")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock, state := filepath.Join(dir, "s.sock"), filepath.Join(dir, "state")

	var out, errb bytes.Buffer
	o := shell.Options{Socket: sock, StateDir: state, Command: "create ltm pool emb_pool; list ltm pool emb_pool one-line",
		Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, StartDaemon: startDaemon}
	if got := shell.Run(o); got != shell.ExitOK {
		t.Fatalf("status %d, stderr %s", got, errb.String())
	}
	want := fmt.Sprintf("openltm: no ltmd answered on %s; started an embedded one (state in %s)\n", sock, state)
	if errb.String() != want {
		t.Fatalf("stderr %q, want %q", errb.String(), want)
	}
	if !strings.Contains(out.String(), "ltm pool emb_pool") {
		t.Fatalf("stdout %q", out.String())
	}
	if _, err := os.Lstat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the embedded daemon left its socket: %v", err)
	}

	// The configuration outlives the embedded daemon.
	out.Reset()
	errb.Reset()
	o.Command = "list ltm pool emb_pool one-line"
	if got := shell.Run(o); got != shell.ExitOK || !strings.Contains(out.String(), "ltm pool emb_pool") {
		t.Fatalf("second run: status %d, stdout %q, stderr %q", got, out.String(), errb.String())
	}
}

// Several tmsh starting at once on one socket: one daemon at a time owns
// it, the others join it or take over after it; all succeed.
func TestConcurrentStartsAgree(t *testing.T) {
	dir, err := os.MkdirTemp("", "emb")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock, state := filepath.Join(dir, "s.sock"), filepath.Join(dir, "state")
	const n = 4
	var wg sync.WaitGroup
	status := make([]int, n)
	stderr := make([]bytes.Buffer, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status[i] = shell.Run(shell.Options{Socket: sock, StateDir: state, Command: "list ltm pool",
				Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: &stderr[i], StartDaemon: startDaemon})
		}()
	}
	wg.Wait()
	for i := range n {
		if status[i] != shell.ExitOK || strings.Count(stderr[i].String(), "\n") > 1 {
			t.Errorf("run %d: status %d, stderr %q", i, status[i], stderr[i].String())
		}
	}
}
