package daemon

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"net/netip"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/persist"
	"github.com/openltm/openltm/objects"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Persistence mirroring (`mirror enabled` on a persistence profile): the
// device active for a traffic group publishes the records of its mirrored
// virtual servers to the group's etcd cluster every mirrorEvery; the
// device that takes the traffic group over reads them right after binding
// its addresses, so clients stay on their members across a failover. (It
// holds the group's lease then, so etcd answers.) Records live under
// /openltm/groups/G/persist/, one key each.

// mirrorEvery is how often the active device publishes changed records:
// what a failover can lose.
const mirrorEvery = 250 * time.Millisecond

// mirrorMaxOps bounds one transaction (etcd's --max-txn-ops is 128).
const mirrorMaxOps = 128

// persistMirrorProp is `mirror` of every persistence kind that keeps
// records: the address, universal, cookie (hash method) and hash kinds,
// and ssl, msrdp and sip, whose records are keyed by a session ID, an
// RDP cookie or a Call-ID and load back as the others do.
var persistMirrorProp = common("mirror", append(persistRun[:len(persistRun):len(persistRun)], persistSSL, persistMSRDP, persistSIPK)...)

// mirrorRec is one record as mirrored.
type mirrorRec struct {
	Virtual string `json:"virtual"`
	Pool    string `json:"pool"`
	Mode    string `json:"mode"`
	Key     string `json:"key"`
	// RawKey carries a key that is not UTF-8 (a hash profile's payload
	// key may be any bytes), which JSON would not keep as it is.
	RawKey  []byte        `json:"raw_key,omitempty"`
	Member  string        `json:"member"`
	Client  string        `json:"client,omitempty"`
	Timeout time.Duration `json:"timeout"`
	Expires time.Time     `json:"expires"`
}

func (r mirrorRec) id() string {
	return hex.EncodeToString([]byte(r.Virtual + "\x00" + r.Mode + "\x00" + r.Key + string(r.RawKey)))
}

// mirror is the device's side of persistence mirroring.
type mirror struct {
	h *clusterHook

	mu   sync.Mutex           // sent; held through a publish
	sent map[string]mirrorRec // what this device published, by key
}

func (h *clusterHook) mirrorPrefix(group string) string {
	return "/openltm/groups/" + group + "/persist/"
}

// plane is the dataplane the engine drives, nil when none is attached.
func (e *Engine) plane() *dataplane.Plane {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, hk := range e.hooks {
		if ph, ok := hk.(*planeHook); ok {
			return ph.p
		}
	}
	return nil
}

// mirrored returns the virtual servers whose persistence is mirrored, with
// their traffic group ("" when they do not float).
func mirrored(cfg *objects.Config) map[string]string {
	tgOf := addressTrafficGroups(cfg)
	out := map[string]string{}
	for _, o := range cfg.Of(ltmVirtual) {
		on := false
		for _, name := range []string{defaultPersistName(o), virtualFallbackPersist.Str(o)} {
			if name == "" || name == "none" {
				continue
			}
			if p := cfg.Lookup(schema, specPersistence, name); p != nil && p.Kind != nil && !p.Kind.Passive &&
				persistMirrorProp.Effective(cfg, p) == "enabled" {
				on = true
			}
		}
		if !on {
			continue
		}
		tg := ""
		if d, err := objects.ParseDest(virtualDestination.Str(o)); err == nil {
			tg = tgOf(d.AddrPort().Addr())
		}
		out[o.Name] = tg
	}
	return out
}

// runMirror follows and publishes mirrored records until ctx ends.
func (h *clusterHook) runMirror(ctx context.Context) {
	mr := &mirror{h: h, sent: map[string]mirrorRec{}}
	h.mu.Lock()
	h.mirror = mr
	h.mu.Unlock()
	t := time.NewTicker(mirrorEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		mr.publish(ctx)
	}
}

