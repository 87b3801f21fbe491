// Package render draws every `show` layout the daemon answers with, in
// BIG-IP's form (reference §3): virtual servers, pools, nodes, connections,
// persistence records, OneConnect and MBLB profiles, the GSLB objects and
// tables, and the configuration history. The functions are pure, from
// snapshot structs to text, so the layouts are tested without a daemon;
// the shell receives the finished text and never imports this package.
package render

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/openltm/openltm/dataplane"
)

// Options are the show command's display options.
type Options struct {
	// Raw prints counters unscaled (`raw`); otherwise 37300 prints 37.3K.
	Raw bool
	// Members adds the member blocks to a pool (`show ltm pool p members`).
	Members bool
	// Detail adds what BIG-IP's layout leaves out (the times behind a
	// rule's cycle counts).
	Detail bool
	// FieldFmt prints `key value` lines for scripts instead of the table
	// (`field-fmt`); only the layouts with a ...Fields form have it.
	FieldFmt bool
	// Folder is the session's folder: names inside it print relative, as
	// tmsh prints them from that folder ("/Common").
	Folder string
}

const (
	dashesVirtual = 66
	dashesPool    = 69
	dashesConn    = 69
)

// Scale formats a counter as tmsh does by default: below 1000 as is, then
// with one decimal and K, M, G, T, P, E (powers of 1000).
func Scale(v uint64) string {
	if v < 1000 {
		return strconv.FormatUint(v, 10)
	}
	f := float64(v)
	units := "KMGTPE"
	i := -1
	for f >= 999.95 && i < len(units)-1 {
		f /= 1000
		i++
	}
	return strconv.FormatFloat(f, 'f', 1, 64) + units[i:i+1]
}

func (o Options) num(v uint64) string {
	if o.Raw {
		return strconv.FormatUint(v, 10)
	}
	return Scale(v)
}

// rel is name relative to the options' folder.
func (o Options) rel(name string) string {
	if o.Folder != "" && strings.HasPrefix(name, o.Folder+"/") {
		return name[len(o.Folder)+1:]
	}
	return name
}

// printer accumulates write errors so layouts read as straight text.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) f(format string, a ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, a...)
	}
}

func (p *printer) line(s string) { p.f("%s\n", s) }

// Virtual prints one `Ltm::Virtual Server` block.
func Virtual(w io.Writer, v dataplane.VirtualStats, o Options) error {
	p := &printer{w: w}
	dash := strings.Repeat("-", dashesVirtual)
	p.line(dash)
	p.line("Ltm::Virtual Server: " + o.rel(v.Name))
	p.line(dash)
	p.line("Status")
	for _, kv := range [][2]string{
		{"Availability", string(v.Status.Availability)},
		{"State", v.Status.State},
		{"Reason", v.Status.Reason},
		{"CMP", "enabled"},
		{"CMP Mode", "all-cpus"},
		{"Destination", v.Destination},
	} {
		p.f("  %-17s: %s\n", kv[0], kv[1])
	}
	p.line("")
	p.f("%-36s%10s%11s%9s\n", "Traffic", "ClientSide", "Ephemeral", "General")
	t, e := v.ClientSide, v.Ephemeral
	row := func(label, a, b, c string) { p.f("%-36s%10s%11s%9s\n", "  "+label, a, b, c) }
	zero := o.num(0)
	row("Bits In", o.num(t.BitsIn), o.num(e.BitsIn), "-")
	row("Bits Out", o.num(t.BitsOut), o.num(e.BitsOut), "-")
	row("Packets In", o.num(t.PktsIn), o.num(e.PktsIn), "-")
	row("Packets Out", o.num(t.PktsOut), o.num(e.PktsOut), "-")
	row("Current Connections", o.num(t.CurConns), o.num(e.CurConns), "-")
	row("Maximum Connections", o.num(t.MaxConns), o.num(e.MaxConns), "-")
	row("Total Connections", o.num(t.TotConns), o.num(e.TotConns), "-")
	row("Evicted Connections", o.num(v.Evicted), zero, "-")
	row("Slow Connections Killed", o.num(v.SlowKilled), zero, "-")
	row("Min Conn Duration/msec", "-", "-", o.num(v.MinConnDuration))
	row("Max Conn Duration/msec", "-", "-", o.num(v.MaxConnDuration))
	row("Mean Conn Duration/msec", "-", "-", o.num(v.MeanConnDuration))
	row("Total Requests", "-", "-", o.num(v.TotRequests))
	if v.EvictRefused > 0 {
		// openltm's own row [M]: clients refused because an eviction
		// context (the virtual's policy, its route domain, the global
		// one) was full and its round freed no place.
		row("Eviction Refused Connections", "-", "-", o.num(v.EvictRefused))
	}
	if v.RateLimit > 0 || v.RateLimited > 0 {
		// openltm's own row: the new connections rate-limit reset.
		row("Rate-Limited Connections", "-", "-", o.num(v.RateLimited))
	}
	if c := v.Clone; c != nil {
		// openltm's own rows: the copies sent to the clone pools.
		row("Clone Connections", "-", "-", o.num(c.Conns))
		row("Clone Bits Out", "-", "-", o.num(c.Bytes*8))
		row("Clone Connections Dropped", "-", "-", o.num(c.Dropped))
	}
	return p.err
}

