package hoststat

import (
	"fmt"
	"strings"
)

// Memory is the host's memory as /proc/meminfo counts it, in bytes: what
// show sys memory's Total and Swap rows report.
type Memory struct {
	Total, Free, Available, Buffers, Cached uint64
	SwapTotal, SwapFree                     uint64
}

// Used is the memory the host cannot hand out without reclaiming it: all
// but what the kernel counts available (free memory plus the caches it
// can drop), as free(1) counts it.
func (m Memory) Used() uint64 { return sub(m.Total, m.Available) }

// SwapUsed is the swap space in use.
func (m Memory) SwapUsed() uint64 { return sub(m.SwapTotal, m.SwapFree) }

func sub(a, b uint64) uint64 {
	if b > a {
		return 0
	}
	return a - b
}

// ParseMeminfo reads /proc/meminfo. A kernel older than 3.14 has no
// MemAvailable: the free memory and the page cache stand for it.
func ParseMeminfo(b []byte) (Memory, error) {
	var m Memory
	seen := map[string]bool{}
	var err error
	lines(b, func(line string) {
		k, v, ok := keyValue(line)
		if !ok || err != nil {
			return
		}
		var dst *uint64
		switch k {
		case "MemTotal":
			dst = &m.Total
		case "MemFree":
			dst = &m.Free
		case "MemAvailable":
			dst = &m.Available
		case "Buffers":
			dst = &m.Buffers
		case "Cached":
			dst = &m.Cached
		case "SwapTotal":
			dst = &m.SwapTotal
		case "SwapFree":
			dst = &m.SwapFree
		default:
			return
		}
		num, unit, _ := strings.Cut(v, " ")
		n, perr := parseUint(num)
		if perr != nil {
			err = fmt.Errorf("meminfo: %s: %w", k, perr)
			return
		}
		if strings.TrimSpace(unit) == "kB" {
			n *= 1024
		}
		*dst = n
		seen[k] = true
	})
	if err != nil {
		return Memory{}, err
	}
	if !seen["MemTotal"] {
		return Memory{}, fmt.Errorf("meminfo: no MemTotal")
	}
	if !seen["MemAvailable"] {
		m.Available = m.Free + m.Buffers + m.Cached
	}
	return m, nil
}

// ReadMemory reads the host's memory now.
func ReadMemory() (Memory, error) {
	b, err := readProc("meminfo")
	if err != nil {
		return Memory{}, err
	}
	return ParseMeminfo(b)
}
