package daemon

import (
	"sync"

	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/rules"
)

// ruleCache compiles each rule body once: a commit recompiles only the
// rules whose text changed, and the dataplane gets the compiled form.
type ruleCache struct {
	mu sync.Mutex
	m  map[string]*rules.Rule // name + "\x00" + body
}

func (c *ruleCache) compile(name, body string) (*rules.Rule, error) {
	key := name + "\x00" + body
	c.mu.Lock()
	r := c.m[key]
	c.mu.Unlock()
	if r != nil {
		return r, nil
	}
	r, err := rules.Compile(name, body)
	if err != nil {
		return nil, &objects.ConfigError{Code: "01070151", Msg: "Rule [" + name + "] error: " + err.Error()}
	}
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]*rules.Rule{}
	}
	c.m[key] = r
	c.mu.Unlock()
	return r, nil
}

// prune drops compiled rules the configuration no longer has.
func (c *ruleCache) prune(cfg *objects.Config, k *objects.Kind) {
	keep := map[string]bool{}
	for _, o := range cfg.Of(k) {
		keep[o.Name+"\x00"+o.Str("definition")] = true
	}
	c.mu.Lock()
	for key := range c.m {
		if !keep[key] {
			delete(c.m, key)
		}
	}
	c.mu.Unlock()
}

// rulesHook refuses a commit whose iRules do not compile, naming the rule,
// line and column, as BIG-IP refuses them when they are saved.
type rulesHook struct{ e *Engine }

// Check implements Hook. A rule that does not compile is refused, unless
// it is loaded from a file (Lenient), where it is kept with a warning and
// the virtual servers using it carry no traffic; a rule that already failed
// in the running configuration does not block unrelated changes.
func (h rulesHook) Check(old, cfg *objects.Config, opts CommitOptions) error {
	k := h.e.schema.Kind("ltm rule")
	for _, o := range cfg.Of(k) {
		if _, err := h.e.rules.compile(o.Name, o.Str("definition")); err != nil {
			if prev := old.Get(k, o.Name); prev != nil && prev.Str("definition") == o.Str("definition") {
				continue
			}
			if !opts.Lenient {
				return err
			}
			if opts.Warn != nil {
				opts.Warn(err.Error() + "; kept, and virtual servers using it carry no traffic until it compiles")
			}
		}
	}
	return nil
}

// Apply implements Hook.
func (h rulesHook) Apply(_, cfg *objects.Config) error {
	h.e.rules.prune(cfg, h.e.schema.Kind("ltm rule"))
	return nil
}