// Pool prints one `Ltm::Pool` block and, with o.Members, a nested
// `| Ltm::Pool Member:` block per member.
func Pool(w io.Writer, ps dataplane.PoolStats, o Options) error {
	p := &printer{w: w}
	p.statusHead("Ltm::Pool: "+o.rel(ps.Name), ps.Status)
	if ps.Monitor != "" {
		p.f("  %-13s: %s\n", "Monitor", relRule(ps.Monitor, o))
	}
	for _, kv := range []struct {
		k string
		v uint64
	}{
		{"Minimum Active Members", uint64(ps.MinActiveMembers)},
		{"Current Active Members", uint64(ps.CurActiveMembers)},
		{"Available Members", uint64(ps.AvailableMembers)},
		{"Total Members", uint64(ps.TotalMembers)},
		{"Total Requests", ps.TotRequests},
		{"Current Sessions", ps.CurSessions},
	} {
		p.f("  %22s : %s\n", kv.k, o.num(kv.v))
	}
	p.line("")
	oneSide(p, "ServerSide", ps.ServerSide, o)
	connQueue(p, ps, o) // connqueue.go
	if o.Members {
		for i := range ps.Members {
			p.line("")
			memberBlock(p, &ps.Members[i], o)
		}
	}
	return p.err
}

// statusHead prints a block's title between bars and its Status lines
// (a pool's, a virtual address's).
func (p *printer) statusHead(title string, st dataplane.Status) {
	dash := strings.Repeat("-", dashesPool)
	p.line(dash)
	p.line(title)
	p.line(dash)
	p.line("Status")
	p.f("  %-13s: %s\n", "Availability", st.Availability)
	p.f("  %-13s: %s\n", "State", st.State)
	p.f("  %-13s: %s\n", "Reason", st.Reason)
}

// relRule makes each monitor name in a rule relative.
func relRule(rule string, o Options) string {
	if o.Folder == "" {
		return rule
	}
	return strings.ReplaceAll(rule, o.Folder+"/", "")
}

func memberBlock(p *printer, m *dataplane.MemberStats, o Options) {
	dash := "  " + strings.Repeat("-", dashesPool)
	p.line(dash)
	p.line("  | Ltm::Pool Member: " + o.rel(m.Name))
	p.line(dash)
	p.line("  | Status")
	monitor := m.Monitor
	if monitor == "" {
		monitor = "none"
	}
	for _, kv := range [][2]string{
		{"Availability", string(m.Status.Availability)},
		{"State", m.Status.State},
		{"Reason", m.Status.Reason},
		{"Monitor", monitor},
		{"Monitor Status", m.MonitorStatus},
		{"Session Status", m.SessionStatus},
	} {
		p.f("  |   %-15s: %s\n", kv[0], kv[1])
	}
	p.line("  |")
	p.f("  | %-24s%10s%9s\n", "Traffic", "ServerSide", "General")
	trafficRows(p, "  |   %-20s%10s%9s\n", m.ServerSide, m.TotRequests, m.CurSessions, o)
}

// trafficCount is one counter of a side's traffic: its label in the
// tables and its key in field-fmt.
type trafficCount struct {
	label, key string
	v          uint64
}

// trafficCounts are t's counters in the order BIG-IP's tables print them.
func trafficCounts(t dataplane.Traffic) [7]trafficCount {
	return [7]trafficCount{
		{"Bits In", "bits-in", t.BitsIn}, {"Bits Out", "bits-out", t.BitsOut},
		{"Packets In", "pkts-in", t.PktsIn}, {"Packets Out", "pkts-out", t.PktsOut},
		{"Current Connections", "cur-conns", t.CurConns}, {"Maximum Connections", "max-conns", t.MaxConns},
		{"Total Connections", "tot-conns", t.TotConns},
	}
}

