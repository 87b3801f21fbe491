package hoststat

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseMeminfo(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       Memory
		err        string
	}{
		{"a current kernel", "MemTotal:       16318412 kB\nMemFree:         1182276 kB\nMemAvailable:    9876512 kB\nBuffers:          512000 kB\nCached:          7000000 kB\nSwapCached:            0 kB\nSwapTotal:       2097148 kB\nSwapFree:        2000000 kB\n",
			Memory{Total: 16318412 * 1024, Free: 1182276 * 1024, Available: 9876512 * 1024, Buffers: 512000 * 1024, Cached: 7000000 * 1024,
				SwapTotal: 2097148 * 1024, SwapFree: 2000000 * 1024}, ""},
		{"no MemAvailable", "MemTotal: 1000 kB\nMemFree: 100 kB\nBuffers: 10 kB\nCached: 200 kB\n",
			Memory{Total: 1000 * 1024, Free: 100 * 1024, Available: 310 * 1024, Buffers: 10 * 1024, Cached: 200 * 1024}, ""},
		{"no MemTotal", "MemFree: 100 kB\n", Memory{}, "no MemTotal"},
		{"a bad number", "MemTotal: lots kB\n", Memory{}, "MemTotal"},
	} {
		got, err := ParseMeminfo([]byte(tc.text))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: got %+v %v, want %+v", tc.name, got, err, tc.want)
		}
	}
	m := Memory{Total: 100, Available: 30, SwapTotal: 10, SwapFree: 4}
	if m.Used() != 70 || m.SwapUsed() != 6 || (Memory{Total: 1, Available: 2}).Used() != 0 {
		t.Errorf("Used %d SwapUsed %d", m.Used(), m.SwapUsed())
	}
}

const statText = `cpu  4705 356 584 3699176 23060 0 277 0 0 0
cpu0 1393 280 283 1832234 21186 0 143 0 0 0
cpu1 3312 76 301 1866942 1874 0 134 0 0 0
intr 114930548 113199788 3 0 5 263 0 4 [... more]
ctxt 1990473
btime 1062191376
processes 2915
procs_running 1
`

func TestParseStat(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       Stat
		err        string
	}{
		{"two processors", statText, Stat{
			Total: CPUTimes{User: 4705, Nice: 356, System: 584, Idle: 3699176, IOWait: 23060, SoftIRQ: 277},
			Processors: []Processor{
				{0, CPUTimes{User: 1393, Nice: 280, System: 283, Idle: 1832234, IOWait: 21186, SoftIRQ: 143}},
				{1, CPUTimes{User: 3312, Nice: 76, System: 301, Idle: 1866942, IOWait: 1874, SoftIRQ: 134}}},
			Boot: time.Unix(1062191376, 0)}, ""},
		{"an old kernel's four columns", "cpu 1 2 3 4\ncpu0 1 2 3 4\n", Stat{
			Total: CPUTimes{User: 1, Nice: 2, System: 3, Idle: 4}, Processors: []Processor{{0, CPUTimes{User: 1, Nice: 2, System: 3, Idle: 4}}}}, ""},
		{"no cpu line", "ctxt 1\n", Stat{}, "no cpu line"},
		{"too few columns", "cpu 1 2\n", Stat{}, "columns"},
		{"a bad processor", "cpu 1 2 3 4\ncpux 1 2 3 4\n", Stat{}, "no processor"},
	} {
		got, err := ParseStat([]byte(tc.text))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %+v %v, want %+v", tc.name, got, err, tc.want)
		}
	}
}

