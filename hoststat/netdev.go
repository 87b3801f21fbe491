package hoststat

import (
	"fmt"
	"strings"
)

// Counters are one interface's counters since it came up, as
// /proc/net/dev keeps them: show net interface's Bits, Pkts, Drops and
// Errs columns.
type Counters struct {
	Name                                             string
	RxBytes, RxPackets, RxErrs, RxDrop, RxMulticast  uint64
	TxBytes, TxPackets, TxErrs, TxDrop, TxCollisions uint64
}

// ParseNetDev reads /proc/net/dev: two header lines, then one line per
// interface, "name: 8 receive columns 8 transmit columns".
func ParseNetDev(b []byte) ([]Counters, error) {
	var out []Counters
	var err error
	lines(b, func(line string) {
		name, rest, ok := strings.Cut(line, ":")
		if !ok || err != nil || strings.Contains(name, "|") {
			return // a header line
		}
		f := strings.Fields(rest)
		if len(f) < 16 {
			err = fmt.Errorf("net/dev: %s has %d columns", strings.TrimSpace(name), len(f))
			return
		}
		var v [16]uint64
		for i := range v {
			if v[i], err = parseUint(f[i]); err != nil {
				err = fmt.Errorf("net/dev: %s: %w", strings.TrimSpace(name), err)
				return
			}
		}
		out = append(out, Counters{Name: strings.TrimSpace(name),
			RxBytes: v[0], RxPackets: v[1], RxErrs: v[2], RxDrop: v[3], RxMulticast: v[7],
			TxBytes: v[8], TxPackets: v[9], TxErrs: v[10], TxDrop: v[11], TxCollisions: v[13]})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ReadNetDev reads the host's interface counters now.
func ReadNetDev() ([]Counters, error) {
	b, err := readProc("net/dev")
	if err != nil {
		return nil, err
	}
	return ParseNetDev(b)
}
