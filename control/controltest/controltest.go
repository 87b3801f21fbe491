// Package controltest provides a scripted Backend so the protocol and the
// shell can be tested without a store or a dataplane. Its sessions obey a
// tiny command language (see Session.Exec) that exercises every path a real
// daemon can take: output, streaming, failure, cancellation, context
// changes and quitting.
package controltest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/openltm/openltm/control"
)

// Backend is a fake control.Backend. Its zero value is ready to use.
type Backend struct {
	// Suggestions is what every session's Complete returns (filtered by
	// nothing: the shell does the filtering, as with a real daemon).
	Suggestions []control.Suggestion
	// Release, when set, is what a "wait" command blocks on.
	Release chan struct{}
	// Started, when set, receives the line of every command as it starts.
	Started chan string

	mu       sync.Mutex
	users    []string
	executed []string
	closed   int
	closedCh chan struct{}
}

// NewSession implements control.Backend.
func (b *Backend) NewSession(user string) control.Session {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.users = append(b.users, user)
	return &Session{b: b, user: user, folder: "/Common"}
}

// Users lists the user of every session opened so far, in order.
func (b *Backend) Users() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.users...)
}

// Executed lists every statement any session ran, in order.
func (b *Backend) Executed() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.executed...)
}

// Closed counts sessions closed so far.
func (b *Backend) Closed() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.closed
}

// ClosedSignal returns a channel that receives once per closed session.
func (b *Backend) ClosedSignal() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closedCh == nil {
		b.closedCh = make(chan struct{}, 1024)
	}
	return b.closedCh
}

// Session is one fake conversation.
type Session struct {
	b      *Backend
	mu     sync.Mutex
	user   string
	folder string
	module string
	trans  bool
	quit   bool
	// committed is the generation the last Exec "committed" (commit-late).
	committed uint64
}

// LastCommitted implements control.Committer.
func (s *Session) LastCommitted() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.committed
}

// Exec implements control.Session. The first word picks the behaviour:
//
//	echo WORDS...   writes WORDS and a newline
//	lines N         writes N numbered lines, one Write each
//	big N           writes N bytes of 'x' in one Write, then a newline
//	fail TEXT...    fails with TEXT
//	wait            writes "waiting\n", then blocks until Backend.Release
//	                is closed or the command is cancelled
//	forever         writes lines until a write fails or it is cancelled
//	commit-late N   writes "committing\n", waits to be cancelled, then
//	                reports generation N committed all the same (a change
//	                that was applied although the user pressed Ctrl-C)
//	panic           panics
//	cd FOLDER       changes the folder
//	ltm | exit      enters the ltm module / leaves it
//	create cli transaction / submit cli transaction  toggles the transaction
//	quit            asks the shell to leave
//
// Anything else (a brace block, say) is echoed back as "ran: LINE".
func (s *Session) Exec(ctx context.Context, line string, w io.Writer) error {
	s.b.mu.Lock()
	s.b.executed = append(s.b.executed, line)
	started := s.b.Started
	s.b.mu.Unlock()
	if started != nil {
		started <- line
	}
	words := strings.Fields(line)
	if len(words) == 0 {
		return nil
	}
	arg := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), words[0]))
	s.mu.Lock()
	defer s.mu.Unlock()
	s.committed = 0
	switch words[0] {
	case "commit-late":
		if _, err := io.WriteString(w, "committing\n"); err != nil {
			return err
		}
		<-ctx.Done()
		s.committed, _ = strconv.ParseUint(arg, 10, 64)
		return nil

	case "echo":
		_, err := fmt.Fprintln(w, arg)
		return err
	case "lines":
		n, _ := strconv.Atoi(arg)
		for i := 1; i <= n; i++ {
			if _, err := fmt.Fprintf(w, "line %d\n", i); err != nil {
				return err
			}
		}
		return nil
	case "big":
		n, _ := strconv.Atoi(arg)
		_, err := io.WriteString(w, strings.Repeat("x", n)+"\n")
		return err
	case "fail":
		return errors.New(arg)
	case "wait":
		if _, err := io.WriteString(w, "waiting\n"); err != nil {
			return err
		}
		select {
		case <-s.b.Release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	case "forever":
		for i := 0; ; i++ {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if _, err := fmt.Fprintf(w, "flow %d\n", i); err != nil {
				return err
			}
		}
	case "panic":
		panic("scripted panic")
	case "load":
		// load sys config ... file NAME: the text ltmd would read.
		if i := slices.Index(words, "file"); i >= 0 && i+1 < len(words) {
			text, err := os.ReadFile(words[i+1])
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(w, "loading %s:\n%s", words[i+1], text)
			return err
		}
	case "cd":
		s.folder = arg
		return nil
	case "ltm":
		s.module = "ltm"
		return nil
	case "exit":
		s.module = ""
		return nil
	case "quit":
		s.quit = true
		return nil
	}
	switch line {
	case "create cli transaction":
		s.trans = true
		return nil
	case "submit cli transaction":
		s.trans = false
		return nil
	}
	_, err := fmt.Fprintf(w, "ran: %s\n", line)
	return err
}

// Prompt implements control.Session.
func (s *Session) Prompt() control.PromptState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return control.PromptState{User: s.user, Host: "fake", Folder: s.folder, Module: s.module, InTransaction: s.trans, Quit: s.quit}
}

// Complete implements control.Session.
func (s *Session) Complete(line string) []control.Suggestion {
	return s.b.Suggestions
}

// Close implements control.Session.
func (s *Session) Close() {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	s.b.closed++
	if s.b.closedCh != nil {
		select {
		case s.b.closedCh <- struct{}{}:
		default:
		}
	}
}
