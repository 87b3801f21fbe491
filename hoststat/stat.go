package hoststat

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// CPUTimes are one processor's (or all processors') times since boot in
// clock ticks, by what the processor did: the ground of every usage
// figure, which is the share of busy time between two readings.
type CPUTimes struct {
	User, Nice, System, Idle, IOWait, IRQ, SoftIRQ, Steal uint64
}

// All is every tick counted.
func (t CPUTimes) All() uint64 {
	return t.User + t.Nice + t.System + t.Idle + t.IOWait + t.IRQ + t.SoftIRQ + t.Steal
}

// Busy is the ticks not spent idle (waiting for I/O counts as idle, as
// top(1) and BIG-IP's usage ratio count it).
func (t CPUTimes) Busy() uint64 { return sub(t.All(), t.Idle+t.IOWait) }

// Usage is the busy share, in percent, of the time between an earlier
// reading prev and t; 0 when no tick passed (or the counters went back,
// as they do when a processor goes offline and back).
func Usage(prev, t CPUTimes) float64 {
	all, before := t.All(), prev.All()
	if all <= before {
		return 0
	}
	busy := float64(sub(t.Busy(), prev.Busy()))
	u := 100 * busy / float64(all-before)
	if u > 100 {
		u = 100
	}
	return u
}

// Processor is one processor's line of /proc/stat.
type Processor struct {
	ID    int // N of cpuN
	Times CPUTimes
}

// Stat is what show sys cpu needs of /proc/stat: the times of all
// processors together and of each, and when the host booted.
type Stat struct {
	Total      CPUTimes
	Processors []Processor
	Boot       time.Time // zero when the file has no btime
}

// ParseStat reads /proc/stat.
func ParseStat(b []byte) (Stat, error) {
	var s Stat
	var err error
	total := false
	lines(b, func(line string) {
		f := strings.Fields(line)
		if err != nil || len(f) == 0 {
			return
		}
		switch {
		case f[0] == "cpu":
			s.Total, err = cpuTimes(f[1:])
			total = err == nil
		case strings.HasPrefix(f[0], "cpu"):
			id, perr := strconv.Atoi(f[0][3:])
			if perr != nil {
				err = fmt.Errorf("stat: %q is no processor", f[0])
				return
			}
			var t CPUTimes
			if t, err = cpuTimes(f[1:]); err == nil {
				s.Processors = append(s.Processors, Processor{ID: id, Times: t})
			}
		case f[0] == "btime" && len(f) == 2:
			n, perr := strconv.ParseInt(f[1], 10, 64)
			if perr != nil {
				err = fmt.Errorf("stat: btime: %w", perr)
				return
			}
			s.Boot = time.Unix(n, 0)
		}
	})
	if err != nil {
		return Stat{}, err
	}
	if !total {
		return Stat{}, fmt.Errorf("stat: no cpu line")
	}
	return s, nil
}

// cpuTimes reads the columns of a cpu line; kernels before 2.6.11 have
// fewer than eight, later ones add guest times (already in user and nice).
func cpuTimes(f []string) (CPUTimes, error) {
	if len(f) < 4 {
		return CPUTimes{}, fmt.Errorf("stat: a cpu line has %d columns", len(f))
	}
	var v [8]uint64
	for i := 0; i < len(v) && i < len(f); i++ {
		n, err := parseUint(f[i])
		if err != nil {
			return CPUTimes{}, fmt.Errorf("stat: %w", err)
		}
		v[i] = n
	}
	return CPUTimes{User: v[0], Nice: v[1], System: v[2], Idle: v[3], IOWait: v[4], IRQ: v[5], SoftIRQ: v[6], Steal: v[7]}, nil
}

// ReadStat reads the host's processor times now.
func ReadStat() (Stat, error) {
	b, err := readProc("stat")
	if err != nil {
		return Stat{}, err
	}
	return ParseStat(b)
}
