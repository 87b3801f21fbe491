package monitor

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/gosnmp/gosnmp"
)

// The SNMP agent types an snmp-dca monitor knows the OIDs of.
const (
	// AgentUCD is net-snmp's (formerly UCD-SNMP) agent: UCD-SNMP-MIB.
	AgentUCD = "UCD"
	// AgentWIN2000 and AgentGeneric are read through HOST-RESOURCES-MIB,
	// which Windows' agent and most others serve.
	AgentWIN2000 = "WIN2000"
	AgentGeneric = "GENERIC"
)

// SNMPCheck is the snmp-dca and snmp-dca-base monitors' settings.
type SNMPCheck struct {
	Community string
	// V2c is version v2c; v1 otherwise.
	V2c bool
	// Agent is agent-type (AgentUCD ...); "" for snmp-dca-base, which
	// reads only the user-defined metrics.
	Agent string
	// CPU, Memory and Disk are snmp-dca's metrics (unused without Agent).
	CPU, Memory, Disk SNMPMetric
	// User are the user-defined metrics, sorted by name.
	User []SNMPMetric
	// Port is the agent's port when the destination names one; 0 is
	// SNMP's, 161.
	Port uint16
}

func (c *SNMPCheck) equal(o *SNMPCheck) bool {
	if c == nil || o == nil {
		return c == o
	}
	if len(c.User) != len(o.User) {
		return false
	}
	for i := range c.User {
		if c.User[i] != o.User[i] {
			return false
		}
	}
	return c.Community == o.Community && c.V2c == o.V2c && c.Agent == o.Agent &&
		c.CPU == o.CPU && c.Memory == o.Memory && c.Disk == o.Disk && c.Port == o.Port
}

func (c *SNMPCheck) check() error {
	if c == nil {
		return nil
	}
	switch c.Agent {
	case "", AgentUCD, AgentWIN2000, AgentGeneric:
	default:
		return fmt.Errorf("agent-type %q is not UCD, WIN2000 or GENERIC", c.Agent)
	}
	for _, m := range c.User {
		if err := checkOID(strings.TrimPrefix(m.OID, ".")); err != nil {
			return fmt.Errorf("user-defined %s: %v", m.Name, err)
		}
	}
	return nil
}

// The UCD-SNMP-MIB objects snmp-dca reads from a UCD agent.
const (
	oidSSCpuIdle    = ".1.3.6.1.4.1.2021.11.11.0" // ssCpuIdle: percent idle
	oidMemTotalReal = ".1.3.6.1.4.1.2021.4.5.0"   // memTotalReal, kB
	oidMemAvailReal = ".1.3.6.1.4.1.2021.4.6.0"   // memAvailReal, kB
	oidDskPercent   = ".1.3.6.1.4.1.2021.9.1.9.1" // dskPercent of the first disk
)

// The HOST-RESOURCES-MIB objects read from WIN2000 and GENERIC agents.
const (
	oidHrProcessorLoad = ".1.3.6.1.2.1.25.3.3.1.2"
	oidHrStorageType   = ".1.3.6.1.2.1.25.2.3.1.2"
	oidHrStorageSize   = ".1.3.6.1.2.1.25.2.3.1.5"
	oidHrStorageUsed   = ".1.3.6.1.2.1.25.2.3.1.6"
	oidHrStorageRAM    = ".1.3.6.1.2.1.25.2.1.2"
	oidHrStorageDisk   = ".1.3.6.1.2.1.25.2.1.4"
)

