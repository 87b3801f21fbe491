package monitor

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var (
	dcaCPU  = SNMPMetric{Name: "cpu", Threshold: 80, Coefficient: 1.5}
	dcaMem  = SNMPMetric{Name: "memory", Threshold: 70, Coefficient: 1.0}
	dcaDisk = SNMPMetric{Name: "disk", Threshold: 90, Coefficient: 2.0}
)

func TestDynamicRatio(t *testing.T) {
	all := []SNMPMetric{dcaCPU, dcaMem, dcaDisk}
	for _, tc := range []struct {
		name    string
		metrics []SNMPMetric
		values  []float64
		want    int
	}{
		{"idle node", all, []float64{0, 0, 0}, 100},
		{"past every threshold", all, []float64{95, 90, 99}, 1},
		{"half of every threshold", all, []float64{40, 35, 45}, 50},
		{"cpu busy only", all, []float64{80, 0, 0}, 67},  // (0*1.5 + 1 + 2) / 4.5
		{"disk full only", all, []float64{0, 0, 90}, 56}, // (1.5 + 1 + 0) / 4.5
		{"one metric", []SNMPMetric{dcaCPU}, []float64{20}, 75},
		{"no metrics", nil, nil, 1},
		{"zero coefficient ignored", []SNMPMetric{{Name: "x", Threshold: 50, Coefficient: 0}, dcaCPU}, []float64{50, 0}, 100},
		{"negative value is idle", []SNMPMetric{dcaCPU}, []float64{-5}, 100},
		{"fewer values than metrics", all, []float64{0}, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := DynamicRatio(tc.metrics, tc.values); got != tc.want {
				t.Errorf("DynamicRatio(%v) = %d, want %d", tc.values, got, tc.want)
			}
		})
	}
}

func TestParseSNMPUserMetric(t *testing.T) {
	for _, tc := range []struct {
		value   string
		want    SNMPMetric
		wantErr string
	}{
		{".1.3.6.1.4.1.2021.10.1.5.1", SNMPMetric{Name: "u", OID: ".1.3.6.1.4.1.2021.10.1.5.1", Threshold: 100, Coefficient: 1}, ""},
		{"1.3.6.1.4.1.99 50", SNMPMetric{Name: "u", OID: ".1.3.6.1.4.1.99", Threshold: 50, Coefficient: 1}, ""},
		{"1.3.6.1.4.1.99 50 2.5", SNMPMetric{Name: "u", OID: ".1.3.6.1.4.1.99", Threshold: 50, Coefficient: 2.5}, ""},
		{"", SNMPMetric{}, "is not"},
		{"ssCpuIdle", SNMPMetric{}, "is not an OID"},
		{"1.3.6 0", SNMPMetric{}, "threshold"},
		{"1.3.6 101", SNMPMetric{}, "threshold"},
		{"1.3.6 50 x", SNMPMetric{}, "coefficient"},
		{"1.3.6 50 1 extra", SNMPMetric{}, "is not"},
	} {
		got, err := ParseSNMPUserMetric("u", tc.value)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: error %v, want one with %q", tc.value, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: %+v, %v; want %+v", tc.value, got, err, tc.want)
		}
	}
}

// startSNMPD runs net-snmp's snmpd on addr (udp) with lines added to its
// configuration, until the test ends; it skips the test when snmpd is
// not installed.
func startSNMPD(t *testing.T, addr netip.AddrPort, lines ...string) *exec.Cmd {
	t.Helper()
	const snmpd = "/usr/sbin/snmpd"
	if _, err := os.Stat(snmpd); err != nil {
		t.Skip("net-snmp's snmpd (Debian snmpd) is needed for this test")
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "snmpd.conf")
	text := "rocommunity public 127.0.0.0/8\n" + strings.Join(lines, "\n") + "\n"
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	// The host's own processor and storage tables are left out
	// (hr_proc, hrh_storage), so that overrides stand for them.
	cmd := exec.Command(snmpd, "-f", "-Lo", "-C", "-c", conf, "-M", "/nonexistent", "-I", "-smux,hr_proc,hrh_storage,hr_storage", "udp:"+addr.String())
	cmd.Env = append(os.Environ(), "SNMP_PERSISTENT_DIR="+dir, "MIBS=")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

// ucdOverrides sets what a UCD agent reports: cpu and disk use and
// memory use, in percent.
func ucdOverrides(cpu, mem, disk int) []string {
	return []string{
		fmt.Sprintf("override %s integer %d", oidSSCpuIdle, 100-cpu),
		fmt.Sprintf("override %s integer 1000", oidMemTotalReal),
		fmt.Sprintf("override %s integer %d", oidMemAvailReal, 1000-10*mem),
		fmt.Sprintf("override %s integer %d", oidDskPercent, disk),
	}
}

// eventually probes until the outcome satisfies ok (the agent may still
// be starting), within 20 s.
func probeUntil(t *testing.T, spec *Spec, target netip.AddrPort, ok func(Outcome, error) bool) (Outcome, error) {
	t.Helper()
	var out Outcome
	var err error
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		out, err = Probe(ctx, spec, target)
		cancel()
		if ok(out, err) {
			return out, err
		}
		time.Sleep(100 * time.Millisecond)
	}
	return out, err
}

