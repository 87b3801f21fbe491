package daemon

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/openltm/openltm/cluster"
	"github.com/openltm/openltm/cluster/heartbeat"
	"github.com/openltm/openltm/grammar"
	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/objects/store"
)

// The cm commands (device service clustering) that do more than change
// configuration: they rename the device, exchange certificates, talk to
// the device group's etcd cluster, or show its state. cmCommand answers
// them; everything else is left to Exec.

// headWords are the words of nodes up to the first block.
func headWords(nodes []grammar.Node) []string {
	var out []string
	for _, n := range nodes {
		w, ok := n.(*grammar.Word)
		if !ok {
			break
		}
		out = append(out, w.Text)
	}
	return out
}

// errNoCluster refuses a device group command on a device started without
// an etcd cluster.
var errNoCluster = objects.Invalid("device groups need the etcd cluster they are kept in: start ltmd with --cluster-endpoints (see docs/cluster.md)")

// cmCommand answers a cm command; handled is false for everything else.
func (s *Session) cmCommand(ctx context.Context, st *grammar.Statement, verb string, args []grammar.Node, w io.Writer) (handled bool, err error) {
	ws := headWords(args)
	abs := s.moduleFor(ws)
	is := func(prefix ...string) bool { return hasPrefix(abs, prefix) }
	h := s.e.cluster.Load()
	switch {
	case verb == "mv" && is("cm", "device"):
		return true, s.mvDevice(ctx, st, abs[2:], h)
	case verb == "modify" && is("cm", "device") && !is("cm", "device-group"):
		return true, s.modifySelfDevice(ctx, st, args, w)
	case (verb == "create" || verb == "modify" || verb == "delete") && is("cm", "device-group"):
		if h == nil {
			return true, errNoCluster
		}
		return true, s.deviceGroup(ctx, st, verb, args, abs, h, w)
	case verb == "modify" && is("cm", "trust-domain"):
		if h == nil {
			return true, errNoCluster
		}
		return true, s.trustDomain(ctx, st, args, h, w)
	case verb == "run" && is("cm", "config-sync"):
		if h == nil {
			return true, errNoCluster
		}
		return true, s.configSync(ctx, st, abs[2:], h, w)
	case verb == "run" && is("sys", "failover"):
		if h == nil {
			return true, objects.Invalid("Unable to go standby: the device is not in a sync-failover device group")
		}
		return true, s.failover(ctx, st, abs[2:], h, w)
	case verb == "show" && is("cm", "sync-status"):
		return true, s.showSyncStatus(h, w)
	case verb == "show" && (is("cm", "failover-status") || is("cm", "traffic-group")):
		return true, s.showFailover(h, w)
	case (verb == "list" || verb == "modify") && is("sys", "provision"):
		return s.provisionCommand(ctx, st, verb, args, abs, w) // provision.go
	case verb == "run" && is("sys", "geoip"):
		return false, nil // geoip.go
	case verb == "mv" || verb == "run" && (is("cm") || is("sys")):
		return true, synErr(st, []string{"run cm config-sync to-group NAME", "run sys failover standby", "run sys crypto check-cert", "run sys geoip lookup ADDRESS", "mv cm device NAME to NEW"},
			"%q unknown command", strings.Join(append([]string{verb}, ws...), " "))
	}
	return false, nil
}

