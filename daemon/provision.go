package daemon

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/openltm/openltm/grammar"
	"github.com/openltm/openltm/objects"
)

// sys provision: BIG-IP's modules and the level each runs at. openltm runs
// two of them, ltm (virtual servers, pools, monitors, iRules) and gtm (the
// GSLB DNS server for wide IPs), both at nominal unless an admin set another
// level; the others it does not have, so they stay at none, and asking for
// more is refused as BIG-IP refuses a module its license lacks [M].

// provisionModules are BIG-IP's provisionable modules (v14.1) and their
// names in its messages.
var provisionModules = map[string]string{
	"afm": "Advanced Firewall Manager", "am": "Application Acceleration Manager",
	"apm": "Access Policy Manager", "asm": "Application Security Manager",
	"avr": "Application Visibility and Reporting", "dos": "DDoS Hybrid Defender",
	"fps": "Fraud Protection Service", "gtm": "Global Traffic Manager",
	"ilx": "iRules Language Extensions", "lc": "Link Controller",
	"ltm": "Local Traffic Manager", "pem": "Policy Enforcement Manager",
	"sslo": "SSL Orchestrator", "swg": "Secure Web Gateway", "urldb": "URL Filtering",
}

// runsModule reports the modules openltm runs.
func runsModule(m string) bool { return m == "ltm" || m == "gtm" }

var (
	sysProvision      = schema.MustKind("sys provision")
	sysProvisionLevel = sysProvision.MustProp("level")
)

// provisionLevel is a module's level: what an admin set, else nominal for
// the modules openltm runs and none for the others.
func provisionLevel(cfg *objects.Config, m string) string {
	if o := cfg.Get(sysProvision, m); o != nil {
		if v := o.Props[sysProvisionLevel.Name]; v != nil && v.Str != "" {
			return v.Str
		}
	}
	if runsModule(m) {
		return "nominal"
	}
	return "none"
}

// provisionNames are the modules names selects (all when empty), or the
// BIG-IP error for a name that is none.
func provisionNames(names []string) ([]string, error) {
	all := make([]string, 0, len(provisionModules))
	for m := range provisionModules {
		all = append(all, m)
	}
	slices.Sort(all)
	if len(names) == 0 {
		return all, nil
	}
	var out []string
	for _, n := range names {
		n = strings.TrimPrefix(n, "/Common/")
		if _, ok := provisionModules[n]; !ok {
			return nil, objects.NotFound(sysProvision, n)
		}
		out = append(out, n)
	}
	return out, nil
}

// provisionCommand answers list and modify sys provision; handled is false
// for everything else. abs are the statement's words from the module on.
func (s *Session) provisionCommand(ctx context.Context, st *grammar.Statement, verb string, args []grammar.Node, abs []string, w io.Writer) (bool, error) {
	if !hasPrefix(abs, []string{"sys", "provision"}) {
		return false, nil
	}
	switch verb {
	case "list":
		var names []string
		for _, word := range abs[2:] {
			if sysProvision.Prop(word) == nil && word != "all-properties" && word != "one-line" {
				names = append(names, word)
			}
		}
		mods, err := provisionNames(names)
		if err != nil {
			return true, err
		}
		cfg := s.e.Config()
		for _, m := range mods {
			if l := provisionLevel(cfg, m); l != "none" {
				fmt.Fprintf(w, "sys provision %s {\n    level %s\n}\n", m, l)
			} else {
				fmt.Fprintf(w, "sys provision %s { }\n", m)
			}
		}
		return true, nil
	case "modify":
		if len(abs) < 3 {
			return false, nil // the usual "needs a name"
		}
		mods, err := provisionNames(abs[2:3])
		if err != nil {
			return true, err
		}
		m, level := mods[0], ""
		for i := 3; i+1 < len(abs); i++ {
			if abs[i] == "level" {
				level = abs[i+1]
			}
		}
		switch {
		case level == "":
		case runsModule(m) && level == "none":
			return true, objects.Invalid("%s (%s) cannot be deprovisioned: openltm always runs it", provisionModules[m], m)
		case !runsModule(m) && level != "none" && slices.Contains(sysProvisionLevel.Enum, level):
			return true, &objects.ConfigError{Code: "01070356", Msg: fmt.Sprintf("%s feature not licensed.", provisionModules[m])}
		}
		gen, err := s.e.Change(ctx, s.user, st.Source, CommitOptions{}, func(cfg *objects.Config) error {
			return s.change(st, "modify", args, cfg)
		})
		s.committed = gen
		return true, err
	}
	return false, nil
}

// showProvision prints show sys provision: each module, its level and
// whether openltm runs it [M: BIG-IP's table gives the CPU, memory and
// disk each module was given, which openltm does not divide].
func showProvision(e *Engine) RuntimeCommand {
	return RuntimeCommand{"show", "sys provision", func(_ context.Context, _ *Session, names, _ []string, w io.Writer) error {
		mods, err := provisionNames(names)
		if err != nil {
			return err
		}
		cfg := e.Config()
		bar := strings.Repeat("-", 56)
		fmt.Fprintf(w, "%s\nSys::Provision\n%-10s %-10s %s\n%s\n", bar, "Module", "Level", "Status", bar)
		for _, m := range mods {
			status := "not available"
			if runsModule(m) {
				status = "running"
			}
			fmt.Fprintf(w, "%-10s %-10s %s\n", m, provisionLevel(cfg, m), status)
		}
		return nil
	}}
}
