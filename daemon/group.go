package daemon

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/openltm/openltm/objects"
)

// groupPath is where a commit goes beyond this device: its device group
// (hook_cluster.go). The engine calls it under its commit lock, once the
// runtimes run the new configuration and before it is stored, so a change
// the group refuses (another device committed first, etcd is unreachable)
// is undone everywhere and nothing is stored. A standalone device has none.
type groupPath interface {
	// publish makes cfg's synced part the group's next generation when
	// it differs from old's (text and oldText are their whole texts); an
	// error refuses the commit.
	publish(ctx context.Context, user, summary string, old *objects.Config, oldText string, cfg *objects.Config, text string) error
	// catchUp applies the group's newest generation after publish lost a
	// race to another device, so the change can be built again on top of
	// it, as a second admin's change on one device is; false when the
	// device must not take it by itself (auto-sync disabled).
	catchUp(ctx context.Context) (bool, error)
}

// errConflict is what publish returns when another device committed first.
var errConflict = errors.New("device group conflict")

// maxCatchUps bounds how often one change is built again after other
// devices committed first.
const maxCatchUps = 5

// Device-local kinds and properties: what config sync leaves out, as BIG-IP
// does (the device's own identity, its hostname, its non-floating self IPs).
var (
	cmDevice         = schema.MustKind("cm device")
	cmDeviceSelf     = cmDevice.MustProp("self-device")
	cmDeviceUnicast  = cmDevice.MustProp("unicast-address")
	cmDeviceCapacity = cmDevice.MustProp("ha-capacity")
	cmDeviceGroup    = schema.MustKind("cm device-group")
	cmDGType         = cmDeviceGroup.MustProp("type")
	cmDGDevices      = cmDeviceGroup.MustProp("devices")
	cmDGAutoSync     = cmDeviceGroup.MustProp("auto-sync")
	cmDGNetFailover  = cmDeviceGroup.MustProp("network-failover")
	cmTrafficGroup   = schema.MustKind("cm traffic-group")
	cmTGHAOrder      = cmTrafficGroup.MustProp("ha-order")
	cmTGFailback     = cmTrafficGroup.MustProp("auto-failback-enabled")
	cmTGFailbackTime = cmTrafficGroup.MustProp("auto-failback-time")
	cmTGFloating     = cmTrafficGroup.MustProp("is-floating")
	cmTGLoadFactor   = cmTrafficGroup.MustProp("ha-load-factor")
	netSelfTG        = netSelf.MustProp("traffic-group")
	ltmVirtualAddr   = schema.MustKind("ltm virtual-address")
	vaddrTG          = ltmVirtualAddr.MustProp("traffic-group")
	vaddrEnabled     = ltmVirtualAddr.MustProp("enabled")
)

// localOnlyTG is the traffic group of what never floats.
const localOnlyTG = "traffic-group-local-only"

// deviceLocal reports whether o stays on this device when the
// configuration is synced.
func deviceLocal(cfg *objects.Config, o *objects.Object) bool {
	switch o.Kind {
	case cmDevice, sysGlobal, sysHAGroup: // an HA group is each device's own, as on BIG-IP (cluster_hagroup.go)
		return true
	case netSelf:
		return shortName(netSelfTG.Effective(cfg, o)) == localOnlyTG
	}
	return false
}

// shortName drops the folder of a name: /Common/traffic-group-1 is
// traffic-group-1.
func shortName(n string) string {
	if i := strings.LastIndexByte(n, '/'); i >= 0 {
		return n[i+1:]
	}
	return n
}

// groupText is cfg's text without its device-local objects: what the
// device group holds.
func groupText(cfg *objects.Config) string { return groupTextOf(cfg, cfg.Text()) }

