package hoststat

import (
	"strconv"
)

// CPUInfo is what show sys hardware tells of the processors, from
// /proc/cpuinfo.
type CPUInfo struct {
	Model      string  // "model name" (x86) or the first of "Model", "Hardware" (arm)
	MHz        float64 // the first processor's clock now; 0 when not given
	CacheSize  string  // as the kernel prints it ("16384 KB"); "" when not given
	Processors int     // logical processors
	Cores      int     // physical cores (distinct physical id and core id); Processors when not given
	Sockets    int     // distinct physical ids; 1 when not given
}

// ParseCPUInfo reads /proc/cpuinfo: blocks of "key : value" lines, one
// block per logical processor.
func ParseCPUInfo(b []byte) CPUInfo {
	var c CPUInfo
	type core struct{ socket, id string }
	cores, sockets := map[core]bool{}, map[string]bool{}
	socket, coreID := "", ""
	flush := func() {
		if coreID != "" {
			cores[core{socket, coreID}] = true
		}
		if socket != "" {
			sockets[socket] = true
		}
		socket, coreID = "", ""
	}
	lines(b, func(line string) {
		k, v, ok := keyValue(line)
		if !ok {
			return
		}
		switch k {
		case "processor":
			flush()
			c.Processors++
		case "model name", "Model", "Hardware":
			if c.Model == "" {
				c.Model = v
			}
		case "cpu MHz":
			if c.MHz == 0 {
				c.MHz, _ = strconv.ParseFloat(v, 64)
			}
		case "cache size":
			if c.CacheSize == "" {
				c.CacheSize = v
			}
		case "physical id":
			socket = v
		case "core id":
			coreID = v
		}
	})
	flush()
	c.Cores, c.Sockets = len(cores), len(sockets)
	if c.Cores == 0 {
		c.Cores = c.Processors
	}
	if c.Sockets == 0 {
		c.Sockets = 1
	}
	return c
}

// ReadCPUInfo reads the host's processors.
func ReadCPUInfo() (CPUInfo, error) {
	b, err := readProc("cpuinfo")
	if err != nil {
		return CPUInfo{}, err
	}
	return ParseCPUInfo(b), nil
}
