package control_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/openltm/openltm/control"
	"github.com/openltm/openltm/control/controltest"
)

// A daemon that dies after taking a command leaves its outcome unknown;
// the client must say so rather than report a plain transport error.
func TestExecOutcomeUnknownWhenTheDaemonDies(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		r := bufio.NewReader(conn)
		r.ReadString('\n') // hello
		json.NewEncoder(conn).Encode(control.Response{Done: true, Version: control.ProtocolVersion, Prompt: &control.PromptState{}})
		r.ReadString('\n') // the command: taken, then the daemon "dies"
	}()
	c, err := control.Dial(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	err = c.Exec(context.Background(), "create ltm pool p", io.Discard)
	if !errors.Is(err, control.ErrDisconnected) || !errors.Is(err, control.ErrOutcomeUnknown) {
		t.Fatalf("Exec = %v, want ErrDisconnected and ErrOutcomeUnknown", err)
	}
	// The next command is known not to have been sent.
	err = c.Exec(context.Background(), "create ltm pool q", io.Discard)
	if !errors.Is(err, control.ErrDisconnected) || errors.Is(err, control.ErrOutcomeUnknown) {
		t.Fatalf("second Exec = %v, want ErrDisconnected alone", err)
	}
}

// A command interrupted after it committed reports the generation.
func TestExecInterruptedAfterCommit(t *testing.T) {
	b := &controltest.Backend{Started: make(chan string, 1), Release: make(chan struct{})}
	path := filepath.Join(t.TempDir(), "s.sock")
	ln, err := control.Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go control.Serve(ctx, ln, b, nil)
	c, err := control.Dial(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	execCtx, interrupt := context.WithCancel(context.Background())
	go func() {
		select {
		case <-b.Started:
			interrupt()
		case <-time.After(10 * time.Second):
		}
	}()
	err = c.Exec(execCtx, "commit-late 42", io.Discard)
	var applied *control.AppliedError
	if !errors.As(err, &applied) || applied.Generation != 42 {
		t.Fatalf("Exec = %v, want an AppliedError for generation 42", err)
	}
	// Interrupted before anything was committed: plain cancellation.
	execCtx, interrupt = context.WithCancel(context.Background())
	go func() {
		select {
		case <-b.Started:
			interrupt()
		case <-time.After(10 * time.Second):
		}
	}()
	if err := c.Exec(execCtx, "wait", io.Discard); err == nil || errors.As(err, &applied) {
		t.Fatalf("Exec(wait) = %v, want the interruption", err)
	}
}

// Alive notices a daemon that went away between commands, without sending.
func TestAliveSeesTheDaemonGo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.sock")
	ln, err := control.Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() { defer close(served); control.Serve(ctx, ln, &controltest.Backend{}, nil) }()
	c, err := control.Dial(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if !c.Alive() {
		t.Fatal("a fresh session is not alive")
	}
	if err := c.Exec(context.Background(), "echo hi", io.Discard); err != nil || !c.Alive() {
		t.Fatalf("after a command: %v, alive %v", err, c.Alive())
	}
	stop()
	<-served
	for range 100 {
		if !c.Alive() {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("Alive still true after the daemon stopped")
}

// A command whose context ends as its answer arrives may have its cancel
// on the wire: it must reach the daemon before the next command, never
// after it (where it would interrupt that one). The daemon here records
// the order of what it reads while commands end and contexts are
// cancelled at the same moment, many times over.
func TestLateCancelNeverFollowsTheNextCommand(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	const rounds = 200
	took := make(chan struct{})
	order := make(chan string, 4*rounds)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		dec := json.NewDecoder(conn)
		enc := json.NewEncoder(conn)
		var hello control.Request
		dec.Decode(&hello)
		enc.Encode(control.Response{Done: true, Version: control.ProtocolVersion, Prompt: &control.PromptState{}})
		for {
			var req control.Request
			if dec.Decode(&req) != nil {
				close(order)
				return
			}
			order <- string(req.Op) + " " + req.Line
			if req.Op == control.OpExec && req.Line == "first" {
				took <- struct{}{}
				enc.Encode(control.Response{Done: true})
			} else if req.Op == control.OpExec {
				enc.Encode(control.Response{Done: true})
			}
		}
	}()
	c, err := control.Dial(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < rounds; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-took; cancel() }()
		c.Exec(ctx, "first", io.Discard)
		cancel()
		if err := c.Exec(context.Background(), "second", io.Discard); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	second := false
	for op := range order {
		switch {
		case op == string(control.OpExec)+" first":
			second = false
		case op == string(control.OpExec)+" second":
			second = true
		case op == string(control.OpCancel)+" " && second:
			t.Fatal("a cancel of the first command arrived after the second command")
		}
	}
}
