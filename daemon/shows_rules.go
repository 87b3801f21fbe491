package daemon

import (
	"bufio"
	"context"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/openltm/openltm/daemon/render"
	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/rules"
)

// ruleCommands answers show and reset-stats of ltm and gtm rules from the
// compiled rules: their counters live with the compiled rule, shared by
// every virtual server, listener and wide IP using it, so a commit that
// keeps a rule's text keeps its statistics and a changed rule starts
// from zero, as on BIG-IP.
func ruleCommands(e *Engine) []RuntimeCommand {
	show := func(k *objects.Kind, def *objects.Prop, title string) RuntimeFunc {
		return func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
			o := showOpts(s, words)
			for _, r := range e.compiledRules(k, def, names) {
				for _, st := range r.Stats() {
					if err := render.RuleEvent(w, title, r.Name, st, cpuMHz(), o); err != nil {
						return err
					}
				}
			}
			return nil
		}
	}
	reset := func(k *objects.Kind, def *objects.Prop) RuntimeFunc {
		return func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
			for _, r := range e.compiledRules(k, def, names) {
				r.ResetStats()
			}
			return nil
		}
	}
	return []RuntimeCommand{
		{"show", "ltm rule", show(ltmRule, ruleDefinition, "Ltm")},
		{"reset-stats", "ltm rule", reset(ltmRule, ruleDefinition)},
		{"show", "gtm rule", show(gtmRule, gtmRuleDefinition, "Gtm")},
		{"reset-stats", "gtm rule", reset(gtmRule, gtmRuleDefinition)},
	}
}

// compiledRules is the running configuration's compiled rules of kind k
// the names cover (all when none), in name order. A rule that did not
// compile (kept with a warning) has no statistics and is left out.
func (e *Engine) compiledRules(k *objects.Kind, def *objects.Prop, names []string) []*rules.Rule {
	var out []*rules.Rule
	for _, name := range profileNames(e, k, names) {
		o := e.Config().Get(k, name)
		if o == nil {
			continue
		}
		if r := e.rules.lookup(name, def.Str(o)); r != nil {
			out = append(out, r)
		}
	}
	return out
}

// cpuMHz is the CPU's nominal frequency, by which `show ltm rule` turns
// the time an event took into BIG-IP's CPU cycles: read once, from the
// model name's "@ 2.20GHz", else the kernel's base or maximum frequency,
// else /proc/cpuinfo's "cpu MHz"; 1000 (1 GHz) when none is found.
var cpuMHz = sync.OnceValue(func() float64 {
	return nominalMHz(readSysFile("/proc/cpuinfo"),
		readSysFile("/sys/devices/system/cpu/cpu0/cpufreq/base_frequency"),
		readSysFile("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"))
})

func readSysFile(name string) string {
	b, err := os.ReadFile(name)
	if err != nil {
		return ""
	}
	return string(b)
}

// nominalMHz picks the frequency from /proc/cpuinfo's text and the
// cpufreq base and maximum frequencies (kHz); see cpuMHz.
func nominalMHz(cpuinfo, baseKHz, maxKHz string) float64 {
	var model, cur string
	sc := bufio.NewScanner(strings.NewReader(cpuinfo))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "model name":
			if model == "" {
				model = strings.TrimSpace(v)
			}
		case "cpu MHz":
			if cur == "" {
				cur = strings.TrimSpace(v)
			}
		}
	}
	if i := strings.LastIndex(model, "@"); i >= 0 {
		f := strings.TrimSpace(model[i+1:])
		for unit, mul := range map[string]float64{"GHz": 1000, "MHz": 1} {
			if n, ok := strings.CutSuffix(f, unit); ok {
				if v, err := strconv.ParseFloat(strings.TrimSpace(n), 64); err == nil && v > 0 {
					return v * mul
				}
			}
		}
	}
	for _, khz := range []string{baseKHz, maxKHz} {
		if v, err := strconv.ParseFloat(strings.TrimSpace(khz), 64); err == nil && v > 0 {
			return v / 1000
		}
	}
	if v, err := strconv.ParseFloat(cur, 64); err == nil && v > 0 {
		return v
	}
	return 1000
}
