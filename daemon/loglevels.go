package daemon

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
)

// sys db keys of the subsystems' log levels that openltm's logs follow:
// log.ssl.level the failed TLS handshakes in the ltm log, log.gtm.level
// the GSLB's and iQuery's lines in ltmd's log.
const (
	logSSLLevel = "log.ssl.level"
	logGTMLevel = "log.gtm.level"
)

// syslogSeverity is the syslog severity a log level word names (any
// case, as BIG-IP takes Debug and debug), the most severe being 0.
var syslogSeverity = map[string]int{
	"emergency": 0, "alert": 1, "critical": 2, "error": 3, "warning": 4,
	"notice": 5, "informational": 6, "info": 6, "debug": 7,
}

// dbLevel is the severity a log.*.level key sets: the key's default when
// unset, or set to a word it does not take (kept from a loaded file).
func dbLevel(cfg *objects.Config, key string) int {
	d, _ := objects.LookupDBKey(key)
	value := d.Default
	if o := cfg.Get(sysDB, key); o != nil && d.Check(sysDBValue.Str(o)) == nil {
		value = sysDBValue.Str(o)
	}
	return syslogSeverity[strings.ToLower(value)]
}

// slogLevel is the least slog level ltmd logs at a syslog severity.
// ltmd's Info lines are what BIG-IP logs as notices (a GSLB object's
// status change), so notice and informational both keep them [M];
// critical and more severe keep none, as openltm has no such lines.
func slogLevel(sev int) slog.Level {
	switch {
	case sev >= 7:
		return slog.LevelDebug
	case sev >= 5:
		return slog.LevelInfo
	case sev == 4:
		return slog.LevelWarn
	case sev == 3:
		return slog.LevelError
	}
	return slog.LevelError + 4
}

// levelHandler passes on the records at or above its level, which a
// sys db key sets while ltmd runs: a key set decides alone (debug lines
// show without ltmd --log-level debug, as BIG-IP's per-subsystem levels
// do), a key unset leaves ltmd's own level to decide. The logger
// asks Enabled before it makes a record, so a line filtered out costs
// an atomic load or two.
type levelHandler struct {
	h   slog.Handler
	min *slog.LevelVar
	own *atomic.Bool // the key is set
}

// Enabled implements slog.Handler.
func (l levelHandler) Enabled(ctx context.Context, lv slog.Level) bool {
	return lv >= l.min.Level() && (l.own.Load() || l.h.Enabled(ctx, lv))
}

// Handle implements slog.Handler.
func (l levelHandler) Handle(ctx context.Context, r slog.Record) error { return l.h.Handle(ctx, r) }

// WithAttrs implements slog.Handler.
func (l levelHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return levelHandler{h: l.h.WithAttrs(as), min: l.min, own: l.own}
}

// WithGroup implements slog.Handler.
func (l levelHandler) WithGroup(name string) slog.Handler {
	return levelHandler{h: l.h.WithGroup(name), min: l.min, own: l.own}
}

// GTMLogger is the logger of the GSLB and iQuery, filtered at sys db
// log.gtm.level as BIG-IP's gtmd logs are.
func (e *Engine) GTMLogger() *slog.Logger { return e.gtmLog }

// logLevels are the levels one commit's sys db keys set, and whether
// log.gtm.level is set.
type logLevels struct {
	ssl, gtm int
	gtmSet   bool
}

// logLevelHook puts log.ssl.level and log.gtm.level in service: the
// plane's failed-handshake lines go to the ltm log at or below the SSL
// level, and the GTM logger drops what is below its level.
type logLevelHook struct {
	e   *Engine
	p   *dataplane.Plane
	now logLevels
}

// Prepare implements Hook; dbHook has refused the words a key does not
// take.
func (h *logLevelHook) Prepare(_, cfg *objects.Config, _ CommitOptions) (Change, error) {
	next := logLevels{ssl: dbLevel(cfg, logSSLLevel), gtm: dbLevel(cfg, logGTMLevel)}
	for _, o := range cfg.Of(sysDB) {
		next.gtmSet = next.gtmSet || o.Name == logGTMLevel
	}
	return &settingChange[logLevels]{get: func() logLevels { return h.now }, set: h.set, next: next}, nil
}

// set gives the plane and the GTM logger their levels.
func (h *logLevelHook) set(l logLevels) {
	h.now = l
	if l.gtmSet {
		h.e.gtmLevel.Set(slogLevel(l.gtm))
	} else {
		// Unset, ltmd's own level decides, as before the key acted:
		// its default, info, keeps what notice keeps [M].
		h.e.gtmLevel.Set(slog.LevelDebug - 4)
	}
	h.e.gtmOwn.Store(l.gtmSet)
	if h.p == nil {
		return
	}
	logs := h.e.logs
	if logs == nil {
		h.p.SetSSLLog(0, nil)
		return
	}
	h.p.SetSSLLog(l.ssl, func(sev int, line string) {
		logs.Log("local0."+sslSeverityWord[sev], line)
	})
}

// sslSeverityWord is the ltm log's word of the severities SSL lines have.
var sslSeverityWord = [8]string{"emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"}
