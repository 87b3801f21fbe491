package shell

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/control"
	"github.com/openltm/openltm/control/controltest"
)

// An interactive shell whose daemon goes away says so once, reconnects
// before the next command (to the daemon that answers again), puts the
// user back in the module they were in, and keeps going.
func TestREPLReconnectsWhenTheDaemonGoes(t *testing.T) {
	a := &controltest.Backend{}
	path := filepath.Join(t.TempDir(), "s.sock")
	ln, err := control.Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, stopA := context.WithCancel(context.Background())
	servedA := make(chan struct{})
	go func() {
		defer close(servedA)
		control.Serve(ctx, ln, a, slog.New(slog.NewTextHandler(io.Discard, nil)))
	}()
	sess, err := control.Dial(path)
	if err != nil {
		t.Fatal(err)
	}
	b := &controltest.Backend{}
	tries := 0
	reconnect := func() (control.Session, error) {
		tries++
		if tries == 1 {
			return nil, errors.New("no ltmd answers yet")
		}
		return control.Dial(serveFake(t, b))
	}
	r := &scripted{
		lines: []Line{{Text: "ltm"}, {Text: "echo one"}, {Text: "echo two"}, {Text: "echo three"}},
		after: map[int]func(){1: func() {
			stopA()
			<-servedA
			// Bounded: the session notices the close at once on Unix sockets.
			for i := 0; i < 100 && sess.Alive(); i++ {
				time.Sleep(10 * time.Millisecond)
			}
		}},
	}
	var out, errb bytes.Buffer
	repl := &REPL{Session: sess, Reader: r, Stdout: &out, Stderr: &errb, Reconnect: reconnect}
	if err := repl.Run(context.Background()); err != nil {
		t.Fatalf("Run: %v (stderr %q)", err, errb.String())
	}
	if got := strings.Join(a.Executed(), "|"); got != "ltm|echo one" {
		t.Errorf("first daemon ran %q", got)
	}
	if got := strings.Join(b.Executed(), "|"); got != "ltm|echo three" {
		t.Errorf("second daemon ran %q, want the module restored, then echo three", got)
	}
	e := errb.String()
	if strings.Count(e, "ltmd went away") != 1 || !strings.Contains(e, "was not sent") || !strings.Contains(e, "reconnected to ltmd") {
		t.Errorf("stderr %q", e)
	}
	if out.String() != "one\nthree\n" {
		t.Errorf("stdout %q", out.String())
	}
}
