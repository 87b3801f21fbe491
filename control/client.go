package control

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
)

// ErrNoDaemon means nothing answers on the socket path: no file, or a file
// left behind by a daemon that is gone. tmsh reacts by starting an embedded
// daemon; any other Dial error is reported as is.
var ErrNoDaemon = errors.New("no ltmd answers on the socket")

// ErrDisconnected means the connection to ltmd broke (the daemon stopped or
// crashed). The session, with its module context and any open transaction,
// is gone; the shell should say so and stop.
var ErrDisconnected = errors.New("connection to ltmd lost")

// ErrOutcomeUnknown is wrapped (with ErrDisconnected) by Exec when the
// connection broke after the command was sent and before its result came:
// the daemon may have applied it or not, and only its history can tell.
var ErrOutcomeUnknown = errors.New("the command's outcome is unknown")

// CommandError is a command's failure as the daemon reported it; its text is
// the user-facing message (e.g. an F5-style coded error). It is distinct
// from transport errors so a batch can go on after it.
type CommandError struct{ Message string }

// Error returns the daemon's message unchanged: it is what the user reads.
func (e *CommandError) Error() string { return e.Message }

// helloTimeout bounds the wait for a daemon's greeting, so a socket held by
// something that accepts but never answers cannot hang tmsh forever.
const helloTimeout = 10 * time.Second

// Client is a tmsh-side session over the socket. It implements Session, so
// the shell runs the same code against a remote daemon or an in-process
// backend. Methods are safe for concurrent use but run one at a time, as
// the session they carry is one conversation.
type Client struct {
	conn net.Conn
	dec  *json.Decoder

	wmu sync.Mutex // guards writes to conn (Exec's cancel writes concurrently)
	mu  sync.Mutex // one request at a time

	last PromptState
	err  error // sticky transport failure
}

var _ Session = (*Client)(nil)

// Dial connects to the daemon at path and opens a session. It returns an
// error wrapping ErrNoDaemon when nothing listens there, and the daemon's
// own message when it refuses this user.
func Dial(path string) (*Client, error) {
	conn, err := net.Dial("unix", path)
	if err != nil {
		if isNoListener(err) {
			return nil, fmt.Errorf("%w (%s)", ErrNoDaemon, path)
		}
		return nil, err
	}
	c := &Client{conn: conn, dec: json.NewDecoder(bufio.NewReader(conn))}
	conn.SetDeadline(time.Now().Add(helloTimeout))
	// A refusing server writes its reason and hangs up without reading, so
	// the hello may fail to send while the reason is there to read.
	wd, _ := os.Getwd()
	sendErr := c.send(Request{Op: OpHello, Dir: wd})
	var resp Response
	err = c.dec.Decode(&resp)
	if err != nil && sendErr != nil {
		err = sendErr
	}
	conn.SetDeadline(time.Time{})
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if resp.Err != "" {
		conn.Close()
		return nil, fmt.Errorf("ltmd at %s refused the session: %s", path, resp.Err)
	}
	if resp.Version != ProtocolVersion {
		conn.Close()
		return nil, fmt.Errorf("ltmd at %s speaks protocol %d, this tmsh speaks %d", path, resp.Version, ProtocolVersion)
	}
	if resp.Prompt != nil {
		c.last = *resp.Prompt
	}
	return c, nil
}

// isNoListener tells "nobody home" (no file, refused, not a socket) from
// real failures such as permission denied.
func isNoListener(err error) bool {
	return errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, os.ErrNotExist)
}