// mvDevice renames the device: mv cm device OLD to NEW.
func (s *Session) mvDevice(ctx context.Context, st *grammar.Statement, ws []string, h *clusterHook) error {
	if len(ws) != 3 || ws[1] != "to" {
		return synErr(st, []string{"mv cm device NAME to NEW-NAME"}, "mv cm device takes a name, to, and the new name")
	}
	from, to := shortName(ws[0]), strings.TrimPrefix(ws[2], "/Common/")
	if err := validDevice(to); err != nil {
		return synErr(st, []string{"a device name: letters, digits, '.', '-', '_'"}, "%v", err)
	}
	if self := s.e.selfName(); from != self {
		return &objects.ConfigError{Code: "01020036", Msg: fmt.Sprintf("The requested device (/Common/%s) was not found; this device is %s.", from, self)}
	}
	if h != nil {
		h.mu.Lock()
		joined, group := h.member != nil, h.group.Name
		h.mu.Unlock()
		if joined {
			return objects.Invalid("Device %s is in device group %s: remove it from the device group (and the trust domain) before renaming it", from, group)
		}
	}
	gen, err := s.e.Change(ctx, s.user, st.Source, CommitOptions{}, func(cfg *objects.Config) error {
		o := cfg.Get(cmDevice, "/Common/"+from)
		var n *objects.Object
		if o != nil {
			n = o.Clone()
			cfg.Delete(o)
		} else {
			n = &objects.Object{Kind: cmDevice, Props: map[string]*objects.Value{}}
		}
		if cfg.Get(cmDevice, "/Common/"+to) != nil {
			return objects.Invalid("The requested device (/Common/%s) already exists.", to)
		}
		n.Name = "/Common/" + to
		n.Props[cmDeviceSelf.Name] = &objects.Value{Str: "true"}
		cfg.Put(n)
		return nil
	})
	s.committed = gen
	if h != nil {
		h.poke()
	}
	return err
}

func validDevice(name string) error {
	if name == "" {
		return fmt.Errorf("device name is empty")
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_') {
			return fmt.Errorf("device name %q: use letters, digits, '.', '-' or '_'", name)
		}
	}
	return nil
}

// modifySelfDevice is modify cm device: the device's own object exists
// from its first modify (BIG-IP always has it).
func (s *Session) modifySelfDevice(ctx context.Context, st *grammar.Statement, args []grammar.Node, w io.Writer) error {
	self := s.e.selfName()
	s.warnings = s.warnings[:0]
	opts := CommitOptions{Warn: func(m string) { s.warnings = append(s.warnings, m) }}
	gen, err := s.e.Change(ctx, s.user, st.Source, opts, func(cfg *objects.Config) error {
		if cfg.Get(cmDevice, "/Common/"+self) == nil {
			cfg.Put(&objects.Object{Kind: cmDevice, Name: "/Common/" + self,
				Props: map[string]*objects.Value{cmDeviceSelf.Name: {Str: "true"}}})
		}
		if err := s.change(st, "modify", args, cfg); err != nil {
			return err
		}
		if _, err := heartbeat.ParseUnicast(cmDeviceUnicast.Str(cfg.Get(cmDevice, "/Common/"+self))); err != nil {
			return objects.Invalid("cm device %s: %v", self, err)
		}
		return nil
	})
	s.committed = gen
	if err == nil {
		for _, m := range s.warnings {
			fmt.Fprintln(w, "Warning: "+m)
		}
	}
	if h := s.e.cluster.Load(); h != nil {
		h.poke()
	}
	return err
}

// groupDef reads a cm device-group object as the cluster's definition.
func groupDef(cfg *objects.Config, o *objects.Object) cluster.GroupDef {
	def := cluster.GroupDef{Name: shortName(o.Name), Type: cluster.GroupType(cmDGType.Effective(cfg, o)),
		AutoSync: cmDGAutoSync.Effective(cfg, o) == "enabled", NetworkFailover: cmDGNetFailover.Effective(cfg, o) == "enabled"}
	if v := cmDGDevices.Get(o); v != nil {
		for _, f := range v.List {
			if d := shortName(f); !slices.Contains(def.Devices, d) {
				def.Devices = append(def.Devices, d)
			}
		}
	}
	return def
}

