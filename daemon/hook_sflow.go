package daemon

import (
	"context"
	"hash/fnv"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/openltm/openltm/daemon/render"
	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/sflow"
	"github.com/openltm/openltm/hoststat"
	"github.com/openltm/openltm/objects"
	"golang.org/x/sys/unix"
)

// sFlow export (dataplane/sflow): the receivers, the global settings, and
// each http virtual's sampler and counters.
var (
	sflowReceiver     = schema.MustKind("sys sflow receiver")
	sflowRecvAddress  = sflowReceiver.MustProp("address")
	sflowRecvPort     = sflowReceiver.MustProp("port")
	sflowRecvSize     = sflowReceiver.MustProp("max-datagram-size")
	sflowRecvState    = sflowReceiver.MustProp("state")
	sflowGlobalHTTP   = schema.MustKind("sys sflow global-settings http")
	sflowGlobalIf     = schema.MustKind("sys sflow global-settings interface")
	sflowGlobalSystem = schema.MustKind("sys sflow global-settings system")
	sflowGlobalVLAN   = schema.MustKind("sys sflow global-settings vlan")
	httpSFlowBlock    = profileHTTP.MustProp("sflow")
)

// sflowVirtual is an http virtual's sFlow settings as they apply.
type sflowVirtual struct {
	name    string
	sampler *sflow.Sampler
	rate    uint32
	poll    time.Duration
}

// sflowPlan is what a translation asks of sFlow: the enabled receivers,
// the poll intervals, and the http virtuals' settings.
type sflowPlan struct {
	receivers                []sflow.Receiver
	systemPoll, ifPoll       time.Duration
	vlanPoll                 time.Duration
	vlanRate                 uint32
	vlans                    []sflowVLAN
	virtuals                 []sflowVirtual
	hostname                 string
	receiverNames, disabledR []string
}

// sflowGlobal is a global-settings singleton's number prop, its default
// when the singleton was never changed.
func sflowGlobal(cfg *objects.Config, k *objects.Kind, prop string) uint64 {
	v := k.MustProp(prop).Default
	if o := cfg.Get(k, ""); o != nil {
		v = cfg.EffectiveStr(o, prop)
	}
	n, _ := strconv.ParseUint(v, 10, 64)
	return n
}

// sflowSampler gives an http virtual its sFlow settings: the http profile
// prof's sflow block, each value from sys sflow global-settings http
// unless its -global switch says no. It returns the virtual's sampler
// when some receiver is enabled and the sampling rate is not 0 (nil
// otherwise: sFlow then costs the virtual's requests one nil check).
func (t *translator) sflowSampler(o, prof *objects.Object) *sflow.Sampler {
	if t.rules == nil || t.rules.e == nil || !sflowAnyReceiver(t.cfg) {
		return nil
	}
	f := subSettings(t.cfg.Effective(prof, httpSFlowBlock.Name))
	rate := sflowGlobal(t.cfg, sflowGlobalHTTP, "sampling-rate")
	if f["sampling-rate-global"] == "no" {
		rate, _ = strconv.ParseUint(f["sampling-rate"], 10, 32)
	}
	poll := sflowGlobal(t.cfg, sflowGlobalHTTP, "poll-interval")
	if f["poll-interval-global"] == "no" {
		poll, _ = strconv.ParseUint(f["poll-interval"], 10, 32)
	}
	sv := sflowVirtual{name: o.Name, rate: uint32(rate), poll: time.Duration(poll) * time.Second}
	if rate > 0 {
		sv.sampler = t.rules.e.sflow.sampler(o.Name)
	}
	t.rules.sflow = append(t.rules.sflow, sv)
	return sv.sampler
}

// sflowAnyReceiver says whether cfg enables a receiver.
func sflowAnyReceiver(cfg *objects.Config) bool {
	for _, r := range cfg.Of(sflowReceiver) {
		if sflowRecvState.Effective(cfg, r) == "enabled" {
			return true
		}
	}
	return false
}

// sflowIndex is a virtual's data source index [M: BIG-IP does not say
// how it numbers them; openltm takes 24 bits of the FNV-1a hash of the
// virtual's full path, the same on every start, and show sys sflow
// data-source http prints it].
func sflowIndex(name string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(name))
	return h.Sum32() & 0xffffff
}