// groupTextOf is groupText of a configuration whose whole text is known:
// each object's text is its own block of it, so the device's few local
// objects are cut out without printing the rest again.
func groupTextOf(cfg *objects.Config, text string) string {
	for _, k := range []*objects.Kind{cmDevice, sysGlobal, netSelf, sysHAGroup} {
		for _, o := range cfg.Of(k) {
			if deviceLocal(cfg, o) {
				text = strings.Replace(text, objects.Format(o, objects.PrintOpts{}), "", 1)
			}
		}
	}
	return text
}

// withLocal builds the configuration a group text becomes on this device:
// the group's objects and the device's own from running. Objects whose
// text is unchanged are taken from running as they are, so only what
// changed is parsed (30,000 objects take seconds to parse, one change
// does not); the result is checked to print as the group text, and read
// whole when it does not.
func (e *Engine) withLocal(name string, text string, running *objects.Config) (*objects.Config, error) {
	known := make(map[string]*objects.Object, running.Len())
	for _, o := range running.Objects() {
		if o.Kind == nil || !deviceLocal(running, o) {
			known[objects.Format(o, objects.PrintOpts{})] = o
		}
	}
	cfg := e.schema.Builtins()
	var changed strings.Builder
	for rest := text; rest != ""; {
		chunk := nextChunk(rest)
		rest = rest[len(chunk):]
		if o, ok := known[chunk]; ok {
			cfg.Put(o)
		} else {
			changed.WriteString(chunk)
		}
	}
	if err := e.putStored(cfg, name, changed.String()); err != nil {
		return nil, err
	}
	if groupText(cfg) != text {
		// Not what the group holds (an object printed across chunks
		// in an unexpected way): read the whole text.
		cfg = e.schema.Builtins()
		if err := e.putStored(cfg, name, text); err != nil {
			return nil, err
		}
	}
	for _, o := range running.Objects() {
		if o.Kind != nil && deviceLocal(running, o) {
			cfg.Put(o)
		}
	}
	return cfg, nil
}

// putStored reads stored text into cfg, leaving out device-local objects.
func (e *Engine) putStored(cfg *objects.Config, name, text string) error {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	objs, _, err := e.schema.ReadStored(name, []byte(text))
	if err != nil {
		return err
	}
	for _, o := range objs {
		if o.Kind == nil || !deviceLocal(cfg, o) {
			cfg.Put(o)
		}
	}
	return nil
}

// nextChunk is the first object's text in a configuration text: up to the
// next line that starts in the first column with neither a space nor a
// closing brace. An object whose text has such lines inside (an iRule's
// body) comes in several chunks, none of which is an object's whole text.
func nextChunk(text string) string {
	i := strings.IndexByte(text, '\n')
	for i >= 0 && i+1 < len(text) {
		switch text[i+1] {
		case ' ', '\t', '}', '\n':
		default:
			return text[:i+1]
		}
		j := strings.IndexByte(text[i+1:], '\n')
		if j < 0 {
			return text
		}
		i += 1 + j
	}
	return text
}

// applyGroupLocked runs a configuration text the device group committed:
// the device's own objects are kept, the runtimes take it hitlessly and it
// is stored as a local generation. It is not published again. e.mu is
// held.
func (e *Engine) applyGroupLocked(ctx context.Context, name, user, summary, text string, masterKey []byte) error {
	if err := e.adoptMasterKeyLocked(ctx, name, masterKey); err != nil {
		return err
	}
	old := e.cur.Load()
	start := time.Now()
	cfg, err := e.withLocal(name, text, old.cfg)
	if err != nil {
		return fmt.Errorf("reading %s: %w", name, err)
	}
	e.log.Debug("config sync read", "from", name, "objects", cfg.Len(), "took", time.Since(start))
	warn := func(m string) { e.log.Warn("config sync", "from", name, "warning", m) }
	_, err = e.commitLocked(ctx, old, user, summary, cfg, CommitOptions{Lenient: true, Warn: warn, fromGroup: true})
	return err
}

// setGroupPath plugs the device group into the commit path (before
// sessions start).
func (e *Engine) setGroupPath(g groupPath) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.group = g
}