func TestProbeSNMPDCA(t *testing.T) {
	agent := netip.MustParseAddrPort("127.115.1.1:16101")
	startSNMPD(t, agent, append(ucdOverrides(40, 35, 45),
		"override .1.3.6.1.4.1.99999.1.0 integer 25",
		"override .1.3.6.1.4.1.99999.2.0 octet_str 75")...)
	ucd := &SNMPCheck{Community: "public", Agent: AgentUCD, CPU: dcaCPU, Memory: dcaMem, Disk: dcaDisk, Port: agent.Port()}
	for _, tc := range []struct {
		name string
		spec *Spec
		want int
	}{
		{"snmp-dca v1, UCD", &Spec{Type: SNMPDCA, SNMP: ucd}, 50},
		{"snmp-dca v2c, UCD", &Spec{Type: SNMPDCA, SNMP: &SNMPCheck{Community: "public", V2c: true, Agent: AgentUCD,
			CPU: dcaCPU, Memory: dcaMem, Disk: dcaDisk, Port: agent.Port()}}, 50},
		{"snmp-dca-base, one user metric", &Spec{Type: SNMPDCABase, SNMP: &SNMPCheck{Community: "public", Port: agent.Port(),
			User: []SNMPMetric{{Name: "load", OID: ".1.3.6.1.4.1.99999.1.0", Threshold: 100, Coefficient: 1}}}}, 75},
		{"snmp-dca-base, a string metric", &Spec{Type: SNMPDCABase, SNMP: &SNMPCheck{Community: "public", Port: agent.Port(),
			User: []SNMPMetric{{Name: "s", OID: ".1.3.6.1.4.1.99999.2.0", Threshold: 100, Coefficient: 1}}}}, 25},
		{"snmp-dca-base, no metrics", &Spec{Type: SNMPDCABase, SNMP: &SNMPCheck{Community: "public", Port: agent.Port()}}, 1},
		{"snmp-dca-base, a missing OID is left out", &Spec{Type: SNMPDCABase, SNMP: &SNMPCheck{Community: "public", V2c: true, Port: agent.Port(),
			User: []SNMPMetric{{Name: "gone", OID: ".1.3.6.1.4.1.99999.9.0", Threshold: 100, Coefficient: 1}}}}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.spec.Name = "/Common/m"
			if err := tc.spec.Check(); err != nil {
				t.Fatal(err)
			}
			out, err := probeUntil(t, tc.spec, agent, func(o Outcome, err error) bool { return err == nil })
			if err != nil || !out.Up || out.DynamicRatio != tc.want {
				t.Fatalf("probe: %+v, %v; want up with dynamic ratio %d", out, err, tc.want)
			}
		})
	}

	t.Run("wrong community", func(t *testing.T) {
		spec := &Spec{Type: SNMPDCA, SNMP: &SNMPCheck{Community: "private", Agent: AgentUCD, CPU: dcaCPU, Port: agent.Port()}}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if out, err := Probe(ctx, spec, agent); err == nil || out.Up {
			t.Fatalf("probe with a community the agent refuses: %+v, %v; want down", out, err)
		}
	})
}