// sflowPlanOf reads the receivers and global settings of cfg; virtuals
// are the http virtuals' settings the translation gathered.
func sflowPlanOf(cfg *objects.Config, virtuals []sflowVirtual) (*sflowPlan, []string) {
	p := &sflowPlan{virtuals: virtuals, hostname: "openltm.local"}
	var refused []string
	for _, r := range cfg.Of(sflowReceiver) {
		p.receiverNames = append(p.receiverNames, r.Name)
		if sflowRecvState.Effective(cfg, r) != "enabled" {
			p.disabledR = append(p.disabledR, r.Name)
			continue
		}
		a, err := netip.ParseAddr(sflowRecvAddress.Effective(cfg, r))
		if err != nil || a.IsUnspecified() {
			refused = append(refused, "sys sflow receiver "+r.Name+": an enabled receiver needs an IPv4 or IPv6 address (address A.B.C.D)")
			continue
		}
		port, _ := strconv.ParseUint(sflowRecvPort.Effective(cfg, r), 10, 16)
		size, _ := strconv.Atoi(sflowRecvSize.Effective(cfg, r))
		p.receivers = append(p.receivers, sflow.Receiver{Name: r.Name, Addr: netip.AddrPortFrom(a, uint16(port)), MaxDatagram: size})
	}
	if len(p.receivers) == 0 {
		p.virtuals = nil
		return p, refused
	}
	p.systemPoll = time.Duration(sflowGlobal(cfg, sflowGlobalSystem, "poll-interval")) * time.Second
	p.ifPoll = time.Duration(sflowGlobal(cfg, sflowGlobalIf, "poll-interval")) * time.Second
	p.vlanPoll = time.Duration(sflowGlobal(cfg, sflowGlobalVLAN, "poll-interval")) * time.Second
	p.vlanRate = uint32(sflowGlobal(cfg, sflowGlobalVLAN, "sampling-rate"))
	for _, vo := range cfg.Of(netVLAN) {
		tag, err := strconv.Atoi(netVLANTag.Effective(cfg, vo))
		if err != nil || tag < 1 || tag > 4094 {
			continue
		}
		p.vlans = append(p.vlans, sflowVLAN{tag: uint32(tag), ifs: vlanInterfaces(netVLANInterfaces.Str(vo))})
	}
	if gs := cfg.Get(sysGlobal, ""); gs != nil && sysGlobalHostname.Str(gs) != "" {
		p.hostname = sysGlobalHostname.Str(gs)
	}
	return p, refused
}

// sflowRuntime is the running sFlow agent and the samplers of the http
// virtuals, kept by name across commits (their sequence numbers and
// sample pools go on).
type sflowRuntime struct {
	mu       sync.Mutex
	agent    *sflow.Agent
	key      string
	samplers map[string]*sflow.Sampler
	stats    sflow.Stats
	plan     *sflowPlan
	// packets samples the tagged VLANs' frames (global-settings vlan
	// sampling-rate), one sampler per VLAN; packetsKey tells whether a
	// new plan changes them.
	packets    []*sflow.PacketSampler
	packetsKey string
}

// sampler is the named virtual's sampler, made at first use.
func (r *sflowRuntime) sampler(name string) *sflow.Sampler {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.samplers == nil {
		r.samplers = map[string]*sflow.Sampler{}
	}
	s := r.samplers[name]
	if s == nil {
		s = sflow.NewSampler(sflow.SourceID(sflow.ClassLogical, sflowIndex(name)))
		r.samplers[name] = s
	}
	return s
}

// receiversKey tells two receiver lists apart.
func receiversKey(rs []sflow.Receiver) string {
	var b strings.Builder
	for _, r := range rs {
		b.WriteString(r.Addr.String() + "/" + strconv.Itoa(r.MaxDatagram) + ";")
	}
	return b.String()
}

