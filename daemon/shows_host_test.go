package daemon

import (
	"bytes"
	"net/netip"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/hoststat"
)

// fakeClock is a clock a test moves by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// A sampler driven by hand: readings one second apart give each
// second's figures, the averages over the points there are, the maximum
// since the start; counters that go back count as no traffic.
func TestHostSamplerFigures(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 1, 7, 9, 0, 0, 0, time.UTC)}
	var readings []hostReading
	busy := []uint64{0, 10, 30, 60, 70}
	for i, b := range busy {
		var pl *planeTotals
		if i > 0 { // the dataplane is found at the second reading
			pl = &planeTotals{conns: uint64(i), clientConns: uint64(10 * i), bitsIn: uint64(1000 * i), requests: 5}
		}
		if i == 4 {
			pl.bitsIn = 0 // reset-stats
		}
		readings = append(readings, hostReading{
			cpu:   []hoststat.CPUTimes{{User: b * 2, Idle: uint64(i)*200 - b*2}, {User: b, Idle: uint64(i)*100 - b}},
			mem:   [3]float64{float64(i), 50, 0},
			plane: pl,
		})
	}
	next := 0
	s := newHostSampler(func() hostReading { r := readings[next]; next++; return r }, clock.now)
	if f := s.cpu(0); f.Known {
		t.Fatalf("figures before any point: %+v", f)
	}
	for range readings {
		s.sample()
		clock.t = clock.t.Add(time.Second)
	}
	for _, tc := range []struct {
		name string
		got  hostFigures
		want hostFigures
	}{
		// busy percents 10, 20, 30, 10 (each second's share of 100 ticks)
		{"cpu0", s.cpu(1), hostFigures{Known: true, Current: 10, Avg3s: 20, Avg1m: 17.5, Avg5m: 17.5, Max: 30}},
		{"all processors", s.cpu(0), hostFigures{Known: true, Current: 10, Avg3s: 20, Avg1m: 17.5, Avg5m: 17.5, Max: 30}},
		{"ltmd's memory", s.figure(figTMMMemory), hostFigures{Known: true, Current: 4, Avg3s: 3, Avg1m: 2.5, Avg5m: 2.5, Max: 4}},
		// the first point has no traffic (no dataplane at the first reading)
		{"connections", s.figure(figConns), hostFigures{Known: true, Current: 4, Avg3s: 3, Avg1m: 3, Avg5m: 3, Max: 4}},
		{"new client connections", s.figure(figClientNew), hostFigures{Known: true, Current: 10, Avg3s: 10, Avg1m: 10, Avg5m: 10, Max: 10}},
		{"bits in, reset at the end", s.figure(figBitsIn), hostFigures{Known: true, Current: 0, Avg3s: 2000.0 / 3, Avg1m: 2000.0 / 3, Avg5m: 2000.0 / 3, Max: 1000}},
		{"requests, unchanged", s.figure(figRequests), hostFigures{Known: true, Max: 0}},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.name, tc.got, tc.want)
		}
	}
	if got := s.cpu(7); got.Known {
		t.Errorf("a processor the host lacks: %+v", got)
	}
}

// The ring keeps five minutes: older points leave the averages, not the
// maximum.
func TestHostSamplerWindow(t *testing.T) {
	clock := &fakeClock{t: time.Unix(0, 0)}
	var i uint64
	s := newHostSampler(func() hostReading {
		b := uint64(0)
		if i == 1 {
			b = 100 // the first second is all busy
		}
		r := hostReading{cpu: []hoststat.CPUTimes{{User: 100*min(i, 1) + 0*b, Idle: 100*i - 100*min(i, 1)}}}
		i++
		return r
	}, clock.now)
	for n := 0; n < hostWindow+10; n++ {
		s.sample()
		clock.t = clock.t.Add(time.Second)
	}
	f := s.cpu(0)
	if f.Max != 100 || f.Avg5m != 0 || f.Current != 0 {
		t.Fatalf("got %+v", f)
	}
}

// run samples at each tick until close; a tick source of the test's own
// drives it, and close waits for it to end.
func TestHostSamplerRun(t *testing.T) {
	clock := &fakeClock{t: time.Unix(100, 0)}
	reads := 0
	s := newHostSampler(func() hostReading {
		reads++
		clock.t = clock.t.Add(time.Second)
		return hostReading{mem: [3]float64{float64(reads), 0, 0}}
	}, clock.now)
	tick := make(chan time.Time)
	go s.run(tick)
	for range 3 {
		tick <- time.Time{}
	}
	s.running = true
	s.close()
	s.close() // twice is harmless
	if f := s.figure(figTMMMemory); reads != 3 || f.Current != 3 {
		t.Fatalf("reads %d, figures %+v", reads, f)
	}
}

