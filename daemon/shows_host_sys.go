package daemon

import (
	"fmt"
	"io"
	"math"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/openltm/openltm/daemon/render"
	"github.com/openltm/openltm/hoststat"
	"github.com/openltm/openltm/objects"
)

// sinceLayout is how BIG-IP 12 and later print the Max column's start
// ("Max(since 03/22/23 08:41:48)").
const sinceLayout = "01/02/06 15:04:05"

// figureColumns are a statistics table's columns: BIG-IP's Current,
// Average and Max(since ...), or with detail (and in show sys cpu) the
// averages over 3 seconds, 1 minute and 5 minutes. [M] BIG-IP does not
// say over how long its Average runs: openltm's is the last five
// minutes' (the sampler's window), since the start when it is younger.
func figureColumns(first string, since time.Time, detail bool) []hostColumn {
	cols := []hostColumn{{head: []string{first}}, {head: []string{"Current"}, right: true}}
	if detail {
		cols = append(cols, hostColumn{head: []string{"3 Seconds"}, right: true}, hostColumn{head: []string{"1 Minute"}, right: true},
			hostColumn{head: []string{"5 Minutes"}, right: true})
	} else {
		cols = append(cols, hostColumn{head: []string{"Average"}, right: true})
	}
	return append(cols, hostColumn{head: []string{"Max(since " + since.Format(sinceLayout) + ")"}, right: true})
}

// figureRow is one row of a statistics table. A figure not known yet
// (the first second, or no dataplane) prints "-".
func figureRow(name string, f hostFigures, detail bool, format func(float64) string) []string {
	cell := func(v float64) string {
		if !f.Known {
			return "-"
		}
		return format(v)
	}
	row := []string{name, cell(f.Current)}
	if detail {
		row = append(row, cell(f.Avg3s), cell(f.Avg1m), cell(f.Avg5m))
	} else {
		row = append(row, cell(f.Avg5m))
	}
	return append(row, cell(f.Max))
}

// percent prints a percentage as BIG-IP does, a whole number.
func percent(v float64) string { return strconv.FormatInt(int64(math.Round(v)), 10) }

// rate prints a rate as a counter: scaled unless raw.
func rate(raw bool) func(float64) string {
	return func(v float64) string {
		n := uint64(math.Round(max(v, 0)))
		if raw {
			return strconv.FormatUint(n, 10)
		}
		return render.Scale(n)
	}
}

// bytesText prints a size as Sys::Host Memory does, in powers of 1024
// with one decimal (1023.9M), or exact with raw.
func bytesText(v uint64, raw bool) string {
	if raw || v < 1024 {
		return strconv.FormatUint(v, 10)
	}
	f, units, i := float64(v), "KMGTPE", -1
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	return strconv.FormatFloat(f, 'f', 1, 64) + units[i:i+1]
}

// memoryTable is the Memory Used(%) table of show sys memory and show
// sys performance system.
func (h *hostStats) memoryTable(since time.Time, detail bool) *hostTable {
	t := &hostTable{cols: figureColumns("Memory Used(%)", since, detail)}
	for i, name := range []string{"TMM Memory Used", "Other Memory Used", "Swap Used"} {
		t.add(figureRow(name, h.sampler.figure(figTMMMemory+i), detail, percent)...)
	}
	return t
}

// showMemory answers show sys memory: the used shares over time, then
// the host's memory now (Sys::Host Memory), then the Go runtime's.
func (h *hostStats) showMemory(w io.Writer, o hostOpts) error {
	m, err := hoststat.ReadMemory()
	if err != nil {
		return objects.Invalid("show sys memory: %v", err)
	}
	self, _ := hoststat.ReadSelf()
	if err := writeSection(w, "Sys::System Memory Information", h.memoryTable(h.sampler.started(), false)); err != nil {
		return err
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return err
	}
	if err := hostBlock(w, "Sys::Host Memory (bytes)", true, hostMemoryRows(m, self, o.raw)); err != nil {
		return err
	}
	t := &hostTable{cols: []hostColumn{{head: []string{"Name"}}, {head: []string{"In Use"}, right: true}, {head: []string{"Held"}, right: true}}}
	for _, sub := range hoststat.ReadRuntime() {
		t.add(sub.Name, bytesText(sub.InUse, o.raw), bytesText(sub.Held, o.raw))
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return err
	}
	return t.writeTitled(w, "Sys::Subsystem Memory")
}

