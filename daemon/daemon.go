// Package daemon is ltmd's engine: the one owner of every change. It runs
// tmsh statements for sessions, commits each change as a new configuration
// generation in the store, applies it to the dataplane, and answers shows.
// control's server, cmd/ltmd and tests all call it the same way.
package daemon

import (
	"context"
	"errors"
	"io"
	"log/slog"

	"github.com/openltm/openltm/control"
)

// Options configure an Engine.
type Options struct {
	// StateDir holds the bbolt store (config.db) and saved config files.
	StateDir string
	// Logger receives BIG-IP-worded log lines (monitor status, iRule errors).
	Logger *slog.Logger
	// Hostname shown in prompts and `sys global-settings`; "" means the
	// machine's host name.
	Hostname string
}

// Engine is a running ltmd. It is safe for concurrent use by many sessions.
type Engine struct {
	opts Options
}

// Open loads the last committed generation from StateDir (creating it on
// first start) and brings the dataplane up to it.
func Open(opts Options) (*Engine, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Engine{opts: opts}, nil
}

// Close stops the dataplane and closes the store.
func (e *Engine) Close() error { return nil }

// NewSession implements control.Backend.
func (e *Engine) NewSession(user string) control.Session {
	return &Session{e: e, user: user, folder: "/Common"}
}

// Session is one tmsh conversation with the engine.
type Session struct {
	e      *Engine
	user   string
	folder string
	module string
	quit   bool
}

// Exec implements control.Session.
func (s *Session) Exec(ctx context.Context, line string, w io.Writer) error {
	return errors.New("not implemented yet")
}

// Prompt implements control.Session.
func (s *Session) Prompt() control.PromptState {
	return control.PromptState{User: s.user, Host: s.e.opts.Hostname, Folder: s.folder, Module: s.module, Quit: s.quit}
}

// Complete implements control.Session.
func (s *Session) Complete(line string) []control.Suggestion { return nil }

// Close implements control.Session.
func (s *Session) Close() {}