func trafficRows(p *printer, format string, t dataplane.Traffic, req, sess uint64, o Options) {
	for _, c := range trafficCounts(t) {
		p.f(format, c.label, o.num(c.v), "-")
	}
	p.f(format, "Total Requests", "-", o.num(req))
	p.f(format, "Current Sessions", "-", o.num(sess))
}

// Node prints one `Ltm::Node` block.
func Node(w io.Writer, n dataplane.NodeStats, o Options) error {
	p := &printer{w: w}
	dash := strings.Repeat("-", dashesPool)
	p.line(dash)
	addr := n.Addr.String()
	if n.FQDN != nil {
		addr = "any6"
	}
	p.f("Ltm::Node: %s (%s)\n", o.rel(n.Name), addr)
	p.line(dash)
	p.line("Status")
	monitor := n.Monitor
	if monitor == "" {
		monitor = "none"
	}
	for _, kv := range [][2]string{
		{"Availability", string(n.Status.Availability)},
		{"State", n.Status.State},
		{"Reason", n.Status.Reason},
		{"Monitor", monitor},
		{"Monitor Status", n.MonitorStatus},
		{"Session Status", n.SessionStatus},
	} {
		p.f("  %-15s: %s\n", kv[0], kv[1])
	}
	if f := n.FQDN; f != nil {
		addrs := make([]string, len(f.Addrs))
		for i, a := range f.Addrs {
			addrs[i] = a.String()
		}
		p.line("")
		p.line("FQDN")
		p.f("  %-15s: %s\n", "Name", f.Name)
		p.f("  %-15s: %s\n", "Addresses", strings.Join(addrs, " "))
		if f.LastError != "" {
			p.f("  %-15s: %s\n", "Last Error", f.LastError)
		}
	}
	p.line("")
	p.f("%-22s%10s%9s\n", "Traffic", "ServerSide", "General")
	trafficRows(p, "  %-20s%10s%9s\n", n.ServerSide, n.TotRequests, n.CurSessions, o)
	return p.err
}

// ConnectionWriter streams `show sys connection` output: a header, one line
// (or block, with all-properties) per record as it arrives, and the
// `Total records returned: N` trailer on Close. Nothing is held per record,
// so 100,000 flows print in constant memory.
type ConnectionWriter struct {
	w        *bufio.Writer
	allProps bool
	n        int
	started  bool
	err      error
}

// NewConnectionWriter starts a listing on w.
func NewConnectionWriter(w io.Writer, allProperties bool) *ConnectionWriter {
	return &ConnectionWriter{w: bufio.NewWriterSize(w, 32<<10), allProps: allProperties}
}

// ep prints one end of a record: addr:port, addr.port for IPv6, any6.any
// for a side that does not exist yet.
func ep(r *dataplane.Connection, which int) string {
	a := [...]struct {
		ok   bool
		addr string
		port uint16
	}{
		{r.CSClient.IsValid(), r.CSClient.Addr().String(), r.CSClient.Port()},
		{r.CSServer.IsValid(), r.CSServer.Addr().String(), r.CSServer.Port()},
		{r.SSClient.IsValid(), r.SSClient.Addr().String(), r.SSClient.Port()},
		{r.SSServer.IsValid(), r.SSServer.Addr().String(), r.SSServer.Port()},
	}[which]
	if !a.ok {
		return "any6.any"
	}
	return dataplane.JoinPort(a.addr, a.port)
}

func (c *ConnectionWriter) header() {
	if !c.started {
		c.started = true
		c.w.WriteString("Sys::Connections\n")
	}
}