// hostMemoryRows are Sys::Host Memory's blocks. [M] openltm's TMM is the
// ltmd process, to which nothing is set aside: its Used is its resident
// memory, its Free what the host could still give it (available memory),
// its Total the two together. Other is the rest of the host: what it uses
// besides ltmd, of all the memory ltmd does not hold. Total and Swap are
// the host's, used memory counted as free(1) counts it.
func hostMemoryRows(m hoststat.Memory, self hoststat.Process, raw bool) [][2]string {
	var rows [][2]string
	block := func(name string, total, used, free uint64) {
		rows = append(rows, [2]string{"", name + ": 0"},
			[2]string{"Total", bytesText(total, raw)}, [2]string{"Used", bytesText(used, raw)}, [2]string{"Free", bytesText(free, raw)})
	}
	block("TMM", self.Resident+m.Available, self.Resident, m.Available)
	block("Other", sub64(m.Total, self.Resident), sub64(m.Used(), self.Resident), m.Available)
	block("Total", m.Total, m.Used(), m.Available)
	block("Swap", m.SwapTotal, m.SwapUsed(), m.SwapFree)
	return rows
}

// showCPU answers show sys cpu. [M] BIG-IP's per-processor layout is not
// published; openltm prints one table: all processors together
// (Utilization), then each, busy percent now, averaged over 3 seconds, 1
// minute, 5 minutes, and the maximum since ltmd started.
func (h *hostStats) showCPU(w io.Writer) error {
	t := &hostTable{cols: figureColumns("CPU Usage(%)", h.sampler.started(), true)}
	t.add(figureRow("Utilization", h.sampler.cpu(0), true, percent)...)
	n := 0
	if st, err := hoststat.ReadStat(); err == nil {
		n = len(st.Processors)
		for i, p := range st.Processors {
			t.add(figureRow("cpu"+strconv.Itoa(p.ID), h.sampler.cpu(1+i), true, percent)...)
		}
	}
	if err := writeSection(w, "Sys::CPU", t); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\nProcessors  %d\n", n)
	return err
}

// performanceForms are the forms of show sys performance openltm
// answers, in all-stats' order. BIG-IP's ramcache, dnsexpress, dnssec
// and gtm forms read counters openltm does not keep.
var performanceForms = []string{"system", "connections", "throughput"}

