//go:build !linux

package l4

import "github.com/openltm/openltm/dataplane/internal/sockopt"

// ListenOpts does nothing off Linux: the listener settings are Linux
// socket options.
func (l *Listener) ListenOpts(s *sockopt.Side) {}