func TestUsage(t *testing.T) {
	for _, tc := range []struct {
		name      string
		prev, cur CPUTimes
		want      float64
	}{
		{"a quarter busy", CPUTimes{User: 10, Idle: 90}, CPUTimes{User: 30, Idle: 150}, 25},
		{"io wait is idle", CPUTimes{}, CPUTimes{IOWait: 50, System: 50}, 50},
		{"no tick", CPUTimes{User: 5}, CPUTimes{User: 5}, 0},
		{"counters went back", CPUTimes{User: 50}, CPUTimes{User: 5}, 0},
	} {
		if got := Usage(tc.prev, tc.cur); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestParseStatus(t *testing.T) {
	text := "Name:\tltmd\nVmPeak:\t  900000 kB\nVmSize:\t  800000 kB\nVmHWM:\t   60000 kB\nVmRSS:\t   50000 kB\nThreads:\t12\n"
	got, err := ParseStatus([]byte(text))
	want := Process{Resident: 50000 * 1024, PeakResident: 60000 * 1024, Virtual: 800000 * 1024, Threads: 12}
	if err != nil || got != want {
		t.Fatalf("got %+v %v, want %+v", got, err, want)
	}
	if _, err := ParseStatus([]byte("Name:\tkthreadd\n")); err == nil {
		t.Fatal("a kernel thread's status has no VmRSS")
	}
}

func TestParseNetDev(t *testing.T) {
	text := `Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo: 1000 10 0 0 0 0 0 0 1000 10 0 0 0 0 0 0
  eth0: 312500 2000 1 2 0 0 0 7 625000 3000 3 4 0 5 0 0
`
	got, err := ParseNetDev([]byte(text))
	want := []Counters{
		{Name: "lo", RxBytes: 1000, RxPackets: 10, TxBytes: 1000, TxPackets: 10},
		{Name: "eth0", RxBytes: 312500, RxPackets: 2000, RxErrs: 1, RxDrop: 2, RxMulticast: 7, TxBytes: 625000, TxPackets: 3000, TxErrs: 3, TxDrop: 4, TxCollisions: 5},
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v %v", got, err)
	}
	if _, err := ParseNetDev([]byte("eth0: 1 2 3\n")); err == nil {
		t.Fatal("a short line")
	}
}

func TestParseRoute(t *testing.T) {
	text := "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n" +
		"eth0\t00000000\t010200C0\t0003\t0\t0\t100\t00000000\t0\t0\t0\n" +
		"eth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n" +
		"lo\t0000000A\t00000000\t0201\t0\t0\t0\t000000FF\t0\t0\t0\n" +
		"eth1\t0000A8C0\t00000000\t0000\t0\t0\t0\t0000FFFF\t0\t0\t0\n"
	got, err := ParseRoute([]byte(text))
	want := []Route{
		{Destination: netip.MustParsePrefix("0.0.0.0/0"), Gateway: netip.MustParseAddr("192.0.2.1"), Interface: "eth0", Metric: 100},
		{Destination: netip.MustParsePrefix("192.0.2.0/24"), Interface: "eth0"},
		{Destination: netip.MustParsePrefix("10.0.0.0/8"), Interface: "lo", Reject: true},
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v %v", got, err)
	}
	for _, bad := range []string{"eth0 zz 00000000 0001 0 0 0 00000000\n", "eth0 00000000 00000000 0001 0 0 x 00000000\n"} {
		if _, err := ParseRoute([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestParseIPv6Route(t *testing.T) {
	text := `fd000000000000000000000000000000 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00000001     eth0
00000000000000000000000000000000 00 00000000000000000000000000000000 00 fd000000000000000000000000000001 00000400 00000003 00000000 00000003     eth0
00000000000000000000000000000001 80 00000000000000000000000000000000 00 00000000000000000000000000000000 00000000 00000004 00000000 80200001       lo
00000000000000000000000000000000 00 00000000000000000000000000000000 00 00000000000000000000000000000000 ffffffff 00000001 00000000 00200200       lo
`
	got, err := ParseIPv6Route([]byte(text))
	want := []Route{
		{Destination: netip.MustParsePrefix("fd00::/64"), Interface: "eth0", Metric: 256},
		{Destination: netip.MustParsePrefix("::/0"), Gateway: netip.MustParseAddr("fd00::1"), Interface: "eth0", Metric: 1024},
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v %v", got, err)
	}
	if _, err := ParseIPv6Route([]byte("xx 40 00000000000000000000000000000000 00 00000000000000000000000000000000 0 0 0 1 eth0\n")); err == nil {
		t.Fatal("a bad address")
	}
}

func TestParseCPUInfo(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       CPUInfo
	}{
		{"x86, two cores with two threads each", strings.Repeat("", 0) +
			"processor\t: 0\nmodel name\t: Intel(R) Xeon(R) CPU E5-2670 0 @ 2.60GHz\ncpu MHz\t\t: 2600.000\ncache size\t: 20480 KB\nphysical id\t: 0\ncore id\t\t: 0\n\n" +
			"processor\t: 1\nmodel name\t: Intel(R) Xeon(R) CPU E5-2670 0 @ 2.60GHz\ncpu MHz\t\t: 2400.000\nphysical id\t: 0\ncore id\t\t: 1\n\n" +
			"processor\t: 2\nphysical id\t: 0\ncore id\t\t: 0\n\nprocessor\t: 3\nphysical id\t: 0\ncore id\t\t: 1\n",
			CPUInfo{Model: "Intel(R) Xeon(R) CPU E5-2670 0 @ 2.60GHz", MHz: 2600, CacheSize: "20480 KB", Processors: 4, Cores: 2, Sockets: 1}},
		{"arm without topology", "processor\t: 0\nBogoMIPS\t: 50.00\n\nprocessor\t: 1\n\nHardware\t: BCM2835\n",
			CPUInfo{Model: "BCM2835", Processors: 2, Cores: 2, Sockets: 1}},
		{"nothing", "", CPUInfo{Sockets: 1}},
	} {
		if got := ParseCPUInfo([]byte(tc.text)); got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestParseSpeed(t *testing.T) {
	for in, want := range map[string]int{"10000\n": 10000, "-1\n": 0, "": 0, "x": 0} {
		if got := ParseSpeed([]byte(in)); got != want {
			t.Errorf("%q: %d, want %d", in, got, want)
		}
	}
}

// The thin readers work on this host: each returns what its parser
// makes of the real file.
func TestReaders(t *testing.T) {
	if m, err := ReadMemory(); err != nil || m.Total == 0 {
		t.Errorf("ReadMemory: %+v %v", m, err)
	}
	if s, err := ReadStat(); err != nil || len(s.Processors) == 0 {
		t.Errorf("ReadStat: %+v %v", s, err)
	}
	if p, err := ReadSelf(); err != nil || p.Resident == 0 {
		t.Errorf("ReadSelf: %+v %v", p, err)
	}
	if c, err := ReadNetDev(); err != nil || len(c) == 0 {
		t.Errorf("ReadNetDev: %+v %v", c, err)
	}
	if _, err := ReadRoutes(); err != nil {
		t.Errorf("ReadRoutes: %v", err)
	}
	if c, err := ReadCPUInfo(); err != nil || c.Processors == 0 {
		t.Errorf("ReadCPUInfo: %+v %v", c, err)
	}
	if ifs, err := ReadInterfaces(); err != nil || len(ifs) == 0 {
		t.Errorf("ReadInterfaces: %+v %v", ifs, err)
	}
	if s, err := ReadSystem(); err != nil || s.Kernel == "" {
		t.Errorf("ReadSystem: %+v %v", s, err)
	}
	if subs := ReadRuntime(); len(subs) == 0 || subs[0].Held == 0 {
		t.Errorf("ReadRuntime: %+v", subs)
	}
}
