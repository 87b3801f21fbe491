package render

import (
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/openltm/openltm/dataplane"
)

// field-fmt is the layout scripts parse (`show ltm pool p field-fmt |
// grep status.availability-state`): the object's kind and name, then one
// `key value` line per statistic, keys sorted as tmsh sorts them, nested
// objects (a pool's members) as blocks among them. Counters scale as in
// the table layout unless `raw` is given, as tmsh's do.

// fields is one field-fmt block being built.
type fields struct {
	lines  map[string]string
	blocks map[string][]namedFields // key -> nested blocks, in order
}

type namedFields struct {
	name string
	f    *fields
}

func newFields() *fields {
	return &fields{lines: map[string]string{}, blocks: map[string][]namedFields{}}
}

func (f *fields) set(k, v string) { f.lines[k] = v }

// traffic adds one side's counters under prefix (clientside, serverside,
// ephemeral); evicted adds the two counters only virtual servers have.
func (f *fields) traffic(prefix string, t dataplane.Traffic, evicted bool, o Options) {
	for _, c := range trafficCounts(t) {
		f.set(prefix+"."+c.key, o.num(c.v))
	}
	if evicted {
		f.set(prefix+".evicted-conns", o.num(0))
		f.set(prefix+".slow-killed", o.num(0))
	}
}

// status adds the three status fields every object has (an LTM or a
// GSLB one: their availabilities are distinct string types).
func (f *fields) status(availability, state, reason string) {
	f.set("status.availability-state", availability)
	f.set("status.enabled-state", state)
	f.set("status.status-reason", reason)
}

// counter is one named count of a field-fmt block.
type counter struct {
	k string
	v uint64
}

// counts adds counters, scaled as the options say.
func (f *fields) counts(o Options, cs ...counter) {
	for _, c := range cs {
		f.set(c.k, o.num(c.v))
	}
}

// connq adds empty connection-queue fields: a pool member has no queue
// of its own (connections queue in their pool's, connqueue.go).
func (f *fields) connq(prefix string, o Options) {
	for _, k := range []string{"age-edm", "age-ema", "age-head", "age-max", "depth", "serviced"} {
		f.set(prefix+"."+k, o.num(0))
	}
}

// server adds what a pool member and a node both have: the monitor and
// session fields, the counters and the status.
func (f *fields) server(monitor, monitorStatus, sessionStatus string, sessions, requests uint64, t dataplane.Traffic, s dataplane.Status, o Options) {
	f.set("monitor-rule", orNone(monitor))
	f.set("monitor-status", monitorStatus)
	f.set("session-status", sessionStatus)
	f.set("cur-sessions", o.num(sessions))
	f.set("tot-requests", o.num(requests))
	f.traffic("serverside", t, false, o)
	f.status(string(s.Availability), s.State, s.Reason)
}

// block adds a nested named block under key (members { name { ... } }).
func (f *fields) block(key, name string, b *fields) {
	f.blocks[key] = append(f.blocks[key], namedFields{name, b})
}

func (f *fields) write(p *printer, indent string) {
	keys := make([]string, 0, len(f.lines)+len(f.blocks))
	for k := range f.lines {
		keys = append(keys, k)
	}
	for k := range f.blocks {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if bs, ok := f.blocks[k]; ok {
			p.f("%s%s {\n", indent, k)
			for _, b := range bs {
				p.f("%s    %s {\n", indent, b.name)
				b.f.write(p, indent+"        ")
				p.f("%s    }\n", indent)
			}
			p.f("%s}\n", indent)
			continue
		}
		p.f("%s%s %s\n", indent, k, f.lines[k])
	}
}

