package control_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openltm/openltm/control"
	"github.com/openltm/openltm/control/controltest"
)

// patience bounds every wait in these tests so a bug hangs nothing; it is
// a failure deadline, not a timing assertion.
const patience = 10 * time.Second

// sockPath returns a short socket path: t.TempDir can exceed sockaddr_un.
func sockPath(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "ctl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "s.sock")
}

type served struct {
	path    string
	backend *controltest.Backend
	cancel  context.CancelFunc
	done    chan error
}

// serve starts a server on a fresh socket and stops it when the test ends.
func serve(t *testing.T, srv *control.Server) *served {
	t.Helper()
	path := sockPath(t)
	ln, err := control.Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := srv.Backend.(*controltest.Backend)
	if srv.Logger == nil {
		srv.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &served{path: path, backend: b, cancel: cancel, done: make(chan error, 1)}
	go func() { s.done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-s.done:
		case <-time.After(patience):
			t.Error("server did not stop")
		}
	})
	return s
}

func dial(t *testing.T, path string) *control.Client {
	t.Helper()
	c, err := control.Dial(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func TestExecResults(t *testing.T) {
	s := serve(t, &control.Server{Backend: &controltest.Backend{}})
	c := dial(t, s.path)
	tests := []struct {
		line    string
		out     string
		wantErr string
	}{
		{"echo hello world", "hello world\n", ""},
		{"lines 3", "line 1\nline 2\nline 3\n", ""},
		{"fail 01020036:3: The requested pool (/Common/x) was not found.", "", "01020036:3: The requested pool (/Common/x) was not found."},
		{"create ltm rule r {\n  when HTTP_REQUEST { log local0. \"é\" }\n}", "ran: create ltm rule r {\n  when HTTP_REQUEST { log local0. \"é\" }\n}\n", ""},
		{"panic", "", "internal error: scripted panic"},
		{"echo after the panic", "after the panic\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			var out bytes.Buffer
			err := c.Exec(context.Background(), tt.line, &out)
			if got := out.String(); got != tt.out {
				t.Errorf("output %q, want %q", got, tt.out)
			}
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			var ce *control.CommandError
			if !errors.As(err, &ce) || ce.Message != tt.wantErr {
				t.Fatalf("error %v, want CommandError %q", err, tt.wantErr)
			}
		})
	}
}

// countingWriter counts Write calls: streamed output arrives in many.
type countingWriter struct {
	bytes.Buffer
	writes int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(p)
}

func TestLargeOutputStreamsInChunks(t *testing.T) {
	s := serve(t, &control.Server{Backend: &controltest.Backend{}})
	c := dial(t, s.path)
	var w countingWriter
	if err := c.Exec(context.Background(), "big 200000", &w); err != nil {
		t.Fatal(err)
	}
	if w.Len() != 200001 || w.writes < 200000/(32<<10) {
		t.Fatalf("got %d bytes in %d writes", w.Len(), w.writes)
	}
	// Multi-byte characters survive chunk boundaries.
	var out bytes.Buffer
	line := "echo " + strings.Repeat("é", 40000)
	if err := c.Exec(context.Background(), line, &out); err != nil {
		t.Fatal(err)
	}
	if out.String() != strings.Repeat("é", 40000)+"\n" {
		t.Fatal("multi-byte output was damaged")
	}
}

// firstWrite signals when the first output byte reaches the client.
type firstWrite struct {
	once sync.Once
	ch   chan struct{}
	bytes.Buffer
}

func (w *firstWrite) Write(p []byte) (int, error) {
	w.once.Do(func() { close(w.ch) })
	return w.Buffer.Write(p)
}

func TestOutputArrivesBeforeCommandEnds(t *testing.T) {
	b := &controltest.Backend{Release: make(chan struct{})}
	s := serve(t, &control.Server{Backend: b})
	c := dial(t, s.path)
	w := &firstWrite{ch: make(chan struct{})}
	errc := make(chan error, 1)
	go func() { errc <- c.Exec(context.Background(), "wait", w) }()
	select {
	case <-w.ch: // "waiting" arrived while the command still blocks
	case <-time.After(patience):
		t.Fatal("no output while the command ran")
	}
	close(b.Release)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if w.String() != "waiting\n" {
		t.Fatalf("output %q", w.String())
	}
}

func TestCancelStopsOnlyTheCommand(t *testing.T) {
	b := &controltest.Backend{Release: make(chan struct{})}
	s := serve(t, &control.Server{Backend: b})
	c := dial(t, s.path)
	ctx, cancel := context.WithCancel(context.Background())
	w := &firstWrite{ch: make(chan struct{})}
	errc := make(chan error, 1)
	go func() { errc <- c.Exec(ctx, "wait", w) }()
	<-w.ch
	cancel()
	select {
	case err := <-errc:
		if err == nil {
			t.Fatal("cancelled command reported success")
		}
	case <-time.After(patience):
		t.Fatal("cancel did not stop the command")
	}
	var out bytes.Buffer
	if err := c.Exec(context.Background(), "echo still here", &out); err != nil || out.String() != "still here\n" {
		t.Fatalf("session unusable after cancel: %v %q", err, out.String())
	}
}

func TestPromptCompleteAndUser(t *testing.T) {
	b := &controltest.Backend{Suggestions: []control.Suggestion{{Text: "pool", Description: "Load balancing pool configuration", Group: "Components"}}}
	s := serve(t, &control.Server{Backend: b})
	c := dial(t, s.path)
	me, err := user.Current()
	if err != nil {
		t.Skip(err)
	}
	if got := b.Users(); len(got) != 1 || got[0] != me.Username {
		t.Fatalf("session users %v, want [%s]", got, me.Username)
	}
	if err := c.Exec(context.Background(), "ltm", io.Discard); err != nil {
		t.Fatal(err)
	}
	if p := c.LastPrompt(); p.Module != "ltm" || p.User != me.Username {
		t.Fatalf("last prompt %+v", p)
	}
	c.Exec(context.Background(), "cd /Part", io.Discard)
	if p := c.Prompt(); p.Folder != "/Part" || p.Module != "ltm" {
		t.Fatalf("prompt %+v", p)
	}
	if got := c.Complete("create ltm p"); len(got) != 1 || got[0] != b.Suggestions[0] {
		t.Fatalf("complete %+v", got)
	}
}

func TestConcurrentSessionsAreIndependent(t *testing.T) {
	b := &controltest.Backend{}
	s := serve(t, &control.Server{Backend: b})
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := control.Dial(s.path)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			folder := "/P" + strconv.Itoa(i)
			for range 20 {
				var out bytes.Buffer
				if err := c.Exec(context.Background(), "cd "+folder, &out); err != nil {
					errs <- err
					return
				}
				if err := c.Exec(context.Background(), "lines 50", &out); err != nil {
					errs <- err
					return
				}
				if p := c.Prompt(); p.Folder != folder {
					errs <- fmt.Errorf("session %d sees folder %s", i, p.Folder)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := len(b.Users()); got != n {
		t.Fatalf("%d sessions opened, want %d", got, n)
	}
}

func TestRefusedPeerGetsReason(t *testing.T) {
	b := &controltest.Backend{}
	var seen control.Peer
	s := serve(t, &control.Server{Backend: b, Authorize: func(p control.Peer) error {
		seen = p
		return errors.New("permission denied: not in the admin group")
	}})
	_, err := control.Dial(s.path)
	if err == nil || !strings.Contains(err.Error(), "not in the admin group") {
		t.Fatalf("Dial error %v", err)
	}
	if seen.UID != uint32(os.Getuid()) || seen.PID != int32(os.Getpid()) {
		t.Fatalf("peer %+v, want uid %d pid %d", seen, os.Getuid(), os.Getpid())
	}
	if len(b.Users()) != 0 {
		t.Fatal("a session was opened for a refused peer")
	}
}

func TestAllowSameUserOrRoot(t *testing.T) {
	own := uint32(os.Getuid())
	other := own + 4242
	tests := []struct {
		uid  uint32
		want bool
	}{{own, true}, {0, true}, {other, own == 0 && other == 0}}
	for _, tt := range tests {
		err := control.AllowSameUserOrRoot(control.Peer{UID: tt.uid, User: "u"})
		if (err == nil) != tt.want {
			t.Errorf("uid %d: err %v, want allowed=%v", tt.uid, err, tt.want)
		}
	}
}

func TestCrashedClientDoesNotHurtServer(t *testing.T) {
	b := &controltest.Backend{}
	closed := b.ClosedSignal()
	s := serve(t, &control.Server{Backend: b})

	// A client starts a never-ending stream, reads a little and dies.
	conn, err := net.Dial("unix", s.path)
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(conn)
	fmt.Fprintln(conn, `{"op":"hello"}`)
	r.ReadString('\n')
	fmt.Fprintln(conn, `{"op":"exec","line":"forever"}`)
	for range 3 {
		if _, err := r.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	conn.Close()
	select {
	case <-closed:
	case <-time.After(patience):
		t.Fatal("the dead client's session was never closed")
	}

	// Garbage instead of JSON only costs that client its connection.
	conn, err = net.Dial("unix", s.path)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(conn, `this is not json`)
	if _, err := io.ReadAll(conn); err != nil {
		t.Fatal(err)
	}
	conn.Close()

	c := dial(t, s.path)
	var out bytes.Buffer
	if err := c.Exec(context.Background(), "echo alive", &out); err != nil || out.String() != "alive\n" {
		t.Fatalf("server unusable after a crashed client: %v %q", err, out.String())
	}
}

func TestShutdownClosesSessionsAndSocket(t *testing.T) {
	b := &controltest.Backend{Release: make(chan struct{})}
	s := serve(t, &control.Server{Backend: b})
	c := dial(t, s.path)
	w := &firstWrite{ch: make(chan struct{})}
	errc := make(chan error, 1)
	go func() { errc <- c.Exec(context.Background(), "wait", w) }()
	<-w.ch
	s.cancel()
	if err := <-s.done; err != nil {
		t.Fatalf("Serve returned %v", err)
	}
	s.done <- nil // for the cleanup
	var ce *control.CommandError
	if err := <-errc; !errors.Is(err, control.ErrDisconnected) && !(errors.As(err, &ce) && strings.Contains(ce.Message, "shutting down")) {
		t.Fatalf("command during shutdown: %v, want ErrDisconnected or a shutdown message", err)
	}
	if b.Closed() != 1 {
		t.Fatalf("%d sessions closed, want 1", b.Closed())
	}
	if _, err := os.Lstat(s.path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("socket file left behind: %v", err)
	}
	if _, err := control.Dial(s.path); !errors.Is(err, control.ErrNoDaemon) {
		t.Fatalf("Dial after shutdown: %v, want ErrNoDaemon", err)
	}
}