// Exec implements Session: it runs line on the daemon and copies the output
// to w as it arrives. Cancelling ctx asks the daemon to stop the command;
// Exec still waits for the daemon's answer so the session stays in step. A
// failed command returns *CommandError; a broken connection returns an
// error wrapping ErrDisconnected.
func (c *Client) Exec(ctx context.Context, line string, w io.Writer) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return c.err
	}
	if err := c.send(Request{Op: OpExec, Line: line}); err != nil {
		return c.fail(err)
	}
	finished := make(chan struct{})
	var watching sync.WaitGroup
	// The watcher may be sending a cancel as the command ends: wait for
	// it, so that a late cancel reaches the daemon while it is idle
	// (ignored) and never after the next command's request (which it
	// would interrupt).
	defer func() { close(finished); watching.Wait() }()
	var once sync.Once
	cancel := func() { once.Do(func() { c.send(Request{Op: OpCancel}) }) }
	watching.Add(1)
	go func() {
		defer watching.Done()
		select {
		case <-ctx.Done():
			cancel()
		case <-finished:
		}
	}()

	var werr error
	for {
		var resp Response
		if err := c.dec.Decode(&resp); err != nil {
			return fmt.Errorf("%w (%w)", c.fail(err), ErrOutcomeUnknown)
		}
		if resp.Out != "" && werr == nil {
			if _, err := w.Write([]byte(resp.Out)); err != nil {
				// Keep reading to stay in step, but stop the command.
				werr = err
				cancel()
			}
		}
		if !resp.Done {
			continue
		}
		if resp.Prompt != nil {
			c.last = *resp.Prompt
		}
		switch {
		case werr != nil:
			return werr
		case resp.Err != "":
			return &CommandError{Message: resp.Err}
		case ctx.Err() != nil && resp.Committed != 0:
			// Asked to stop too late: the change is in.
			return &AppliedError{Generation: resp.Committed}
		case ctx.Err() != nil:
			// The command ended cleanly although asked to stop; report the
			// interruption so a batch does not carry on as if nothing happened.
			return ctx.Err()
		}
		return nil
	}
}

// AppliedError is what Exec returns for a command that was interrupted
// after it had committed its change: the user pressed Ctrl-C, but the
// configuration did change, and saying "interrupted" alone would be a lie.
type AppliedError struct {
	// Generation is the configuration generation the command committed.
	Generation uint64
}

func (e *AppliedError) Error() string {
	return fmt.Sprintf("interrupted too late: the change had already been applied (generation %d; see show sys config-history)", e.Generation)
}

// Prompt implements Session. When the connection is broken it returns the
// last state it knew; Err tells why.
func (c *Client) Prompt() PromptState {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return c.last
	}
	resp, err := c.roundTrip(Request{Op: OpPrompt})
	if err == nil && resp.Prompt != nil {
		c.last = *resp.Prompt
	}
	return c.last
}

// LastPrompt returns the prompt state that came with the last answer,
// without a round trip. Batch mode uses it to notice `quit` cheaply.
func (c *Client) LastPrompt() PromptState {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

// Complete implements Session; a broken connection yields no suggestions.
func (c *Client) Complete(line string) []Suggestion {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return nil
	}
	resp, err := c.roundTrip(Request{Op: OpComplete, Line: line})
	if err != nil {
		return nil
	}
	return resp.Suggestions
}

// Close implements Session: it ends the connection, which makes the daemon
// close the session and discard an uncommitted transaction.
func (c *Client) Close() {
	c.conn.Close()
}

// Err reports why the connection broke, or nil while it is healthy.
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// roundTrip sends a single-answer request and reads its Done response.
// The caller holds c.mu.
func (c *Client) roundTrip(req Request) (Response, error) {
	if err := c.send(req); err != nil {
		return Response{}, c.fail(err)
	}
	for {
		var resp Response
		if err := c.dec.Decode(&resp); err != nil {
			return Response{}, c.fail(err)
		}
		if resp.Done {
			return resp, nil
		}
	}
}

func (c *Client) send(req Request) error {
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err = c.conn.Write(b)
	return err
}

// fail records a transport failure; every later call returns it.
func (c *Client) fail(err error) error {
	if c.err == nil {
		c.err = fmt.Errorf("%w: %v", ErrDisconnected, err)
		c.conn.Close()
	}
	return c.err
}