// writeObject prints `KIND NAME { fields }`.
func writeObject(w io.Writer, kind, name string, f *fields) error {
	p := &printer{w: w}
	p.f("%s %s {\n", kind, name)
	f.write(p, "    ")
	p.line("}")
	return p.err
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// VirtualFields prints a virtual server in field-fmt.
func VirtualFields(w io.Writer, v dataplane.VirtualStats, o Options) error {
	f := newFields()
	name := o.rel(v.Name)
	f.set("name", name)
	f.set("destination", v.Destination)
	f.set("cmp-enable-mode", "all-cpus")
	f.set("cmp-enabled", "enabled")
	f.traffic("clientside", v.ClientSide, true, o)
	f.set("clientside.evicted-conns", o.num(v.Evicted))
	f.set("clientside.slow-killed", o.num(v.SlowKilled))
	f.traffic("ephemeral", v.Ephemeral, true, o)
	f.set("cs-min-conn-dur", o.num(v.MinConnDuration))
	f.set("cs-max-conn-dur", o.num(v.MaxConnDuration))
	f.set("cs-mean-conn-dur", o.num(v.MeanConnDuration))
	f.set("tot-requests", o.num(v.TotRequests))
	if v.RateLimit > 0 || v.RateLimited > 0 {
		f.set("rate-limited-conns", o.num(v.RateLimited)) // openltm's own, as in Virtual
	}
	if c := v.Clone; c != nil { // openltm's own, as in Virtual
		f.set("clone-conns", o.num(c.Conns))
		f.set("clone-bits-out", o.num(c.Bytes*8))
		f.set("clone-conns-dropped", o.num(c.Dropped))
	}
	f.status(string(v.Status.Availability), v.Status.State, v.Status.Reason)
	return writeObject(w, "ltm virtual", name, f)
}

// PoolFields prints a pool in field-fmt and, with o.Members, its members
// in a members block.
func PoolFields(w io.Writer, ps dataplane.PoolStats, o Options) error {
	f := newFields()
	name := o.rel(ps.Name)
	f.set("name", name)
	f.set("active-member-cnt", strconv.Itoa(ps.CurActiveMembers))
	f.set("available-member-cnt", strconv.Itoa(ps.AvailableMembers))
	f.set("member-cnt", strconv.Itoa(ps.TotalMembers))
	f.set("min-active-members", strconv.Itoa(ps.MinActiveMembers))
	f.set("monitor-rule", orNone(ps.Monitor))
	f.set("cur-sessions", o.num(ps.CurSessions))
	f.set("tot-requests", o.num(ps.TotRequests))
	f.connqFields("connq", ps.ConnQueue, o)
	f.connqFields("connq-all", ps.ConnQueue, o)
	f.traffic("serverside", ps.ServerSide, false, o)
	f.status(string(ps.Status.Availability), ps.Status.State, ps.Status.Reason)
	if o.Members {
		for i := range ps.Members {
			m := &ps.Members[i]
			mf := newFields()
			mf.set("addr", m.Addr.Addr().String())
			mf.set("port", strconv.Itoa(int(m.Addr.Port())))
			mf.set("node-name", o.rel(m.Node))
			mf.set("pool-name", name)
			mf.server(m.Monitor, m.MonitorStatus, m.SessionStatus, m.CurSessions, m.TotRequests, m.ServerSide, m.Status, o)
			mf.connq("connq", o)
			f.block("members", o.rel(m.Name), mf)
		}
	}
	return writeObject(w, "ltm pool", name, f)
}

// NodeFields prints a node in field-fmt.
func NodeFields(w io.Writer, n dataplane.NodeStats, o Options) error {
	f := newFields()
	name := o.rel(n.Name)
	f.set("name", name)
	addr := n.Addr.String()
	if n.FQDN != nil {
		addr = "any6"
		f.set("fqdn.name", n.FQDN.Name)
		as := make([]string, len(n.FQDN.Addrs))
		for i, a := range n.FQDN.Addrs {
			as[i] = a.String()
		}
		f.set("fqdn.addresses", orNone(strings.Join(as, " ")))
	}
	f.set("addr", addr)
	f.server(n.Monitor, n.MonitorStatus, n.SessionStatus, n.CurSessions, n.TotRequests, n.ServerSide, n.Status, o)
	return writeObject(w, "ltm node", name, f)
}

// FieldFmt picks the field-fmt layout when the options ask for it.
func FieldFmt[T any](table, fields func(io.Writer, T, Options) error) func(io.Writer, T, Options) error {
	return func(w io.Writer, x T, o Options) error {
		if o.FieldFmt {
			return fields(w, x, o)
		}
		return table(w, x, o)
	}
}
