package daemon

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/openltm/openltm/cluster"
	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/objects/store"
)

// Geolocation databases travel with the device group's configuration, as
// a BIG-IP config sync carries its geolocation updates [M: BIG-IP installs
// an update on each device, or lets the sync carry it; openltm always
// carries it]. run sys geoip reload on a device of a group, once its
// databases loaded, stores them in the group's etcd (by content, once)
// and commits a generation naming them; every other device, applying that
// generation or any later one, fetches the files its own copies do not
// match, writes them to STATE-DIR/geoip and reloads. A device's own
// --geoip-db files are still read first.

// geoipKind is the cluster.File kind of a geolocation database.
const geoipKind = "geoip"

// geoipReceived lists, in STATE-DIR/geoip, the files the group gave the
// device: the ones a later set that leaves them out removes.
const geoipReceived = ".group-files"

func (e *Engine) geoipDir() string { return filepath.Join(e.opts.StateDir, "geoip") }

// publishGeoIP hands the device group the databases this device just
// loaded; it says nothing for a device in no group. It holds the commit
// lock, as a configuration change does.
func (h *clusterHook) publishGeoIP(ctx context.Context, user string) (string, error) {
	h.mu.Lock()
	m, applied, group := h.member, h.applied, h.group.Name
	h.mu.Unlock()
	if m == nil {
		if applied.Group != "" {
			return "", objects.Invalid("the databases were reloaded here, but device group %s was not reached: the device has not joined it", applied.Group)
		}
		return "", nil
	}
	if applied.Generation == 0 && m.SyncStatus().Head == 0 {
		return fmt.Sprintf("device group %s is awaiting its initial sync: run sys geoip reload again after it to hand the databases to the group", group), nil
	}
	paths := h.e.geoipPaths()
	if len(paths) == 0 {
		return "", nil
	}
	var files []cluster.File
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return "", objects.Invalid("device group %s: %v", group, unwrapPathErr(err))
		}
		sum := sha256.Sum256(data)
		h.setGeoSum(p, hex.EncodeToString(sum[:]))
		name := filepath.Base(p)
		if slices.ContainsFunc(files, func(f cluster.File) bool { return f.Name == name }) {
			return "", objects.Invalid("device group %s: two geolocation databases are named %s; the group keeps them by name", group, name)
		}
		f, err := m.Log().PutFile(ctx, geoipKind, name, data)
		if err != nil {
			return "", objects.Invalid("device group %s: %v; the databases were reloaded here only", group, err)
		}
		files = append(files, f)
	}
	e := h.e
	e.mu.Lock()
	defer e.mu.Unlock()
	cur := e.cur.Load()
	base := h.appliedGen()
	id, err := m.CommitFiles(ctx, base, store.Generation{Time: time.Now(), User: user, Summary: "run sys geoip reload",
		Config: groupTextOf(cur.cfg, cur.text), MasterKey: e.masterKeyBytes()}, files)
	if err != nil {
		var ce *cluster.ConflictError
		if errors.As(err, &ce) {
			return "", objects.Invalid("device group %s: generation %d was committed after %d, which this device runs; the databases were reloaded here only: run sys geoip reload again once the device is in sync", group, ce.Head, ce.Base)
		}
		return "", objects.Invalid("device group %s: %v; the databases were reloaded here only", group, err)
	}
	h.setApplied(group, id)
	h.poke()
	return fmt.Sprintf("handed to device group %s (generation %d)", group, id), nil
}

// geoipUpdate is what a group generation changes in STATE-DIR/geoip.
type geoipUpdate struct {
	write  map[string][]byte // name → content
	remove []string
	names  []string // the group's set
}

// fetchGeoIP reads from the group the files of g this device's copies do
// not match; nil when there is nothing to change. A generation naming no
// files leaves the device's databases alone. Every generation names the
// group's files, so a device hashes its own copy of each once (h.geoSums),
// not at every sync.
func (h *clusterHook) fetchGeoIP(ctx context.Context, l *cluster.Log, files []cluster.File) (*geoipUpdate, error) {
	e := h.e
	var u geoipUpdate
	for _, f := range files {
		if f.Kind != geoipKind {
			continue
		}
		u.names = append(u.names, f.Name)
		if h.geoSum(filepath.Join(e.geoipDir(), f.Name)) == f.SHA256 {
			continue
		}
		data, err := l.GetFile(ctx, f)
		if err != nil {
			return nil, err
		}
		if u.write == nil {
			u.write = map[string][]byte{}
		}
		u.write[f.Name] = data
	}
	if len(u.names) == 0 {
		return nil, nil
	}
	for _, n := range e.receivedGeoIP() {
		if !slices.Contains(u.names, n) {
			u.remove = append(u.remove, n)
		}
	}
	if len(u.write) == 0 && len(u.remove) == 0 {
		return nil, nil
	}
	return &u, nil
}

// installGeoIP writes an update into STATE-DIR/geoip and reloads.
func (h *clusterHook) installGeoIP(u *geoipUpdate) error {
	if u == nil {
		return nil
	}
	e := h.e
	dir := e.geoipDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for name, data := range u.write {
		if err := writeFileAtomic(filepath.Join(dir, name), data); err != nil {
			return err
		}
		s := sha256.Sum256(data)
		h.setGeoSum(filepath.Join(dir, name), hex.EncodeToString(s[:]))
	}
	for _, name := range u.remove {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		h.setGeoSum(filepath.Join(dir, name), "")
	}
	b, _ := json.Marshal(u.names)
	if err := writeFileAtomic(filepath.Join(dir, geoipReceived), b); err != nil {
		return err
	}
	return e.loadGeoIP()
}

// receivedGeoIP are the files the group gave the device before.
func (e *Engine) receivedGeoIP() []string {
	var names []string
	if b, err := os.ReadFile(filepath.Join(e.geoipDir(), geoipReceived)); err == nil {
		_ = json.Unmarshal(b, &names)
	}
	return names
}

// geoSum is the SHA-256 of the file at path, hashed once per path and
// content written ("" when it cannot be read).
func (h *clusterHook) geoSum(path string) string {
	h.mu.Lock()
	sum, ok := h.geoSums[path]
	h.mu.Unlock()
	if ok {
		return sum
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	s := sha256.Sum256(data)
	sum = hex.EncodeToString(s[:])
	h.setGeoSum(path, sum)
	return sum
}

// setGeoSum records what the device wrote at path ("" forgets it).
func (h *clusterHook) setGeoSum(path, sum string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if sum == "" {
		delete(h.geoSums, path)
		return
	}
	if h.geoSums == nil {
		h.geoSums = map[string]string{}
	}
	h.geoSums[path] = sum
}
