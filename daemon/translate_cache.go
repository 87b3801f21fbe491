package daemon

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/openltm/openltm/dataplane/httpcache"
	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/rules"
)

var (
	profileWebAccel = schema.MustKind("ltm profile web-acceleration")
	waSize          = profileWebAccel.MustProp("cache-size")
	waMaxEntries    = profileWebAccel.MustProp("cache-max-entries")
	waMaxAge        = profileWebAccel.MustProp("cache-max-age")
	waMinObject     = profileWebAccel.MustProp("cache-object-min-size")
	waMaxObject     = profileWebAccel.MustProp("cache-object-max-size")
	waInclude       = profileWebAccel.MustProp("cache-uri-include")
	waExclude       = profileWebAccel.MustProp("cache-uri-exclude")
	waPinned        = profileWebAccel.MustProp("cache-uri-pinned")
	waOverride      = profileWebAccel.MustProp("cache-uri-include-override")
	waAgingRate     = profileWebAccel.MustProp("cache-aging-rate")
	waInsertAge     = profileWebAccel.MustProp("cache-insert-age-header")
	waClientMode    = profileWebAccel.MustProp("cache-client-cache-control-mode")
)

// webCaches keeps one cache per web-acceleration profile across commits:
// a commit that leaves a profile's settings as they were keeps its cache
// and what it holds, one that changes them starts it empty; the virtual
// servers using a profile share its cache.
type webCaches struct {
	mu sync.Mutex
	m  map[string]webCache
}

type webCache struct {
	cfg string // the settings, as text: what a commit compares
	c   *httpcache.Cache
}

// get returns the cache of profile for cfg, the one it had when cfg is
// the same.
func (w *webCaches) get(cfg httpcache.Config) (*httpcache.Cache, error) {
	key := fmt.Sprintf("%+v", cfg)
	if w != nil {
		w.mu.Lock()
		defer w.mu.Unlock()
		if e, ok := w.m[cfg.Profile]; ok && e.cfg == key {
			return e.c, nil
		}
	}
	c, err := httpcache.New(cfg)
	if err != nil {
		return nil, err
	}
	if w != nil {
		if w.m == nil {
			w.m = map[string]webCache{}
		}
		w.m[cfg.Profile] = webCache{cfg: key, c: c}
	}
	return c, nil
}

// prune forgets the caches of profiles that are gone, so that what they
// held is freed (a running virtual keeps its own reference until a commit
// takes it away).
func (w *webCaches) prune(profiles []*objects.Object) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for name := range w.m {
		if !slices.ContainsFunc(profiles, func(o *objects.Object) bool { return o.Name == name }) {
			delete(w.m, name)
		}
	}
}

// lookup is the cache of a profile, nil when no commit made one.
func (w *webCaches) lookup(profile string) *httpcache.Cache {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.m[profile].c
}

// cacheConfig reads a web-acceleration profile's effective properties.
func (t *translator) cacheConfig(p *objects.Object) (httpcache.Config, error) {
	c := httpcache.Config{Profile: p.Name}
	e := func(pr *objects.Prop) string { return pr.Effective(t.cfg, p) }
	list := func(pr *objects.Prop) []string {
		if v := t.cfg.Effective(p, pr.Name); v != nil {
			return v.List
		}
		return nil
	}
	num := func(pr *objects.Prop) (int64, error) {
		n, err := strconv.ParseInt(e(pr), 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("%s %q is not a number", pr.Name, e(pr))
		}
		return n, nil
	}
	var err error
	var n int64
	if n, err = num(waSize); err != nil {
		return c, err
	}
	c.Size = n << 20
	if n, err = num(waMaxEntries); err != nil {
		return c, err
	}
	c.MaxEntries = int(n)
	if n, err = num(waMaxAge); err != nil {
		return c, err
	}
	c.MaxAge = time.Duration(n) * time.Second
	if n, err = num(waMinObject); err != nil {
		return c, err
	}
	c.MinObject = int(n)
	if n, err = num(waMaxObject); err != nil {
		return c, err
	}
	c.MaxObject = int(n)
	if n, err = num(waAgingRate); err != nil {
		return c, err
	}
	c.AgingRate = int(min(n, 11)) // (above 10: refused by httpcache.New)
	c.URIInclude, c.URIExclude, c.URIPinned = list(waInclude), list(waExclude), list(waPinned)
	c.URIOverride = list(waOverride)
	c.InsertAge = e(waInsertAge) != "disabled"
	c.HonorClient = e(waClientMode) != "all"
	return c, nil
}

// webAccelProfile checks a web-acceleration profile whether or not a
// virtual uses it, so that a bad setting is refused when it is made.
func (t *translator) webAccelProfile(o *objects.Object) {
	c, err := t.cacheConfig(o)
	if err == nil {
		_, err = httpcache.New(c)
	}
	if err != nil {
		t.skip(o, "%v", err)
	}
}

// cacheOptions is the virtual's web-acceleration cache: nil without the
// profile.
func (t *translator) cacheOptions(o *objects.Object) (*httpcache.Cache, error) {
	p := t.profile(o, profileWebAccel)
	if p == nil {
		return nil, nil
	}
	c, err := t.cacheConfig(p)
	if err != nil {
		return nil, fmt.Errorf("profile %s: %v", p.Name, err)
	}
	var w *webCaches
	if t.rules != nil && t.rules.e != nil {
		w = &t.rules.e.caches
	}
	cache, err := w.get(c)
	if err != nil {
		return nil, fmt.Errorf("profile %s: %v", p.Name, strings.TrimPrefix(err.Error(), p.Name+": "))
	}
	return cache, nil
}

// cacheNeeds refuses, as BIG-IP does (01070394), a rule list whose
// CACHE:: commands need a web-acceleration profile the virtual server
// lacks; the first such use is reported.
func (t *translator) cacheNeeds(o *objects.Object, list []*rules.Rule) bool {
	return t.profileNeeds(o, list, profileWebAccel, "WEBACCELERATION", (*rules.Rule).CacheNeeds) // translate_stream.go
}