// sflowApply puts a plan in service: the agent is opened again only when
// the receivers changed; the samplers get their rates and the agent its
// counter sources, which read the virtuals' counters from plane (taken
// here: the agent's loop must not wait for the engine's commit lock,
// which the commit calling this holds). A nil plan stops sFlow.
func (e *Engine) sflowApply(p *sflowPlan, plane *dataplane.Plane) {
	r := &e.sflow
	r.mu.Lock()
	defer r.mu.Unlock()
	if p == nil {
		p = &sflowPlan{}
	}
	r.plan = p
	if key := receiversKey(p.receivers); key != r.key {
		if r.agent != nil {
			r.agent.Close()
			r.agent = nil
		}
		r.key = key
		if len(p.receivers) > 0 {
			a, err := sflow.NewAgent(p.receivers, e.started, &r.stats)
			if err != nil {
				e.log.Error("sflow: the receivers' sockets could not be opened", "err", err)
				r.key = ""
			} else {
				r.agent = a
			}
		}
	}
	rates := map[string]uint32{}
	for _, v := range p.virtuals {
		rates[v.name] = v.rate
	}
	for name, s := range r.samplers {
		if rate := rates[name]; rate > 0 && r.agent != nil {
			s.Set(r.agent, rate)
		} else {
			s.Set(nil, 0)
		}
	}
	if r.agent == nil {
		r.stopPackets()
		return
	}
	var srcs []*sflow.CounterSource
	for _, v := range p.virtuals {
		if v.poll > 0 {
			name := v.name
			srcs = append(srcs, &sflow.CounterSource{ID: sflow.SourceID(sflow.ClassLogical, sflowIndex(name)), Interval: v.poll,
				Append: func(b []byte) ([]byte, int) { return sflow.AppendHTTPCounters(b, sflowHTTPCounters(plane, name)), 1 }})
		}
	}
	if p.systemPoll > 0 {
		host := p.hostname
		srcs = append(srcs, &sflow.CounterSource{ID: sflow.SourceID(sflow.ClassPhysical, 1), Interval: p.systemPoll,
			Append: func(b []byte) ([]byte, int) { return sflow.AppendHost(b, sflowHost(host)), 3 }})
	}
	if p.ifPoll > 0 {
		for _, ifc := range sflowInterfaces() {
			srcs = append(srcs, &sflow.CounterSource{ID: sflow.SourceID(sflow.ClassIfIndex, ifc.index), Interval: p.ifPoll,
				Append: func(b []byte) ([]byte, int) { return sflow.AppendIfCounters(b, sflowIfCounters(ifc)), 1 }})
		}
	}
	if p.vlanPoll > 0 {
		for _, vl := range p.vlans {
			srcs = append(srcs, &sflow.CounterSource{ID: sflow.SourceID(sflow.ClassVLAN, vl.tag), Interval: p.vlanPoll,
				Append: func(b []byte) ([]byte, int) { return sflow.AppendVLANCounters(b, sflowVLANCounters(vl)), 1 }})
		}
	}
	r.agent.SetSources(srcs)
	e.sflowPackets(p)
}

// sflowPackets starts the VLAN packet samplers p asks for (every tagged
// net vlan with interfaces, at the global vlan sampling-rate; none at
// 0), replacing the running ones when the agent, the rate or the VLANs
// changed. A VLAN whose interfaces cannot be sampled (no CAP_NET_RAW, an
// interface that does not exist) is logged and left out. The caller
// holds r.mu.
func (e *Engine) sflowPackets(p *sflowPlan) {
	r := &e.sflow
	var b strings.Builder
	if r.agent != nil && p.vlanRate > 0 {
		b.WriteString(r.key + "|" + strconv.FormatUint(uint64(p.vlanRate), 10))
		for _, vl := range p.vlans {
			if len(vl.ifs) > 0 {
				b.WriteString("|" + strconv.FormatUint(uint64(vl.tag), 10) + ":" + strings.Join(vl.ifs, ","))
			}
		}
	}
	key := b.String()
	if key == r.packetsKey {
		return
	}
	r.stopPackets()
	r.packetsKey = key
	if key == "" {
		return
	}
	for _, vl := range p.vlans {
		if len(vl.ifs) == 0 {
			continue
		}
		s, err := sflow.StartPacketSampler(r.agent, sflow.SourceID(sflow.ClassVLAN, vl.tag), p.vlanRate, vl.ifs)
		if err != nil {
			e.log.Error("sflow: the VLAN's frames cannot be sampled", "tag", vl.tag, "interfaces", vl.ifs, "err", err)
			continue
		}
		r.packets = append(r.packets, s)
	}
}

// stopPackets stops the VLAN packet samplers. The caller holds r.mu.
func (r *sflowRuntime) stopPackets() {
	for _, s := range r.packets {
		s.Close()
	}
	r.packets = nil
	r.packetsKey = ""
}