// deviceGroup creates, modifies or deletes a device group: in the etcd
// cluster first (which checks that every device is trusted), then in the
// configuration.
func (s *Session) deviceGroup(ctx context.Context, st *grammar.Statement, verb string, args []grammar.Node, abs []string, h *clusterHook, w io.Writer) error {
	h.mu.Lock()
	conn, connErr := h.conn, h.connErr
	h.mu.Unlock()
	if conn == nil {
		return objects.Invalid("Unable to %s the device group: the etcd cluster is not reachable (%v)", verb, connErr)
	}
	// The change as the configuration would take it, checked first.
	cfg := s.e.Config().Clone()
	if err := s.change(st, verb, args, cfg); err != nil {
		return err
	}
	if len(abs) < 3 {
		return synErr(st, []string{"a device group name"}, "%s cm device-group needs a name", verb)
	}
	name := shortName(abs[2])
	switch verb {
	case "create":
		o := cfg.Get(cmDeviceGroup, objects.FullPath(s.folder, abs[2]))
		if o == nil {
			return objects.Invalid("device group %s was not created", name)
		}
		if err := h.trustSelf(ctx, conn); err != nil {
			return err
		}
		if err := conn.CreateGroup(ctx, groupDef(cfg, o)); err != nil {
			return err
		}
	case "modify":
		o := cfg.Get(cmDeviceGroup, objects.FullPath(s.folder, abs[2]))
		if o == nil {
			return objects.Invalid("The requested device group (/Common/%s) was not found.", name)
		}
		def := groupDef(cfg, o)
		if err := conn.ModifyGroup(ctx, name, func(g *cluster.GroupDef) error {
			g.Type, g.AutoSync, g.NetworkFailover, g.Devices = def.Type, def.AutoSync, def.NetworkFailover, def.Devices
			return nil
		}); err != nil {
			return err
		}
	case "delete":
		// Leave first, so the deletion is this device's own change, not
		// one for the group being deleted.
		h.mu.Lock()
		m, def := h.member, h.group
		h.mu.Unlock()
		if m != nil && def.Name == name {
			h.leave(m, def)
		}
		if err := conn.DeleteGroup(ctx, name); err != nil {
			return err
		}
	}
	h.poke()
	return s.commitOne(ctx, st, verb, args, w)
}

// trustDomain is modify cm trust-domain Root ca-devices add { ADDRESS }
// name NAME username USER password PASSWORD, and ca-devices delete { NAME }.
func (s *Session) trustDomain(ctx context.Context, st *grammar.Statement, args []grammar.Node, h *clusterHook, w io.Writer) error {
	usage := []string{"modify cm trust-domain Root ca-devices add { ADDRESS } name NAME username USER password PASSWORD",
		"modify cm trust-domain Root ca-devices delete { NAME }"}
	// Skip the words naming the command (cm trust-domain, or fewer in
	// the cm module) and the domain.
	i := 0
	for i < len(args) {
		if wd, ok := args[i].(*grammar.Word); ok && (wd.Text == "cm" || wd.Text == "trust-domain") {
			i++
			continue
		}
		break
	}
	if i >= len(args) {
		return synErr(st, usage, "modify cm trust-domain needs the domain, Root")
	}
	if wd, ok := args[i].(*grammar.Word); !ok || shortName(wd.Text) != "Root" {
		return synErr(args[i], []string{"Root"}, "the trust domain is Root")
	}
	i++
	var op string
	var targets []string
	kv := map[string]string{}
	for ; i < len(args); i++ {
		wd, ok := args[i].(*grammar.Word)
		if !ok {
			return synErr(args[i], usage, "unexpected { }")
		}
		switch wd.Text {
		case "ca-devices", "non-ca-devices":
			if i+2 >= len(args) {
				return synErr(wd, usage, "%s needs add or delete and { devices }", wd.Text)
			}
			opw, ok1 := args[i+1].(*grammar.Word)
			blk, ok2 := args[i+2].(*grammar.Block)
			if !ok1 || !ok2 || (opw.Text != "add" && opw.Text != "delete") {
				return synErr(args[i+1], usage, "%s needs add or delete and { devices }", wd.Text)
			}
			op = opw.Text
			targets = headWords(blk.Items)
			i += 2
		case "name", "username", "password":
			if i+1 >= len(args) {
				return synErr(wd, usage, "%s needs a value", wd.Text)
			}
			v, ok := args[i+1].(*grammar.Word)
			if !ok {
				return synErr(args[i+1], usage, "%s needs a value", wd.Text)
			}
			kv[wd.Text] = v.Text
			i++
		default:
			return synErr(wd, []string{"ca-devices", "name", "username", "password"}, "%q unknown property", wd.Text)
		}
	}
	switch op {
	case "add":
		if len(targets) != 1 || kv["name"] == "" || kv["username"] == "" {
			return synErr(st, usage, "ca-devices add takes one device address with its name, username and password")
		}
		fp, err := h.addToTrust(ctx, targets[0], kv["name"], kv["username"], kv["password"])
		if err != nil {
			return objects.Invalid("%v", err)
		}
		fmt.Fprintf(w, "Device %s (%s) added to trust domain Root; certificate SHA-256 %s\n", kv["name"], targets[0], fp)
		return nil
	case "delete":
		h.mu.Lock()
		conn := h.conn
		h.mu.Unlock()
		if conn == nil {
			return objects.Invalid("Unable to change the trust domain: the etcd cluster is not reachable")
		}
		for _, d := range targets {
			if err := conn.RemoveTrusted(ctx, shortName(d)); err != nil {
				return err
			}
		}
		return nil
	}
	return synErr(st, usage, "nothing to change in the trust domain")
}

