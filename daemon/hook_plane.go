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

	mu sync.Mutex
	// cfg is the configuration the plane runs and tr its translation: the
	// next change is judged against what it left out, without translating
	// it again.
	cfg *objects.Config
	tr  *ltmTranslation

	// vaZero is, for each virtual address reset-stats reset, its virtual
	// servers' client-side traffic then: its show counts from there.
	vaMu   sync.Mutex
	vaZero map[string]map[string]dataplane.Traffic
}

// AttachDataplane makes p follow every commit, starting with the running
// configuration, and answers the runtime shows from it.
func (e *Engine) AttachDataplane(p *dataplane.Plane) error {
	h := &planeHook{e: e, p: p}
	e.attachHSL(p)
	// The dns profiles' logging (translate_dns.go) sends through the publishers.
	p.SetDNSLogSender(e.rules.rt.hsl.sendPublisher)
	// The bandwidth controllers' measurement logs (translate_bwc.go) too.
	p.SetBWCLogSender(e.rules.rt.hsl.sendPublisher)
	// The lsn pools' translation logs (translate_lsn.go) too.
	p.SetLSNLogSender(e.rules.rt.hsl.sendPublisher)
	e.rules.rt.flows.p.Store(p) // FLOWTABLE:: (hook_flowtable.go)
	// iCall's pool and member events (icall_builtin.go).
	e.scripts.attachMembers(p)
	if err := e.AddHook(h); err != nil {
		return err
	}
	registerPlaneRuntime(e, h)
	e.watchMinUp(h) // minup.go
	// sys db tm.maxrejectrate (dbkeys.go)
	if err := e.AddHook(&rejectRateHook{e: e, p: p}); err != nil {
		return err
	}
	// sys db log.ssl.level and log.gtm.level (loglevels.go)
	if err := e.AddHook(&logLevelHook{e: e, p: p}); err != nil {
		return err
	}
	// net packet-filter and sys db packetfilter (packetfilter.go)
	if err := e.AddHook(&packetFilterHook{e: e, p: p}); err != nil {
		return err
	}
	// sys db tm.rstcause.log (rstcause.go)
	return e.AddHook(&rstCauseHook{e: e, p: p})
}

// running is what the plane runs now.
func (h *planeHook) running() (*objects.Config, *ltmTranslation) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cfg, h.tr
}

// Prepare implements Hook: it translates cfg, the one translation of the
// commit. What the dataplane cannot run is left out of the translation:
// what BIG-IP runs and openltm does not (a wildcard address 0.0.0.0, a
// persistence kind openltm lacks) is kept with a warning whatever the
// source; what cannot run anywhere (a reference that dangles, a bad
// value) is refused, unless it comes from a loaded file, where it is kept
// with a warning. What is left must pass the dataplane's own check (a
// destination used twice, an unbindable address).
func (h *planeHook) Prepare(old, cfg *objects.Config, opts CommitOptions) (Change, error) {
	tr := h.e.translate(cfg)
	had, hadKept, hadNote := map[string]bool{}, map[string]bool{}, map[string]bool{}
	if old != nil {
		// old is the running configuration but for a verify racing a
		// commit, or a hook whose start failed.
		runCfg, runTr := h.running()
		oldTr := runTr
		if runCfg != old {
			oldTr = h.e.translate(old)
		}
		for _, s := range oldTr.skipped {
			had[s] = true
		}
		for _, s := range oldTr.kept {
			hadKept[s] = true
		}
		for _, s := range oldTr.notes {
			hadNote[s] = true
		}
	}
	for _, s := range tr.notes {
		if !hadNote[s] && opts.Warn != nil {
			opts.Warn(s)
		}
	}
	for _, s := range tr.kept {
		if hadKept[s] || opts.Warn == nil {
			continue
		}
		if strings.HasSuffix(s, keptServed) {
			opts.Warn(s) // a virtual served without what the note names
		} else {
			opts.Warn(s + "; kept, and it carries no traffic")
		}
	}
	if opts.Warn != nil {
		warnTLS(old, h, tr, opts.Warn) // translate_tls.go
		// translate_tcpopts.go
		warnTCP(h.e.schema, old, cfg, opts.Warn)
		warnMinUp(old, cfg, opts.Warn)               // minup.go
		warnMinConn(h.e.schema, old, cfg, opts.Warn) // translate_mblb.go
	}
	for _, s := range tr.refused {
		// What BIG-IP refuses in any source; what the running (or a
		// stored, at start) configuration holds already stays as it was.
		if old != nil && !had[s] {
			return nil, objects.Invalid("%s", s)
		}
	}
	for _, s := range tr.skipped {
		if had[s] || strings.Contains(s, "does not exist") {
			continue // dangling references are reported by the engine
		}
		if !opts.Lenient {
			return nil, objects.Invalid("%s", s)
		}
		if opts.Warn != nil {
			opts.Warn(s + "; kept, and it carries no traffic")
		}
	}
	prepared, err := dataplane.Prepare(tr.dc)
	if err != nil {
		return nil, objects.Invalid("%s", oneLine(err))
	}
	return &planeChange{h: h, cfg: cfg, tr: tr, prepared: prepared}, nil
}

// planeChange is a translated configuration for the plane.
type planeChange struct {
	h   *planeHook
	cfg *objects.Config
	tr  *ltmTranslation
	// prepared is tr's configuration checked, its monitors compiled.
	prepared *dataplane.Prepared

	// Set by Commit, for Abort to go back.
	done      bool
	prevCfg   *objects.Config
	prevTr    *ltmTranslation
	undoRules func()
}

// Commit implements Change: the rules get their programs, then the plane
// swaps to the translation.
func (c *planeChange) Commit() error {
	h := c.h
	h.mu.Lock()
	defer h.mu.Unlock()
	undo := h.e.rules.rt.start(h.e.log, c.tr)
	if err := h.p.ApplyPrepared(c.prepared); err != nil {
		undo()
		return objects.Invalid("%s", oneLine(err))
	}
	for _, s := range c.tr.skipped {
		h.e.log.Info("not carrying traffic", "object", s)
	}
	h.e.sflowApply(c.tr.sflow, h.p) // hook_sflow.go
	c.done, c.prevCfg, c.prevTr, c.undoRules = true, h.cfg, h.tr, undo
	h.cfg, h.tr = c.cfg, c.tr
	return nil
}

// Abort implements Change: after Commit, the plane goes back to the
// translation it ran before, with its programs and data groups.
func (c *planeChange) Abort() {
	if !c.done {
		return
	}
	h := c.h
	h.mu.Lock()
	defer h.mu.Unlock()
	var prev *dataplane.Config
	if c.prevTr != nil {
		prev = c.prevTr.dc
	}
	if err := h.p.Apply(c.tr.dc, prev); err != nil {
		h.e.log.Error("the dataplane could not go back to the running configuration", "err", err)
	}
	c.undoRules()
	var prevSFlow *sflowPlan
	if c.prevTr != nil {
		prevSFlow = c.prevTr.sflow
	}
	h.e.sflowApply(prevSFlow, h.p)
	h.cfg, h.tr = c.prevCfg, c.prevTr
	c.done = false
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
