package control

import (
	"context"
	"io"
)

// Backend is what the control server needs from ltmd's engine. The daemon
// package implements it; tests use a fake. Keeping it this narrow lets the
// protocol be tested without a store or a dataplane behind it.
type Backend interface {
	// NewSession starts a shell session for a connected peer. user is the
	// peer's login name (from its socket credentials), recorded in the
	// configuration history as who made each change.
	NewSession(user string) Session
}

// DirSetter is implemented by sessions that resolve relative file names:
// the server hands them the client's working directory from its hello.
type DirSetter interface {
	SetDir(dir string)
}

// Committer is implemented by sessions that can say whether their last
// Exec committed a configuration generation. The server reports it with
// the command's result, so that a command interrupted after its change was
// applied is not reported as if nothing happened.
type Committer interface {
	// LastCommitted is the generation the last Exec committed, 0 if none.
	LastCommitted() uint64
}

// Session is one tmsh conversation: it carries the current folder, the
// module context and an open cli transaction between commands, exactly as
// one tmsh process does on a BIG-IP.
type Session interface {
	// Exec runs one tmsh statement (which may span lines when it holds a
	// brace block) and writes its output to w as it is produced. A non-nil
	// error means the command failed; its text is the user-facing message
	// (e.g. "01020036:3: The requested pool (/Common/x) was not found.").
	Exec(ctx context.Context, line string, w io.Writer) error
	// Prompt describes the context the shell shows in its prompt.
	Prompt() PromptState
	// Complete returns what may follow the text before the cursor: verbs,
	// modules, kinds, properties, enum values and live object names. The
	// last word of line is the partial word being completed (empty after a
	// space). The same list, grouped, is what `?` prints.
	Complete(line string) []Suggestion
	// Close ends the session and discards an uncommitted transaction.
	Close()
}

// PromptState is the session context shown in the tmsh prompt, e.g.
// root@(openltm)(cfg-sync Standalone)(Active)(/Common)(tmos.ltm)#.
type PromptState struct {
	User          string `json:"user"`
	Host          string `json:"host"`
	Folder        string `json:"folder"`        // "/Common"
	Module        string `json:"module"`        // "" for the top, "ltm", "ltm.pool"
	InTransaction bool   `json:"inTransaction"` // a cli transaction is open
	Quit          bool   `json:"quit"`          // the last command asked the shell to leave
	// SyncStatus and Failover are the device group's words, "In Sync"
	// and "Active"; empty for a standalone device (Standalone, Active).
	SyncStatus string `json:"syncStatus,omitempty"`
	Failover   string `json:"failover,omitempty"`
}

// Suggestion is one completion candidate. Group is the heading tmsh prints
// it under in `?` help ("Modules", "Components", "Properties", "Options",
// "Commands", "Values", "Objects").
type Suggestion struct {
	Text        string `json:"text"`
	Description string `json:"description,omitempty"`
	Group       string `json:"group,omitempty"`
}