// memberOf returns the membership of group ("" for any), or an error
// saying why there is none.
func (h *clusterHook) memberOf(group string) (*cluster.Member, error) {
	h.mu.Lock()
	m, def, applied, connErr := h.member, h.group, h.applied, h.connErr
	h.mu.Unlock()
	if m == nil {
		if applied.Group != "" {
			return nil, objects.Invalid("Device group %s is not reachable: %v", applied.Group, connErr)
		}
		return nil, objects.Invalid("This device is not a member of any device group")
	}
	if group != "" && shortName(group) != def.Name {
		return nil, objects.Invalid("This device is not a member of device group %s (it is in %s)", shortName(group), def.Name)
	}
	return m, nil
}

// configSync is run cm config-sync to-group G | from-group G.
func (s *Session) configSync(ctx context.Context, st *grammar.Statement, ws []string, h *clusterHook, w io.Writer) error {
	if len(ws) != 2 || (ws[0] != "to-group" && ws[0] != "from-group") {
		return synErr(st, []string{"run cm config-sync to-group NAME", "run cm config-sync from-group NAME"}, "config-sync needs to-group or from-group and a device group")
	}
	m, err := h.memberOf(ws[1])
	if err != nil {
		return err
	}
	group := m.Group().Name
	if ws[0] == "from-group" {
		if err := m.SyncFromGroup(ctx); err != nil {
			return err
		}
		s.committed = s.e.Generation()
		return nil
	}
	e := s.e
	e.mu.Lock()
	defer e.mu.Unlock()
	cur := e.cur.Load()
	start := time.Now()
	id, err := m.SyncToGroup(ctx, store.Generation{Time: start, User: s.user, Summary: st.Source, Config: groupText(cur.cfg), MasterKey: s.e.masterKeyBytes()})
	if err != nil {
		return err
	}
	h.mu.Lock()
	commits := h.commits
	h.mu.Unlock()
	if commits != nil {
		commits(time.Since(start))
	}
	h.setApplied(group, id)
	return nil
}

// failover is run sys failover standby [traffic-group NAME].
func (s *Session) failover(ctx context.Context, st *grammar.Statement, ws []string, h *clusterHook, w io.Writer) error {
	usage := []string{"run sys failover standby", "run sys failover standby traffic-group NAME"}
	if len(ws) == 0 || ws[0] != "standby" {
		return synErr(st, usage, "run sys failover takes standby")
	}
	tg := ""
	switch {
	case len(ws) == 3 && ws[1] == "traffic-group":
		tg = shortName(ws[2])
	case len(ws) != 1:
		return synErr(st, usage, "run sys failover standby takes an optional traffic-group NAME")
	}
	m, err := h.memberOf("")
	if err != nil {
		return objects.Invalid("Unable to go standby: %v", err)
	}
	if m.Group().Type != cluster.SyncFailover {
		return objects.Invalid("Unable to go standby: device group %s is %s", m.Group().Name, m.Group().Type)
	}
	return m.GoStandby(ctx, tg)
}