// Write prints one record; it returns the first write error, after which
// the caller should stop the walk.
func (c *ConnectionWriter) Write(r *dataplane.Connection) error {
	if c.err != nil {
		return c.err
	}
	c.header()
	c.n++
	idle := int(r.Idle.Seconds())
	if !c.allProps {
		_, c.err = fmt.Fprintf(c.w, "%s  %s  %s  %s  %s  %d  (tmm: 0)  none  none\n",
			ep(r, 0), ep(r, 1), ep(r, 2), ep(r, 3), r.Protocol, idle)
		return c.err
	}
	fmt.Fprintf(c.w, "%s - %s - %s - %s\n", ep(r, 0), ep(r, 1), ep(r, 2), ep(r, 3))
	c.w.WriteString(strings.Repeat("-", dashesConn) + "\n")
	timeout := "indefinite"
	if r.IdleTimeout > 0 {
		timeout = strconv.Itoa(int(r.IdleTimeout.Seconds()))
	}
	for _, kv := range [][2]string{
		{"TMM", "0"}, {"Type", "any"}, {"Acceleration", "none"}, {"Protocol", r.Protocol},
		{"Idle Time", strconv.Itoa(idle)}, {"Idle Timeout", timeout}, {"Unit ID", "1"},
		{"Lasthop", "/Common/loopback"}, {"Virtual Path", ep(r, 1)},
	} {
		fmt.Fprintf(c.w, "  %-14s%s\n", kv[0], kv[1])
	}
	o := Options{}
	rows := [][3]string{
		{"Client Addr", ep(r, 0), ep(r, 2)},
		{"Server Addr", ep(r, 1), ep(r, 3)},
		{"Bits In", o.num(r.CSBytesIn * 8), o.num(r.SSBytesIn * 8)},
		{"Bits Out", o.num(r.CSBytesOut * 8), o.num(r.SSBytesOut * 8)},
		{"Packets In", o.num(r.CSPktsIn), o.num(r.SSPktsIn)},
		{"Packets Out", o.num(r.CSPktsOut), o.num(r.SSPktsOut)},
	}
	w1, w2 := len("ClientSide"), len("ServerSide")
	for _, row := range rows {
		w1, w2 = max(w1, len(row[1])), max(w2, len(row[2]))
	}
	// BIG-IP prints the side headings three columns right of the values.
	fmt.Fprintf(c.w, "%*s%*s\n", 13+2+w1+3, "ClientSide", 2+w2, "ServerSide")
	for _, row := range rows {
		fmt.Fprintf(c.w, "  %-11s  %*s  %*s\n", row[0], w1, row[1], w2, row[2])
	}
	_, c.err = fmt.Fprint(c.w, "")
	return c.err
}

// Close prints the trailer and flushes.
func (c *ConnectionWriter) Close() error {
	if c.err != nil {
		return c.err
	}
	c.header()
	fmt.Fprintf(c.w, "Total records returned: %d\n", c.n)
	return c.w.Flush()
}

// Count is how many records were written.
func (c *ConnectionWriter) Count() int { return c.n }

// VirtualAddressStats is `show ltm virtual-address` for one address: its
// status rolled up from its virtual servers and their client-side traffic
// added up.
type VirtualAddressStats struct {
	Name string
	// Addr is the address as its object writes it (10.1.10.100%2).
	Addr       string
	Status     dataplane.Status
	ClientSide dataplane.Traffic
	// ConnectionLimit is the address's connection-limit (0: none), and
	// LimitReset the new connections it reset: shown only where one is
	// set, so that the block keeps BIG-IP's layout otherwise.
	ConnectionLimit int
	LimitReset      uint64
}

// VirtualAddress prints one `Ltm::Virtual Address` block.
func VirtualAddress(w io.Writer, a VirtualAddressStats, o Options) error {
	if o.FieldFmt {
		f := newFields()
		name := o.rel(a.Name)
		f.set("name", name)
		f.set("addr", a.Addr)
		f.traffic("clientside", a.ClientSide, false, o)
		f.status(string(a.Status.Availability), a.Status.State, a.Status.Reason)
		if a.ConnectionLimit > 0 || a.LimitReset > 0 {
			f.set("limit-reset-conns", o.num(a.LimitReset)) // openltm's own, as in VirtualAddress
		}
		return writeObject(w, "ltm virtual-address", name, f)
	}
	p := &printer{w: w}
	p.statusHead("Ltm::Virtual Address: "+o.rel(a.Name), a.Status)
	p.line("")
	oneSide(p, "ClientSide", a.ClientSide, o)
	if a.ConnectionLimit > 0 || a.LimitReset > 0 {
		// openltm's own row: the new connections connection-limit reset.
		p.f("%-25s%8s\n", "  Limit-Reset Connections", o.num(a.LimitReset))
	}
	return p.err
}

// oneSide prints a Traffic table of one column (a pool's server side, a
// virtual address's client side).
func oneSide(p *printer, side string, t dataplane.Traffic, o Options) {
	p.f("%-23s%10s\n", "Traffic", side)
	for _, c := range trafficCounts(t) {
		p.f("%-23s%10s\n", "  "+c.label, o.num(c.v))
	}
}