func TestHostTable(t *testing.T) {
	tb := &hostTable{cols: []hostColumn{{head: []string{"Name"}}, {head: []string{"Bits", "In"}, right: true}}}
	tb.add("eth0", "2.5M")
	tb.add("lo", "0")
	var b bytes.Buffer
	if err := tb.writeTitled(&b, "Net::Interface"); err != nil {
		t.Fatal(err)
	}
	want := "--------------\nNet::Interface\nName  Bits\n        In\n--------------\neth0  2.5M\nlo       0\n"
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestBytesText(t *testing.T) {
	for _, tc := range []struct {
		v    uint64
		raw  bool
		want string
	}{{1000, false, "1000"}, {1073635328, false, "1023.9M"}, {5476083302, false, "5.1G"}, {5476083302, true, "5476083302"}} {
		if got := bytesText(tc.v, tc.raw); got != tc.want {
			t.Errorf("bytesText(%d, %v) = %q, want %q", tc.v, tc.raw, got, tc.want)
		}
	}
}

func TestMemoryShares(t *testing.T) {
	m := hoststat.Memory{Total: 1000, Available: 600, SwapTotal: 100, SwapFree: 75}
	got := memoryShares(m, hoststat.Process{Resident: 200})
	// ltmd: 200 of 200+600; the rest: 400-200 used of 1000-200; swap 25 of 100
	if got != [3]float64{25, 25, 25} {
		t.Fatalf("got %v", got)
	}
	if got := memoryShares(hoststat.Memory{}, hoststat.Process{}); got != [3]float64{} {
		t.Fatalf("no memory: %v", got)
	}
}

// Each host show answers through a session, in its layout's stable
// parts, from the sys and net modules too; what a show does not take is
// a syntax error.
func TestShowHostCommands(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	since := `Max\(since \d\d/\d\d/\d\d \d\d:\d\d:\d\d\)`
	for _, tc := range []struct {
		cmd  string
		want []string // regular expressions the output must match
	}{
		{"show sys memory", []string{`(?m)^Sys::System Memory Information\n-+\nMemory Used\(%\)\s+Current\s+Average\s+` + since + `\n-+\n`,
			`(?m)^TMM Memory Used\s+\S+\s+\S+\s+\S+$`, `(?m)^Other Memory Used `, `(?m)^Swap Used `,
			`(?m)^Sys::Host Memory \(bytes\)\n-+\nTMM: 0\n  Total\s+\d`, `(?m)^Total: 0$`, `(?m)^Swap: 0$`,
			`(?m)^Sys::Subsystem Memory\nName\s+In Use\s+Held\n-+\nheap\s`}},
		{"show sys memory raw", []string{`(?m)^  Total\s+\d+$`}},
		{"show sys cpu", []string{`(?m)^Sys::CPU\n-+\nCPU Usage\(%\)\s+Current\s+3 Seconds\s+1 Minute\s+5 Minutes\s+` + since,
			`(?m)^Utilization\s`, `(?m)^cpu0\s`, `(?m)^Processors  \d+$`}},
		{"show sys performance", []string{`(?m)^Sys::Performance System\n-+\nSystem CPU Usage\(%\)\s+Current\s+Average\s+` + since,
			`(?m)^Sys::Performance Connections\n`, `(?m)^Total New Connections\(/sec\)\s+Current`, `(?m)^Client Connections\s`,
			`(?m)^HTTP Requests\(/sec\)`, `(?m)^Sys::Performance Throughput\n-+\nThroughput\(bits\)\(bits/sec\)\s+Current`,
			`(?m)^Throughput\(packets\)\(pkts/sec\)`}},
		{"show sys performance system", []string{`(?m)^Utilization\s`, `(?m)^TMM Memory Used\s`}},
		{"show sys performance connections detail", []string{`(?m)^Active Connections\s+Current\s+3 Seconds\s+1 Minute\s+5 Minutes\s`}},
		{"show sys performance throughput raw", []string{`(?m)^In\s`, `(?m)^Out\s`}},
		{"show sys performance all-stats", []string{`Sys::Performance System`, `Sys::Performance Throughput`}},
		{"show sys tmm-info", []string{`^Sys::TMM: no event loops run yet`}},
		{"show sys hardware", []string{`(?m)^-+\nSys::Hardware\n-+\nHardware Version Information\n  Name\s+cpus\n`, `(?m)^Platform\n  Name\s+openltm$`, `(?m)^System Information$`}},
		{"show sys license", []string{`(?m)^Sys::License\nLicensed Version\s+\S+\nRegistration key\s+none \(openltm needs no license\)$`,
			`(?m)^Active Modules\n  openltm: no license required\n    no module is limited$`}},
		{"show net interface", []string{`(?m)^-+\nNet::Interface\nName\s+Status\s+Bits\s+Bits\s+Pkts\s+Pkts\s+Drops\s+Errs\s+Media\n\s+In\s+Out\s+In\s+Out\n-+\n`,
			`(?m)^lo\s+up\s`}},
		{"show net interface lo all-properties", []string{`(?m)^lo\s+up\s.*\s65536\s+none$`, `(?m)^Net::Interface Addresses\nName\s+Address\s+Status\n-+\nlo\s+127\.0\.0\.1/8\s+up`}},
		{"show net interface l* raw", []string{`(?m)^lo\s+up\s+\d+\s+\d+`}},
		{"show net route", []string{`(?m)^-+\nNet::Routes\nName\s+Destination\s+Type\s+NextHop\s+Origin\n-+\n`}},
		{"sys", nil},
		{"show cpu", []string{`Sys::CPU`}},
		{"show performance system", []string{`Sys::Performance System`}},
		{"exit", nil},
		{"net", nil},
		{"show interface lo", []string{`(?m)^lo\s`}},
		{"exit", nil},
	} {
		out, errText := run(t, s, tc.cmd)
		if errText != "" {
			t.Errorf("%s: %s", tc.cmd, errText)
			continue
		}
		for _, re := range tc.want {
			if !regexp.MustCompile(re).MatchString(out) {
				t.Errorf("%s: no %s in\n%s", tc.cmd, re, out)
			}
		}
		if strings.Contains(out, " \n") {
			t.Errorf("%s: trailing blanks in\n%q", tc.cmd, out)
		}
	}
	for _, tc := range []struct{ cmd, err string }{
		{"show sys cpu detail", `Syntax Error: "detail" unexpected: show sys cpu takes raw`},
		{"show sys memory bogus", `"bogus" unexpected: show sys memory takes raw`},
		{"show sys performance ramcache", "show sys performance ramcache is not available"},
		{"show sys performance bogus", `"bogus" unexpected: show sys performance takes all-stats`},
		{"show sys license detail", "show sys license takes no options"},
		{"show sys tmm-info raw", "show sys tmm-info takes no options"},
		{"show sys cpu field-fmt", "field-fmt is not available for show sys cpu"},
		{"show net interface nosuch0", "nosuch0"},
		{"show net route 203.0.113.0/24", "203.0.113.0/24"},
	} {
		if _, errText := run(t, s, tc.cmd); !strings.Contains(errText, tc.err) {
			t.Errorf("%s: error %q, want %q", tc.cmd, errText, tc.err)
		}
	}
}

// tmm-info has one block per event loop, with the clients it serves;
// without a dataplane it is not available.
func TestShowTMMInfo(t *testing.T) {
	var b bytes.Buffer
	if err := writeTMMInfo(&b, []int{3, 0}); err != nil {
		t.Fatal(err)
	}
	for _, re := range []string{`(?m)^-+\nSys::TMM: 0\.0\n-+\nGlobal\n  TMM Process Id\s+\d+\n  Running TMM Id\s+0\n  TMM Count\s+2\n\nConnections\n  Client Connections\s+3\n`,
		`(?m)^Sys::TMM: 0\.1\n-+\nGlobal\n`, `(?m)^  Running TMM Id\s+1$`} {
		if !regexp.MustCompile(re).MatchString(b.String()) {
			t.Errorf("no %s in\n%s", re, b.String())
		}
	}
	e := openTest(t, t.TempDir())
	defer e.Close()
	if _, errText := run(t, e.NewSession("admin").(*Session), "show sys tmm-info"); !strings.Contains(errText, "no dataplane is running") {
		t.Fatalf("without a dataplane: %q", errText)
	}
}

func TestWriteRoutes(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	routes := []hoststat.Route{
		{Destination: netip.MustParsePrefix("0.0.0.0/0"), Gateway: netip.MustParseAddr("192.0.2.1"), Interface: "eth0"},
		{Destination: netip.MustParsePrefix("192.0.2.0/24"), Interface: "eth0"},
		{Destination: netip.MustParsePrefix("fe80::/64"), Interface: "eth0"},
		{Destination: netip.MustParsePrefix("10.0.0.0/8"), Interface: "lo", Reject: true},
	}
	var b bytes.Buffer
	if err := writeRoutes(&b, s, routes, nil); err != nil {
		t.Fatal(err)
	}
	want := `---------------------------------------------------------------
Net::Routes
Name            Destination     Type       NextHop    Origin
---------------------------------------------------------------
default         default         gw         192.0.2.1  kernel
192.0.2.0/24    192.0.2.0/24    interface  eth0       connected
fe80::%eth0/64  fe80::%eth0/64  interface  eth0       connected
10.0.0.0/8      10.0.0.0/8      reject     none       kernel
`
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	if err := writeRoutes(&b, s, routes, []string{"192.*"}); err != nil || strings.Count(b.String(), "\n") != 5 {
		t.Fatalf("a glob: %v\n%s", err, b.String())
	}
}

// Completion offers the host shows' targets and, after one, its options.
func TestCompleteHostShows(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, tc := range []struct {
		line string
		want []string
	}{
		{"show sys ", []string{"cpu", "memory", "performance", "tmm-info", "hardware", "license"}},
		{"show net ", []string{"interface", "route"}},
		{"show sys memory ", []string{"raw"}},
		{"show net interface ", []string{"raw", "all-properties"}},
		{"show sys performance system ", []string{"detail", "raw"}},
	} {
		got := map[string]bool{}
		for _, sg := range s.Complete(tc.line) {
			got[sg.Text] = true
		}
		for _, w := range tc.want {
			if !got[w] {
				t.Errorf("%q: no %q in %v", tc.line, w, got)
			}
		}
	}
}