// publish sends the records of mirrored virtual servers this device is
// active for that changed since the last call, and deletes those gone.
func (mr *mirror) publish(ctx context.Context) {
	h := mr.h
	f := h.e.float.Load()
	h.mu.Lock()
	conn, member, group := h.conn, h.member, h.group.Name
	h.mu.Unlock()
	p := h.e.plane()
	if f == nil || conn == nil || member == nil || p == nil {
		return
	}
	mr.mu.Lock()
	defer mr.mu.Unlock()
	virtuals := mirrored(h.e.Config())
	if len(virtuals) == 0 && len(mr.sent) == 0 {
		return
	}
	mine := func(v string) bool {
		tg, ok := virtuals[v]
		return ok && tg != "" && f.active[tg]
	}
	now := map[string]mirrorRec{}
	p.PersistRecords(persist.Filter{}, func(r *persist.Record) bool {
		if mine(r.Virtual) {
			m := mirrorOf(r)
			now[m.id()] = m
		}
		return true
	})
	prefix := h.mirrorPrefix(group)
	var ops []clientv3.Op
	var put []mirrorRec
	for k, r := range now {
		old, ok := mr.sent[k]
		// A record used again is sent again once half its time has
		// passed, so the copy does not expire long before it.
		if !ok || old.Member != r.Member || old.Pool != r.Pool || r.Expires.Sub(old.Expires) > r.Timeout/2 {
			b, _ := json.Marshal(r)
			ops = append(ops, clientv3.OpPut(prefix+k, string(b)))
			put = append(put, r)
		}
	}
	var gone []string
	for k, r := range mr.sent {
		if _, ok := now[k]; !ok && mine(r.Virtual) {
			ops = append(ops, clientv3.OpDelete(prefix+k))
			gone = append(gone, k)
		}
	}
	for len(ops) > 0 {
		n := min(len(ops), mirrorMaxOps)
		rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		_, err := conn.Client().Txn(rctx).Then(ops[:n]...).Commit()
		cancel()
		if err != nil {
			return // sent again next time
		}
		ops = ops[n:]
	}
	for _, r := range put {
		mr.sent[r.id()] = r
	}
	for _, k := range gone {
		delete(mr.sent, k)
	}
}

// mirrorOf is a record as it is mirrored; load reads it back whatever
// its mode.
func mirrorOf(r *persist.Record) mirrorRec {
	m := mirrorRec{Virtual: r.Virtual, Pool: r.Pool, Mode: r.Mode.String(), Key: r.Key.String(),
		Member: r.Member.String(), Timeout: r.Timeout, Expires: r.Expires}
	if r.Client.IsValid() {
		m.Client = r.Client.String()
	}
	if !utf8.ValidString(m.Key) {
		m.RawKey, m.Key = []byte(m.Key), ""
	}
	return m
}

// heldRec is a mirrored record read from etcd, with its key.
type heldRec struct {
	key string
	rec mirrorRec
}

// fetch reads the mirrored records of a traffic group's virtual servers
// from etcd. It is done before the device binds the traffic group's
// addresses, so that loading them after is only local work.
func (mr *mirror) fetch(tg string) []heldRec {
	h := mr.h
	h.mu.Lock()
	conn, group := h.conn, h.group.Name
	h.mu.Unlock()
	if conn == nil {
		return nil
	}
	virtuals := mirrored(h.e.Config())
	if len(virtuals) == 0 {
		return nil
	}
	if ok, err := conn.Connected(); !ok {
		// A takeover by network failover while etcd is down: the
		// addresses come first; the records are in etcd, out of reach.
		h.log.Warn("mirrored persistence records not read: etcd is unreachable", "traffic-group", tg, "err", err)
		return nil
	}
	prefix := h.mirrorPrefix(group)
	ctx, cancel := context.WithTimeout(h.ctx, 3*time.Second)
	resp, err := conn.Client().Get(ctx, prefix, clientv3.WithPrefix())
	cancel()
	if err != nil {
		h.log.Warn("mirrored persistence records not read", "traffic-group", tg, "err", err)
		return nil
	}
	var out []heldRec
	for _, kv := range resp.Kvs {
		var r mirrorRec
		if json.Unmarshal(kv.Value, &r) != nil {
			continue
		}
		if vt, ok := virtuals[r.Virtual]; ok && vt == tg {
			out = append(out, heldRec{key: strings.TrimPrefix(string(kv.Key), prefix), rec: r})
		}
	}
	return out
}

// load puts fetched records in the dataplane, once the traffic group's
// virtual servers run, and makes them this device's own to publish.
func (mr *mirror) load(recs []heldRec) int {
	h := mr.h
	p := h.e.plane()
	if p == nil {
		return 0
	}
	mr.mu.Lock()
	defer mr.mu.Unlock()
	n := 0
	for _, hr := range recs {
		r := hr.rec
		mode, ok := persist.ParseMode(r.Mode)
		member, err := netip.ParseAddrPort(r.Member)
		if !ok || err != nil {
			continue
		}
		if r.RawKey != nil {
			r.Key = string(r.RawKey)
		}
		client, _ := netip.ParseAddr(r.Client)
		timeout := r.Timeout
		if !r.Expires.IsZero() {
			if timeout = time.Until(r.Expires); timeout <= 0 {
				continue // expired meanwhile
			}
		}
		if err := p.PersistSave(dataplane.PersistKey{Virtual: r.Virtual, Pool: r.Pool, Mode: mode, Key: r.Key,
			Client: client, Timeout: timeout}, r.Pool, member); err != nil {
			h.log.Debug("mirrored persistence record not loaded", "virtual", r.Virtual, "key", r.Key, "err", err)
			continue
		}
		mr.sent[hr.key] = r
		n++
	}
	return n
}
