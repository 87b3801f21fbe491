package hoststat

import (
	"time"

	"golang.org/x/sys/unix"
)

// System is what the kernel tells of the host as a whole: show sys
// hardware's platform block.
type System struct {
	Hostname, Kernel, Release, Machine string
	Uptime                             time.Duration
}

// ReadSystem reads the host's name, kernel and uptime.
func ReadSystem() (System, error) {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return System{}, err
	}
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil {
		return System{}, err
	}
	return System{Hostname: unix.ByteSliceToString(u.Nodename[:]), Kernel: unix.ByteSliceToString(u.Sysname[:]),
		Release: unix.ByteSliceToString(u.Release[:]), Machine: unix.ByteSliceToString(u.Machine[:]),
		Uptime: time.Duration(si.Uptime) * time.Second}, nil
}