// showSyncStatus prints show cm sync-status as BIG-IP lays it out.
func (s *Session) showSyncStatus(h *clusterHook, w io.Writer) error {
	bar := strings.Repeat("-", 64)
	fmt.Fprintf(w, "%s\nCM::Sync Status\n%s\n", bar, bar)
	var st cluster.SyncStatus
	var group string
	if h != nil {
		h.mu.Lock()
		m, applied, connErr := h.member, h.applied, h.connErr
		h.mu.Unlock()
		switch {
		case m != nil:
			st, group = m.SyncStatus(), m.Group().Name
		case applied.Group != "":
			st = cluster.SyncStatus{Status: cluster.StatusDisconnected, Color: "red",
				Summary: fmt.Sprintf("The device cannot reach device group %s: %v", applied.Group, connErr)}
			group = applied.Group
		}
	}
	if st.Status == "" {
		st = cluster.SyncStatus{Status: "Standalone", Color: "green", Summary: "There is no device group"}
	}
	fmt.Fprintf(w, "%-9s%s\n%-9s%s\n%-9s%s\n", "Color", st.Color, "Status", st.Status, "Summary", st.Summary)
	for i, d := range st.Details {
		label := ""
		if i == 0 {
			label = "Details"
		}
		if group != "" && !strings.HasPrefix(d, "Recommended") {
			d = group + ": " + d
		}
		fmt.Fprintf(w, "%-9s%s\n", label, d)
	}
	return nil
}

// showFailover prints show cm failover-status (and show cm traffic-group).
func (s *Session) showFailover(h *clusterHook, w io.Writer) error {
	bar := strings.Repeat("-", 64)
	fmt.Fprintf(w, "%s\nCM::Failover Status\n%s\n", bar, bar)
	var m *cluster.Member
	if h != nil {
		h.mu.Lock()
		m = h.member
		h.mu.Unlock()
	}
	if m == nil || m.Group().Type != cluster.SyncFailover {
		fmt.Fprintf(w, "%-9s%s\n%-9s%s\n%-9s%s\n", "Color", "green", "Status", "ACTIVE", "Summary", "The device is not in a sync-failover device group: it serves every address")
		return nil
	}
	tgs := m.FailoverStatus()
	state := strings.ToUpper(m.FailoverState())
	color := "green"
	if state != "ACTIVE" {
		color = "gray"
	}
	active := 0
	for _, t := range tgs {
		if t.Active {
			active++
		}
	}
	fmt.Fprintf(w, "%-9s%s\n%-9s%s\n%-9s%d/%d active\n", "Color", color, "Status", state, "Summary", active, len(tgs))
	fmt.Fprintf(w, "\n%-26s %-8s %-16s %s\n", "Traffic Group", "State", "Active Device", "Next Active")
	for _, t := range tgs {
		st := "standby"
		if t.Active {
			st = "active"
		}
		owner, next := t.Owner, t.Next
		if owner == "" {
			owner = "-"
		}
		if next == "" {
			next = "-"
		}
		fmt.Fprintf(w, "%-26s %-8s %-16s %s\n", t.Name, st, owner, next)
	}
	showHAScores(w, m, tgs) // cluster_hagroup.go
	showLoads(w, m, tgs)
	if !m.Group().NetworkFailover {
		fmt.Fprintf(w, "\nNetwork failover: disabled (failover by the etcd lease only)\n")
		return nil
	}
	h.mu.Lock()
	addrs, locked := h.hbAddrs, h.hbLocked
	h.mu.Unlock()
	var on []string
	for _, a := range addrs {
		on = append(on, a.String())
	}
	if len(on) == 0 && len(locked) > 0 {
		on = []string{"none"}
	} else if len(on) == 0 {
		on = []string{"none (set the device's unicast-address)"}
	}
	for _, a := range locked {
		on = append(on, fmt.Sprintf("(not %s: port lockdown, no net self of that address allows udp:%d)", a, a.Port()))
	}
	fmt.Fprintf(w, "\nNetwork failover: heartbeats on %s\n", strings.Join(on, " "))
	fmt.Fprintf(w, "%-16s %-22s %-8s %-10s %-5s %s\n", "Peer", "From", "Heard", "Generation", "etcd", "Active For")
	for _, p := range m.HeardPeers() {
		etcd := "no"
		if p.Etcd {
			etcd = "yes"
		}
		act := strings.Join(p.Active, " ")
		if act == "" {
			act = "-"
		}
		fmt.Fprintf(w, "%-16s %-22s %-8s %-10d %-5s %s\n", p.Device, p.Address, p.Age.Round(time.Millisecond), p.Generation, etcd, act)
	}
	return nil
}
