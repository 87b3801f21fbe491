//go:build linux

package main

import (
	"bufio"
	"bytes"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/daemon"
	"github.com/openltm/openltm/internal/netnstest"
	"github.com/openltm/openltm/shell"
)

// TestEmbeddedOwnNamespace: in a network namespace of its own, the ltmd
// tmsh starts with --own-namespace serves a wildcard virtual (`0.0.0.0:any
// mask any`): a connection to any address and port of the namespace
// reaches the wildcard's member. Without the flag the same commit keeps
// the wildcard with a warning naming it and nothing is served.
func TestEmbeddedOwnNamespace(t *testing.T) {
	if !netnstest.Alone(t, "TMSH_OWNNS_NETNS") {
		return
	}
	ln, err := net.Listen("tcp", "127.253.12.2:30001")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("member\n"))
			c.Close()
		}
	}()
	ask := func() string {
		c, err := net.DialTimeout("tcp", "127.253.12.9:30055", 2*time.Second)
		if err != nil {
			return err.Error()
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil {
			return err.Error()
		}
		return strings.TrimSpace(line)
	}
	for _, own := range []bool{false, true} {
		ownNamespace = own
		dir := t.TempDir()
		sock, state := filepath.Join(dir, "s.sock"), filepath.Join(dir, "state")
		emb, err := startDaemon(sock, state, slog.New(slog.NewTextHandler(os.Stderr, nil)))
		if err != nil {
			t.Fatal(err)
		}
		var out, errb bytes.Buffer
		o := shell.Options{Socket: sock, StateDir: state, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
			Command: "create ltm pool p members add { 127.253.12.2:30001 }; create ltm virtual w destination 0.0.0.0:any mask any pool p"}
		got := shell.Run(o)
		answer := ask()
		if own && (got != shell.ExitOK || answer != "member") {
			t.Errorf("--own-namespace: status %d, stderr %q, the wildcard answered %q", got, errb.String(), answer)
		}
		if !own && (!strings.Contains(out.String()+errb.String(), "--own-namespace") || answer == "member") {
			t.Errorf("without --own-namespace: stdout %q stderr %q, the wildcard answered %q", out.String(), errb.String(), answer)
		}
		if err := emb.(*daemon.Running).Stop(); err != nil {
			t.Error(err)
		}
	}
}