// probeSNMP asks the node's SNMP agent (gosnmp, resent every second
// until the deadline) for the monitor's metrics. The member is up when
// the agent answers; the answer's values weigh into the dynamic ratio
// (DynamicRatio). A metric the agent has no number for is left out of
// the ratio [M], so an agent without disk figures is weighed by the
// others.
func probeSNMP(ctx context.Context, spec *Spec, target netip.AddrPort) (Outcome, error) {
	c := spec.SNMP
	if c == nil {
		c = &SNMPCheck{Community: "public", Agent: AgentUCD}
	}
	port := target.Port()
	if c.Port == 0 {
		port = 161
	}
	timeout := time.Second
	retries := 0
	if dl, ok := ctx.Deadline(); ok {
		left := time.Until(dl)
		timeout = min(timeout, max(left, time.Millisecond))
		retries = max(int(left/timeout)-1, 0)
	}
	g := &gosnmp.GoSNMP{
		Target: target.Addr().Unmap().String(), Port: port, Transport: "udp",
		Community: c.Community, Version: gosnmp.Version1,
		Context: ctx, Timeout: timeout, Retries: retries,
		Control: control(ctx), MaxOids: gosnmp.MaxOids,
	}
	if c.V2c {
		g.Version = gosnmp.Version2c
	}
	if err := g.Connect(); err != nil {
		return Outcome{}, fmt.Errorf("Unable to connect; %v", unwrapSyscall(err))
	}
	defer g.Conn.Close()

	var metrics []SNMPMetric
	var values []float64
	add := func(m SNMPMetric, v float64, ok bool) {
		if ok {
			metrics, values = append(metrics, m), append(values, v)
		}
	}
	fail := func(err error) (Outcome, error) {
		if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "timeout") {
			return Outcome{}, ErrNoResponse
		}
		return Outcome{}, fmt.Errorf("Unable to receive; %v", unwrapSyscall(err))
	}
	var oids []string
	switch c.Agent {
	case AgentUCD:
		oids = append(oids, oidSSCpuIdle, oidMemTotalReal, oidMemAvailReal, oidDskPercent)
	case AgentWIN2000, AgentGeneric:
		cpu, mem, disk, err := hostResources(g)
		if err != nil {
			return fail(err)
		}
		add(c.CPU, cpu.v, cpu.ok)
		add(c.Memory, mem.v, mem.ok)
		add(c.Disk, disk.v, disk.ok)
	}
	for _, m := range c.User {
		oids = append(oids, m.OID)
	}
	if len(oids) == 0 && c.Agent == "" {
		// snmp-dca-base without user-defined metrics: any answer will do.
		oids = []string{".1.3.6.1.2.1.1.3.0"} // sysUpTime
	}
	got := map[string]float64{}
	for len(oids) > 0 {
		n := min(len(oids), gosnmp.MaxOids)
		pkt, err := g.Get(oids[:n])
		if err != nil {
			return fail(err)
		}
		if pkt.Error != gosnmp.NoError && pkt.Error != gosnmp.NoSuchName {
			return Outcome{}, fmt.Errorf("SNMP error %v", pkt.Error)
		}
		for _, v := range pkt.Variables {
			if f, err := snmpNumber(v); err == nil {
				got["."+strings.TrimPrefix(v.Name, ".")] = f
			}
		}
		oids = oids[n:]
	}
	if c.Agent == AgentUCD {
		if idle, ok := got[oidSSCpuIdle]; ok {
			add(c.CPU, 100-idle, true)
		}
		total, ok1 := got[oidMemTotalReal]
		avail, ok2 := got[oidMemAvailReal]
		if ok1 && ok2 && total > 0 {
			add(c.Memory, 100*(total-avail)/total, true)
		}
		d, ok := got[oidDskPercent]
		add(c.Disk, d, ok)
	}
	for _, m := range c.User {
		v, ok := got[m.OID]
		add(m, v, ok)
	}
	r := DynamicRatio(metrics, values)
	if _, ok := ctx.Value(traceKey{}).(*probeTrace); ok {
		parts := make([]string, len(metrics))
		for i, m := range metrics {
			parts[i] = fmt.Sprintf("%s %.0f%%", m.Name, values[i])
		}
		tracef(ctx, "agent answered (%s): dynamic ratio %d", strings.Join(parts, ", "), r)
	}
	return Outcome{Up: true, DynamicRatio: r}, nil
}

type hrValue struct {
	v  float64
	ok bool
}

// hostResources reads the mean processor load and the used share of
// the RAM and fixed-disk storage from HOST-RESOURCES-MIB.
func hostResources(g *gosnmp.GoSNMP) (cpu, mem, disk hrValue, err error) {
	walk := g.Walk
	if g.Version == gosnmp.Version2c {
		walk = g.BulkWalk
	}
	var load, n float64
	if err = walk(oidHrProcessorLoad, func(p gosnmp.SnmpPDU) error {
		if f, err := snmpNumber(p); err == nil {
			load, n = load+f, n+1
		}
		return nil
	}); err != nil {
		return
	}
	if n > 0 {
		cpu = hrValue{load / n, true}
	}
	types, sizes, used := map[string]string{}, map[string]float64{}, map[string]float64{}
	index := func(name, col string) string {
		return strings.TrimPrefix(strings.TrimPrefix(name, "."), strings.TrimPrefix(col, ".")+".")
	}
	if err = walk(oidHrStorageType, func(p gosnmp.SnmpPDU) error {
		if s, ok := p.Value.(string); ok {
			types[index(p.Name, oidHrStorageType)] = "." + strings.TrimPrefix(s, ".")
		}
		return nil
	}); err != nil {
		return
	}
	for _, col := range []struct {
		oid string
		m   map[string]float64
	}{{oidHrStorageSize, sizes}, {oidHrStorageUsed, used}} {
		if err = walk(col.oid, func(p gosnmp.SnmpPDU) error {
			if f, err := snmpNumber(p); err == nil {
				col.m[index(p.Name, col.oid)] = f
			}
			return nil
		}); err != nil {
			return
		}
	}
	var ramSize, ramUsed, dskSize, dskUsed float64
	for i, t := range types {
		switch t {
		case oidHrStorageRAM:
			ramSize, ramUsed = ramSize+sizes[i], ramUsed+used[i]
		case oidHrStorageDisk:
			dskSize, dskUsed = dskSize+sizes[i], dskUsed+used[i]
		}
	}
	if ramSize > 0 {
		mem = hrValue{100 * ramUsed / ramSize, true}
	}
	if dskSize > 0 {
		disk = hrValue{100 * dskUsed / dskSize, true}
	}
	return
}

// snmpNumber is a variable's value as a number: an integer of any SNMP
// type, or a string holding a decimal number (an extend's output).
func snmpNumber(v gosnmp.SnmpPDU) (float64, error) {
	switch v.Type {
	case gosnmp.NoSuchObject, gosnmp.NoSuchInstance, gosnmp.EndOfMibView, gosnmp.Null:
		return 0, errNoSNMPValue
	case gosnmp.OctetString:
		b, _ := v.Value.([]byte)
		return strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
	case gosnmp.Opaque:
		switch x := v.Value.(type) {
		case float32:
			return float64(x), nil
		case float64:
			return x, nil
		}
	}
	i := gosnmp.ToBigInt(v.Value)
	if i == nil {
		return 0, errNoSNMPValue
	}
	f, _ := new(big.Float).SetInt(i).Float64()
	return f, nil
}
