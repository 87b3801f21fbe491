package daemon

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
)

// planeHook keeps a dataplane in step with the committed configuration.
type planeHook struct {
	e *Engine
	p *dataplane.Plane

	mu   sync.Mutex
	last *dataplane.Config
	// skipCfg and skipped remember what the last checked configuration
	// left out, so the next commit need not translate its old one again.
	skipCfg *objects.Config
	skipped []string
}

// AttachDataplane makes p follow every commit, starting with the running
// configuration, and answers the runtime shows from it.
func (e *Engine) AttachDataplane(p *dataplane.Plane) error {
	h := &planeHook{e: e, p: p}
	if err := e.AddHook(h); err != nil {
		return err
	}
	registerShows(e, p)
	return nil
}

func (h *planeHook) translate(cfg *objects.Config) *dataplane.Config {
	dc, skipped := h.e.translate(cfg, true)
	for _, s := range skipped {
		h.e.log.Info("not carrying traffic", "object", s)
	}
	return dc
}

// Check implements Hook. What the dataplane cannot run at all (a wildcard
// port, a reference that dangles) is left out of the translation; a change
// that adds such an object is refused, unless it comes from a loaded file,
// where it is kept with a warning. What is left must pass the dataplane's
// own check (a destination used twice, an unbindable address).
func (h *planeHook) Check(old, cfg *objects.Config, opts CommitOptions) error {
	dc, skipped := h.e.translate(cfg, false)
	had := map[string]bool{}
	if old != nil {
		h.mu.Lock()
		prev, known := h.skipped, h.skipCfg == old
		h.mu.Unlock()
		if !known {
			_, prev = h.e.translate(old, false)
		}
		for _, s := range prev {
			had[s] = true
		}
	}
	h.mu.Lock()
	h.skipCfg, h.skipped = cfg, skipped // cfg is likely the next commit's old
	h.mu.Unlock()
	for _, s := range skipped {
		if had[s] || strings.Contains(s, "does not exist") {
			continue // dangling references are reported by the engine
		}
		if !opts.Lenient {
			return objects.Invalid("%s", s)
		}
		if opts.Warn != nil {
			opts.Warn(s + "; kept, and it carries no traffic")
		}
	}
	if err := dataplane.Check(dc); err != nil {
		return objects.Invalid("%s", oneLine(err))
	}
	return nil
}

// Apply implements Hook.
func (h *planeHook) Apply(_, cfg *objects.Config) error {
	dc := h.translate(cfg)
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.p.Apply(h.last, dc); err != nil {
		return objects.Invalid("%s", oneLine(err))
	}
	h.last = dc
	return nil
}

// oneLine joins a multi-error into one message line.
func oneLine(err error) string {
	var j interface{ Unwrap() []error }
	if errors.As(err, &j) {
		s := ""
		for i, e := range j.Unwrap() {
			if i > 0 {
				s += "; "
			}
			s += e.Error()
		}
		return s
	}
	return fmt.Sprint(err)
}
