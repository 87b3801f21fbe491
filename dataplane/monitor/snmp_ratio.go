package monitor

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// SNMPMetric is one load figure an snmp-dca monitor weighs: the agent's
// use of a resource in percent against the most the monitor accepts
// (Threshold) and how much it counts (Coefficient).
type SNMPMetric struct {
	// Name is the metric's name in errors and traces (cpu, memory, disk,
	// or a user-defined row's name).
	Name string
	// OID is what a user-defined metric reads; "" for the built-in ones,
	// whose OIDs follow the agent type.
	OID         string
	Threshold   float64
	Coefficient float64
}

// MaxDynamicRatio is the highest dynamic ratio a monitor gives: a node
// with no load at all.
const MaxDynamicRatio = 100

// DynamicRatio weighs the metrics' values (percent, in the order of
// metrics) into a member's dynamic ratio, 1 to MaxDynamicRatio.
//
// [M] F5 documents that each metric's threshold is the most use it
// accepts and its coefficient how much it weighs, not the arithmetic.
// openltm gives each metric the headroom it has left below its threshold,
// (threshold - value) / threshold, nothing at or past it; the ratio is
// the coefficient-weighted mean headroom scaled to 1-100. A node idle on
// every metric gets 100, one past every threshold 1 (it stays up; it
// only gets the least traffic), and a node at half its thresholds 50.
// With no metrics (an snmp-dca-base monitor without user-defined rows)
// the ratio is 1, as BIG-IP's default dynamic-ratio.
func DynamicRatio(metrics []SNMPMetric, values []float64) int {
	var sum, weight float64
	for i, m := range metrics {
		if i >= len(values) || m.Coefficient <= 0 {
			continue
		}
		head := 0.0
		if m.Threshold > 0 {
			head = (m.Threshold - values[i]) / m.Threshold
		}
		head = min(max(head, 0), 1)
		sum += m.Coefficient * head
		weight += m.Coefficient
	}
	if weight == 0 {
		return 1
	}
	r := int(math.Round(MaxDynamicRatio * sum / weight))
	return min(max(r, 1), MaxDynamicRatio)
}

// ParseSNMPUserMetric reads a user-defined row's value, "OID [threshold
// [coefficient]]" [M: threshold 100 and coefficient 1 when left out],
// so a bad row refuses the commit rather than failing every probe.
func ParseSNMPUserMetric(name, value string) (SNMPMetric, error) {
	f := strings.Fields(value)
	m := SNMPMetric{Name: name, Threshold: 100, Coefficient: 1}
	if len(f) == 0 || len(f) > 3 {
		return m, fmt.Errorf("user-defined %s: %q is not \"OID [threshold [coefficient]]\"", name, value)
	}
	oid := strings.TrimPrefix(f[0], ".")
	if err := checkOID(oid); err != nil {
		return m, fmt.Errorf("user-defined %s: %v", name, err)
	}
	m.OID = "." + oid
	if len(f) > 1 {
		t, err := strconv.ParseFloat(f[1], 64)
		if err != nil || t <= 0 || t > 100 {
			return m, fmt.Errorf("user-defined %s: threshold %q is not a percentage (1-100)", name, f[1])
		}
		m.Threshold = t
	}
	if len(f) > 2 {
		c, err := ParseCoefficient(f[2])
		if err != nil {
			return m, fmt.Errorf("user-defined %s: %v", name, err)
		}
		m.Coefficient = c
	}
	return m, nil
}

// ParseCoefficient reads a metric coefficient (1.5, 2.0 ...), a decimal
// number from 0 to 100.
func ParseCoefficient(s string) (float64, error) {
	c, err := strconv.ParseFloat(s, 64)
	if err != nil || c < 0 || c > 100 || math.IsNaN(c) {
		return 0, fmt.Errorf("coefficient %q is not a number from 0 to 100", s)
	}
	return c, nil
}

func checkOID(oid string) error {
	parts := strings.Split(oid, ".")
	if len(parts) < 2 {
		return fmt.Errorf("%q is not an OID (dotted numbers such as .1.3.6.1.4.1.2021.10.1.5.1)", oid)
	}
	for _, p := range parts {
		if _, err := strconv.ParseUint(p, 10, 32); err != nil {
			return fmt.Errorf("%q is not an OID (dotted numbers such as .1.3.6.1.4.1.2021.10.1.5.1)", oid)
		}
	}
	return nil
}

// errNoSNMPValue is a metric the agent has no number for.
var errNoSNMPValue = errors.New("no such object")