// showPerformance answers show sys performance FORM, from the sampler:
// BIG-IP's tables, rows and columns (a published all-stats output),
// with what openltm counts. [M] Left out: SSL Transactions (openltm keeps
// no global count of handshakes) and Sys::Performance Ramcache.
func (h *hostStats) showPerformance(w io.Writer, form string, o hostOpts) error {
	var forms []string
	switch {
	case form == "all-stats":
		forms = performanceForms
	case slices.Contains(performanceForms, form):
		forms = []string{form}
	case form == "ramcache" || form == "dnsexpress" || form == "dnssec" || form == "gtm":
		return objects.Invalid("show sys performance %s is not available: openltm keeps no such counters (it shows all-stats, %s)", form, strings.Join(performanceForms, ", "))
	default:
		return synErr(nil, append([]string{"all-stats"}, performanceForms...), "%q unexpected: show sys performance takes all-stats, %s", form, strings.Join(performanceForms, ", "))
	}
	since, s, d := h.sampler.started(), h.sampler, o.detail
	table := func(first string, rows []string, figs []int, format func(float64) string) *hostTable {
		t := &hostTable{cols: figureColumns(first, since, d)}
		for i, r := range rows {
			t.add(figureRow(r, s.figure(figs[i]), d, format)...)
		}
		return t
	}
	for i, f := range forms {
		if i > 0 {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
		}
		var err error
		switch f {
		case "system":
			cpu := &hostTable{cols: figureColumns("System CPU Usage(%)", since, d)}
			cpu.add(figureRow("Utilization", s.cpu(0), d, percent)...)
			err = writeSection(w, "Sys::Performance System", cpu, h.memoryTable(since, d))
		case "connections":
			err = writeSection(w, "Sys::Performance Connections",
				table("Active Connections", []string{"Connections"}, []int{figConns}, rate(o.raw)),
				table("Total New Connections(/sec)", []string{"Client Connections", "Server Connections"}, []int{figClientNew, figServerNew}, rate(o.raw)),
				table("HTTP Requests(/sec)", []string{"HTTP Requests"}, []int{figRequests}, rate(o.raw)))
		case "throughput":
			err = writeSection(w, "Sys::Performance Throughput",
				table("Throughput(bits)(bits/sec)", []string{"In", "Out"}, []int{figBitsIn, figBitsOut}, rate(o.raw)),
				table("Throughput(packets)(pkts/sec)", []string{"In", "Out"}, []int{figPktsIn, figPktsOut}, rate(o.raw)))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// writeTMMInfo answers show sys tmm-info: one block per event loop of
// the L4 engine, openltm's counterpart of a TMM, numbered 0.N as BIG-IP
// numbers its TMMs on slot 0. [M] It shows what is known of each loop:
// the client connections it serves now. BIG-IP's Memory and CPU Usage
// Ratio blocks are left out: the loops share one process's memory, and
// the processors' time is not accounted per loop (show sys cpu has the
// processors').
func writeTMMInfo(w io.Writer, loads []int) error {
	if len(loads) == 0 {
		_, err := io.WriteString(w, "Sys::TMM: no event loops run yet: they start with the first virtual server\n")
		return err
	}
	pid := strconv.Itoa(os.Getpid())
	for i, n := range loads {
		if i > 0 {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
		}
		if err := hostBlock(w, fmt.Sprintf("Sys::TMM: 0.%d", i), true, [][2]string{
			{"", "Global"}, {"TMM Process Id", pid}, {"Running TMM Id", strconv.Itoa(i)}, {"TMM Count", strconv.Itoa(len(loads))},
			{"", ""}, {"", "Connections"}, {"Client Connections", strconv.Itoa(n)},
		}); err != nil {
			return err
		}
	}
	return nil
}

// showHardware answers show sys hardware from /proc/cpuinfo, the
// kernel and the interfaces. [M] BIG-IP's chassis, BIOS and part-number
// blocks describe F5 hardware; openltm prints the host's processors
// (Hardware Version Information, as BIG-IP's cpus entry), then the
// platform and system the kernel reports.
func showHardware(w io.Writer) error {
	c, err := hoststat.ReadCPUInfo()
	if err != nil {
		return objects.Invalid("show sys hardware: %v", err)
	}
	sys, _ := hoststat.ReadSystem()
	m, _ := hoststat.ReadMemory()
	mac := "none"
	if ifs, err := hoststat.ReadInterfaces(); err == nil {
		// The first interface with a MAC, one that is up if any is.
		for _, i := range ifs {
			if !i.Loopback && i.MAC != "" && (mac == "none" || i.Up) {
				mac = i.MAC
				if i.Up {
					break
				}
			}
		}
	}
	orNone := func(s string) string {
		if s == "" {
			return "none"
		}
		return s
	}
	mhz := "none"
	if c.MHz > 0 {
		mhz = strconv.FormatFloat(c.MHz, 'f', 3, 64)
	}
	return hostBlock(w, "Sys::Hardware", false, [][2]string{
		{"", "Hardware Version Information"},
		{"Name", "cpus"}, {"Type", "base-board"}, {"Model", orNone(c.Model)},
		{"Cores", fmt.Sprintf("%d  (physical:%d sockets:%d)", c.Processors, c.Cores, c.Sockets)},
		{"cpu MHz", mhz}, {"Cache Size", orNone(c.CacheSize)},
		{"", ""}, {"", "Platform"},
		{"Name", "openltm"}, {"Kernel", orNone(strings.TrimSpace(sys.Kernel + " " + sys.Release))},
		{"Base MAC", mac}, {"Memory", bytesText(m.Total, false)}, {"Uptime", uptime(sys.Uptime)},
		{"", ""}, {"", "System Information"},
		{"Type", orNone(sys.Machine)}, {"Host Name", orNone(sys.Hostname)},
	})
}

// buildVersion is openltm's version as show sys version prints it.
func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			return strings.TrimPrefix(v, "v")
		}
	}
	return "devel"
}

// writeLicense answers show sys license in BIG-IP's layout with what is
// true of openltm: it needs no license, and no module is limited. [M]
// The dates and keys BIG-IP prints have no counterpart: "none".
func writeLicense(w io.Writer, version string) error {
	rows := [][2]string{
		{"Licensed Version", version}, {"Registration key", "none (openltm needs no license)"},
		{"Licensed On", "none"}, {"License Start Date", "none"}, {"License End Date", "none"},
		{"Service Check Date", "none"}, {"Platform ID", "openltm"},
	}
	var b strings.Builder
	b.WriteString("\nSys::License\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "%-19s %s\n", r[0], r[1])
	}
	b.WriteString("\nActive Modules\n  openltm: no license required\n    no module is limited\n\n")
	_, err := io.WriteString(w, b.String())
	return err
}