// An instance's state carries the ratio, and the member goes down when
// its agent stops.
func TestSNMPInstanceDown(t *testing.T) {
	agent := netip.MustParseAddrPort("127.115.1.2:16102")
	cmd := startSNMPD(t, agent, ucdOverrides(0, 0, 0)...)
	spec := &Spec{Type: SNMPDCA, Name: "/Common/dca", Interval: 200 * time.Millisecond, Timeout: 2 * time.Second,
		SNMP: &SNMPCheck{Community: "public", Agent: AgentUCD, CPU: dcaCPU, Memory: dcaMem, Disk: dcaDisk, Port: agent.Port()}}
	states := make(chan State, 64)
	in := Start(spec, agent, func(s State) {
		select {
		case states <- s:
		default:
		}
	})
	defer in.Stop()
	wait := func(want Status) State {
		t.Helper()
		timeout := time.After(30 * time.Second)
		for {
			select {
			case s := <-states:
				if s.Status == want {
					return s
				}
			case <-timeout:
				t.Fatalf("no %v within 30s (state %+v)", want, in.State())
			}
		}
	}
	if s := wait(Up); s.DynamicRatio != 100 {
		t.Fatalf("up with dynamic ratio %d, want 100", s.DynamicRatio)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if s := wait(Down); s.LastError == "" {
		t.Fatalf("down without a last error: %+v", s)
	}
}

// hrOverrides sets what a HOST-RESOURCES-MIB agent reports: two
// processors whose mean load is cpu, one RAM store of which mem percent
// is used, and two fixed disks (and a removable one, which is not
// counted) of which disk percent is used together.
func hrOverrides(cpu, mem, disk int) []string {
	return []string{
		fmt.Sprintf("override %s.196608 integer %d", oidHrProcessorLoad, cpu-10),
		fmt.Sprintf("override %s.196609 integer %d", oidHrProcessorLoad, cpu+10),
		fmt.Sprintf("override %s.1 object_id %s", oidHrStorageType, oidHrStorageRAM),
		fmt.Sprintf("override %s.1 integer 2000", oidHrStorageSize),
		fmt.Sprintf("override %s.1 integer %d", oidHrStorageUsed, 20*mem),
		fmt.Sprintf("override %s.31 object_id %s", oidHrStorageType, oidHrStorageDisk),
		fmt.Sprintf("override %s.31 integer 1000", oidHrStorageSize),
		fmt.Sprintf("override %s.31 integer %d", oidHrStorageUsed, 10*disk-100),
		fmt.Sprintf("override %s.32 object_id %s", oidHrStorageType, oidHrStorageDisk),
		fmt.Sprintf("override %s.32 integer 1000", oidHrStorageSize),
		fmt.Sprintf("override %s.32 integer %d", oidHrStorageUsed, 10*disk+100),
		fmt.Sprintf("override %s.40 object_id .1.3.6.1.2.1.25.2.1.5", oidHrStorageType), // hrStorageRemovableDisk
		fmt.Sprintf("override %s.40 integer 1000", oidHrStorageSize),
		fmt.Sprintf("override %s.40 integer 1000", oidHrStorageUsed),
	}
}

// The WIN2000 and GENERIC agent types read HOST-RESOURCES-MIB: the mean
// of hrProcessorLoad, and the used share of the RAM and of the fixed
// disks in hrStorageTable, walked with GETNEXT (v1) or GETBULK (v2c).
func TestProbeSNMPHostResources(t *testing.T) {
	agent := netip.MustParseAddrPort("127.126.1.1:16111")
	startSNMPD(t, agent, hrOverrides(40, 35, 45)...)
	for _, tc := range []struct {
		name  string
		agent string
		v2c   bool
		want  int
	}{
		{"WIN2000 v1", AgentWIN2000, false, 50},
		{"GENERIC v1", AgentGeneric, false, 50},
		{"GENERIC v2c", AgentGeneric, true, 50},
		{"WIN2000 v2c", AgentWIN2000, true, 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := &Spec{Type: SNMPDCA, Name: "/Common/dca", SNMP: &SNMPCheck{Community: "public", V2c: tc.v2c, Agent: tc.agent,
				CPU: dcaCPU, Memory: dcaMem, Disk: dcaDisk, Port: agent.Port()}}
			if err := spec.Check(); err != nil {
				t.Fatal(err)
			}
			out, err := probeUntil(t, spec, agent, func(o Outcome, err error) bool { return err == nil })
			if err != nil || !out.Up || out.DynamicRatio != tc.want {
				t.Fatalf("probe: %+v, %v; want up with dynamic ratio %d", out, err, tc.want)
			}
		})
	}
	// A processor past its threshold weighs the ratio down; the storage
	// figures still count.
	busy := netip.MustParseAddrPort("127.126.1.2:16112")
	startSNMPD(t, busy, hrOverrides(90, 35, 45)...)
	spec := &Spec{Type: SNMPDCA, Name: "/Common/dca", SNMP: &SNMPCheck{Community: "public", Agent: AgentGeneric,
		CPU: dcaCPU, Memory: dcaMem, Disk: dcaDisk, Port: busy.Port()}}
	// cpu: no headroom (weight 1.5); memory and disk half (1 + 2) of 4.5.
	out, err := probeUntil(t, spec, busy, func(o Outcome, err error) bool { return err == nil })
	if want := 33; err != nil || !out.Up || out.DynamicRatio != want {
		t.Fatalf("probe: %+v, %v; want up with dynamic ratio %d", out, err, want)
	}
}
