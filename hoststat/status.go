package hoststat

import (
	"fmt"
	"strconv"
	"strings"
)

// Process is what /proc/self/status tells of ltmd itself, in bytes: the
// memory it holds (openltm's counterpart of TMM memory) and its threads.
type Process struct {
	Resident, PeakResident, Virtual uint64
	Threads                         int
}

// ParseStatus reads a /proc/PID/status file.
func ParseStatus(b []byte) (Process, error) {
	var p Process
	var err error
	found := false
	lines(b, func(line string) {
		k, v, ok := keyValue(line)
		if !ok || err != nil {
			return
		}
		var dst *uint64
		switch k {
		case "VmRSS":
			dst, found = &p.Resident, true
		case "VmHWM":
			dst = &p.PeakResident
		case "VmSize":
			dst = &p.Virtual
		case "Threads":
			p.Threads, err = strconv.Atoi(v)
			return
		default:
			return
		}
		num, _, _ := strings.Cut(v, " ")
		n, perr := parseUint(num)
		if perr != nil {
			err = fmt.Errorf("status: %s: %w", k, perr)
			return
		}
		*dst = n * 1024 // the kernel prints these in kB
	})
	if err != nil {
		return Process{}, err
	}
	if !found {
		return Process{}, fmt.Errorf("status: no VmRSS")
	}
	return p, nil
}

// ReadSelf reads ltmd's own status now.
func ReadSelf() (Process, error) {
	b, err := readProc("self/status")
	if err != nil {
		return Process{}, err
	}
	return ParseStatus(b)
}