// sflowVLAN is a net vlan as an sFlow data source: its tag and its
// interfaces (Linux interface names).
type sflowVLAN struct {
	tag uint32
	ifs []string
}

// sflowVLANCounters are a VLAN's vlan_counters: the sums over its
// interfaces of /proc/net/dev's figures, both directions together [M:
// openltm's VLANs are the Linux interfaces they name, so their traffic is
// those interfaces' traffic; a VLAN without interfaces counts nothing].
func sflowVLANCounters(vl sflowVLAN) sflow.VLANCounters {
	c := sflow.VLANCounters{ID: vl.tag}
	cs, err := hoststat.ReadNetDev()
	if err != nil {
		return c
	}
	for _, x := range cs {
		if !slices.Contains(vl.ifs, x.Name) {
			continue
		}
		c.Octets += x.RxBytes + x.TxBytes
		c.Ucast += uint32(x.RxPackets - min(x.RxMulticast, x.RxPackets) + x.TxPackets)
		c.Multicast += uint32(x.RxMulticast)
		c.Discards += uint32(x.RxDrop + x.TxDrop)
	}
	return c
}

// closeSFlow stops the agent (the daemon's end).
func (e *Engine) closeSFlow() {
	e.sflow.mu.Lock()
	defer e.sflow.mu.Unlock()
	e.sflow.stopPackets()
	if e.sflow.agent != nil {
		e.sflow.agent.Close()
		e.sflow.agent = nil
	}
}

// sflowHTTPCounters are a virtual's http counters, read from what it
// counts anyway (show ltm profile http's figures): requests other than
// GET, HEAD and POST are counted as other methods [M: openltm does not
// count OPTIONS, PUT, DELETE, TRACE and CONNECT apart].
func sflowHTTPCounters(p *dataplane.Plane, name string) sflow.HTTPCounters {
	if p == nil {
		return sflow.HTTPCounters{}
	}
	h := p.ProfileStats(dataplane.ProfileHTTP, "", []string{name}).HTTP
	u := func(v uint64) uint32 { return uint32(v) }
	return sflow.HTTPCounters{Get: u(h.Get), Head: u(h.Head), Post: u(h.Post), OtherMethod: u(h.Other),
		Status1xx: u(h.Resp1xx), Status2xx: u(h.Resp2xx), Status3xx: u(h.Resp3xx), Status4xx: u(h.Resp4xx), Status5xx: u(h.Resp5xx), StatusOther: u(h.RespOther)}
}

// sflowHost reads the host's counters (host_descr, host_cpu,
// host_memory): processor times are the kernel's ticks at 100 a second
// given in milliseconds.
func sflowHost(hostname string) sflow.Host {
	h := sflow.Host{Hostname: hostname}
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) == nil {
		const scale = 1 << 16
		h.Load1, h.Load5, h.Load15 = float32(si.Loads[0])/scale, float32(si.Loads[1])/scale, float32(si.Loads[2])/scale
		h.ProcTotal = uint32(si.Procs)
		h.Uptime = uint32(si.Uptime)
	}
	if st, err := hoststat.ReadStat(); err == nil {
		ms := func(t uint64) uint32 { return uint32(t * 10) }
		h.CPUs = uint32(len(st.Processors))
		h.User, h.Nice, h.System, h.Idle = ms(st.Total.User), ms(st.Total.Nice), ms(st.Total.System), ms(st.Total.Idle)
		h.IOWait, h.IRQ, h.SoftIRQ = ms(st.Total.IOWait), ms(st.Total.IRQ), ms(st.Total.SoftIRQ)
	}
	if ci, err := hoststat.ReadCPUInfo(); err == nil {
		h.CPUMHz = uint32(ci.MHz)
	}
	if m, err := hoststat.ReadMemory(); err == nil {
		h.MemTotal, h.MemFree, h.Buffers, h.Cached = m.Total, m.Free, m.Buffers, m.Cached
		h.SwapTotal, h.SwapFree = m.SwapTotal, m.SwapFree
	}
	return h
}

// sflowIf is one of the host's interfaces as an sFlow data source.
type sflowIf struct {
	name  string
	index uint32
}

// sflowInterfaces are the host's interfaces [M: openltm's interfaces are
// the Linux ones, so each is a data source by its kernel ifindex].
func sflowInterfaces() []sflowIf {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil
	}
	out := make([]sflowIf, 0, len(ifs))
	for _, i := range ifs {
		out = append(out, sflowIf{name: i.Name, index: uint32(i.Index)})
	}
	slices.SortFunc(out, func(a, b sflowIf) int { return int(a.index) - int(b.index) })
	return out
}

