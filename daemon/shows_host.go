package daemon

import (
	"context"
	"io"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/openltm/openltm/control"
	"github.com/openltm/openltm/objects"
)

// hostStats is the engine's reading of the host for the shows BIG-IP
// answers from its own hardware, and the sampler behind their averages.
type hostStats struct {
	src     *hostSource
	sampler *hostSampler
}

// start starts sampling once a second; the engine calls it once it has
// opened.
func (h *hostStats) start() {
	if h != nil {
		h.sampler.start(time.Second)
	}
}

// stop ends the sampling; the engine calls it when it closes.
func (h *hostStats) stop() {
	if h != nil {
		h.sampler.close()
	}
}

// hostCommands answers the shows of the host: show sys memory, cpu,
// performance, tmm-info, hardware, license, show net interface and net
// route. It makes the engine's sampler (started by Open, stopped by
// Close).
func hostCommands(e *Engine) []RuntimeCommand {
	src := &hostSource{e: e}
	e.host = &hostStats{src: src, sampler: newHostSampler(src.read, time.Now)}
	h := e.host
	return []RuntimeCommand{
		{"show", "sys memory", func(_ context.Context, _ *Session, _, words []string, w io.Writer) error {
			o, err := hostOptions("sys memory", words, "raw")
			if err != nil {
				return err
			}
			return h.showMemory(w, o)
		}},
		{"show", "sys cpu", func(_ context.Context, _ *Session, _, words []string, w io.Writer) error {
			if _, err := hostOptions("sys cpu", words, "raw"); err != nil {
				return err
			}
			return h.showCPU(w)
		}},
		{"show", "sys performance", func(_ context.Context, _ *Session, _, words []string, w io.Writer) error {
			form := "all-stats"
			if len(words) > 0 && !showOptions[words[0]] {
				form, words = words[0], words[1:]
			}
			o, err := hostOptions("sys performance "+form, words, "raw", "detail")
			if err != nil {
				return err
			}
			return h.showPerformance(w, form, o)
		}},
		{"show", "sys tmm-info", func(_ context.Context, _ *Session, _, words []string, w io.Writer) error {
			if _, err := hostOptions("sys tmm-info", words); err != nil {
				return err
			}
			p := h.src.find(true)
			if p == nil {
				return objects.Invalid("show sys tmm-info is not available: no dataplane is running")
			}
			return writeTMMInfo(w, p.LoopLoads())
		}},
		{"show", "sys hardware", func(_ context.Context, _ *Session, _, words []string, w io.Writer) error {
			if _, err := hostOptions("sys hardware", words); err != nil {
				return err
			}
			return showHardware(w)
		}},
		{"show", "sys license", func(_ context.Context, _ *Session, _, words []string, w io.Writer) error {
			if _, err := hostOptions("sys license", words); err != nil {
				return err
			}
			return writeLicense(w, buildVersion())
		}},
		{"show", "net interface", func(_ context.Context, s *Session, _, words []string, w io.Writer) error {
			o, err := hostOptions("net interface", words, "raw", "all-properties", "NAME")
			if err != nil {
				return err
			}
			return showInterfaces(w, s, o)
		}},
		{"show", "net route", func(_ context.Context, s *Session, _, words []string, w io.Writer) error {
			o, err := hostOptions("net route", words, "NAME")
			if err != nil {
				return err
			}
			return showRoutes(w, s, o)
		}},
	}
}

// hostOpts are the words a host show was given: its options, and the
// names (globs allowed) of what to show where it lists objects.
type hostOpts struct {
	raw, detail, all bool
	names            []string
}

// hostOptions reads the words after a host show's target. allowed are
// the options it takes; "NAME" lets it take names too. Anything else is
// a syntax error naming what it takes, as the other shows answer.
func hostOptions(target string, words []string, allowed ...string) (hostOpts, error) {
	var o hostOpts
	ok := map[string]bool{}
	for _, a := range allowed {
		ok[a] = true
	}
	for _, wd := range words {
		switch {
		case ok[wd] && wd != "NAME":
			switch wd {
			case "raw":
				o.raw = true
			case "detail":
				o.detail = true
			case "all-properties":
				o.all = true
			}
		case ok["NAME"] && !showOptions[wd] && wd != "{" && wd != "}":
			o.names = append(o.names, wd)
		default:
			takes := slices.Sorted(maps.Keys(ok))
			if len(takes) == 0 {
				return o, synErr(nil, nil, "show %s takes no options (%q)", target, wd)
			}
			return o, synErr(nil, takes, "%q unexpected: show %s takes %s", wd, target, strings.Join(takes, ", "))
		}
	}
	return o, nil
}

// nameMatches reports whether name is one of names (globs allowed), or
// names is empty.
func nameMatches(names []string, name string) bool {
	if len(names) == 0 {
		return true
	}
	for _, n := range names {
		if ok, _ := path.Match(n, name); ok || n == name || globAcrossSlashes(n, name) {
			return true
		}
	}
	return false
}

// globAcrossSlashes matches * and ? over any characters, slashes too: a
// route's name is a prefix (192.*) and path.Match stops at its slash.
func globAcrossSlashes(pattern, name string) bool {
	if !strings.ContainsAny(pattern, "*?") {
		return false
	}
	q := regexp.QuoteMeta(pattern)
	q = strings.ReplaceAll(strings.ReplaceAll(q, `\*`, ".*"), `\?`, ".")
	re, err := regexp.Compile("^" + q + "$")
	return err == nil && re.MatchString(name)
}

// missingName is the first of names (not a glob) that no listed object
// has, for the not-found error tmsh gives.
func missingName(names []string, have func(string) bool) string {
	for _, n := range names {
		if !strings.ContainsAny(n, "*?[") && !have(n) {
			return n
		}
	}
	return ""
}

// hostCompletions are the options a host show takes, offered after its
// target in place of object names (the host's objects are not the
// configuration's).
func hostCompletions(key string) ([]control.Suggestion, bool) {
	opts := map[string]map[string]string{
		"sys memory":                  {"raw": "unscaled sizes"},
		"sys performance system":      {"raw": "unscaled counters", "detail": "3 second, 1 minute and 5 minute averages"},
		"sys performance connections": {"raw": "unscaled counters", "detail": "3 second, 1 minute and 5 minute averages"},
		"sys performance throughput":  {"raw": "unscaled counters", "detail": "3 second, 1 minute and 5 minute averages"},
		"sys performance all-stats":   {"raw": "unscaled counters", "detail": "3 second, 1 minute and 5 minute averages"},
		"net interface":               {"raw": "unscaled counters", "all-properties": "every column, and the addresses"},
		"sys cpu":                     {}, "sys tmm-info": {}, "sys hardware": {}, "sys license": {}, "net route": {},
	}
	o, ok := opts[key]
	if !ok {
		return nil, false
	}
	return sugs("Options", o), true
}