// sflowIfCounters reads an interface's generic counters from
// /proc/net/dev and /sys/class/net.
func sflowIfCounters(ifc sflowIf) sflow.IfCounters {
	c := sflow.IfCounters{Index: ifc.index, Type: 6}
	if ifc.name == "lo" {
		c.Type = 24
	}
	if i, err := net.InterfaceByName(ifc.name); err == nil {
		if i.Flags&net.FlagUp != 0 {
			c.Status |= 1
		}
		if i.Flags&net.FlagRunning != 0 {
			c.Status |= 2
		}
	}
	if b, err := os.ReadFile(filepath.Join("/sys/class/net", ifc.name, "speed")); err == nil {
		if mbps := hoststat.ParseSpeed(b); mbps > 0 {
			c.Speed = uint64(mbps) * 1_000_000
		}
	}
	if cs, err := hoststat.ReadNetDev(); err == nil {
		for _, x := range cs {
			if x.Name != ifc.name {
				continue
			}
			c.InOctets, c.OutOctets = x.RxBytes, x.TxBytes
			c.InUcast, c.OutUcast = uint32(x.RxPackets-min(x.RxMulticast, x.RxPackets)), uint32(x.TxPackets)
			c.InMulticast = uint32(x.RxMulticast)
			c.InDiscards, c.InErrors = uint32(x.RxDrop), uint32(x.RxErrs)
			c.OutDiscard, c.OutErrors = uint32(x.TxDrop), uint32(x.TxErrs)
		}
	}
	return c
}

// sflowCommands answer show sys sflow receiver (what the agent sent) and
// show sys sflow data-source http (each http virtual's sampler).
func sflowCommands(e *Engine) []RuntimeCommand {
	return []RuntimeCommand{
		{"show", sflowReceiver.Key(), func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
			cfg := e.Config()
			st := &e.sflow.stats
			for _, name := range profileNames(e, sflowReceiver, names) {
				o := cfg.Get(sflowReceiver, name)
				if o == nil {
					continue
				}
				rs := render.SFlowReceiver{Address: sflowRecvAddress.Effective(cfg, o) + ":" + sflowRecvPort.Effective(cfg, o),
					State: sflowRecvState.Effective(cfg, o)}
				if rs.State == "enabled" {
					rs.Datagrams, rs.Flows, rs.Counters = st.Datagrams.Load(), st.FlowSamples.Load(), st.CounterSamples.Load()
					rs.Dropped, rs.SendFailures = st.Dropped.Load(), st.Failures.Load()
				}
				if err := render.SFlowReceiverBlock(w, name, rs, showOpts(s, words)); err != nil {
					return err
				}
			}
			return nil
		}},
		{"show", "sys sflow data-source http", func(ctx context.Context, s *Session, _, words []string, w io.Writer) error {
			e.sflow.mu.Lock()
			p := e.sflow.plan
			e.sflow.mu.Unlock()
			var names, opts []string
			for _, wd := range words {
				if isShowOption(wd) {
					opts = append(opts, wd)
				} else {
					names = append(names, objects.FullPath("/Common", wd))
				}
			}
			var have []string
			if p != nil {
				for _, v := range p.virtuals {
					have = append(have, v.name)
				}
			}
			for _, n := range names {
				if !slices.Contains(have, n) {
					return objects.Invalid("sys sflow data-source http %s: no http virtual of that name is an sFlow data source (an enabled sys sflow receiver and a virtual with an http profile)", n)
				}
			}
			if p == nil {
				return nil
			}
			for _, v := range p.virtuals {
				if len(names) > 0 && !slices.Contains(names, v.name) {
					continue
				}
				src := render.SFlowHTTPSource{Index: sflowIndex(v.name), Rate: uint64(v.rate), PollSeconds: uint64(v.poll / time.Second)}
				if v.sampler != nil {
					n, pool := v.sampler.Samples()
					src.Samples, src.RequestsSeen = uint64(n), uint64(pool)
				}
				if err := render.SFlowHTTPSourceBlock(w, v.name, src, showOpts(s, opts)); err != nil {
					return err
				}
			}
			return nil
		}},
	}
}
