package rules

import (
	"encoding/binary"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/openltm/openltm/rules/tcl"
)

// Platform is what a rule reads in the static::tcl_platform array, which
// BIG-IP fills before RULE_INIT: rules log $static::tcl_platform(machine)
// to say which device wrote a line, skip work on a peer, or put
// tmmVersion in a User-Agent.
type Platform struct {
	// Machine is the device's host name (sys global-settings hostname).
	Machine string
	// TMMVersion is the software version the device reports (BIG-IP's
	// TMOS version, such as 15.1.0).
	TMMVersion string
}

// platformKeys are the elements of static::tcl_platform that do not
// depend on the configuration: Tcl's own, for the machine openltm runs
// on.
func platformKeys() map[string]string {
	order := "littleEndian"
	var b [2]byte
	binary.NativeEndian.PutUint16(b[:], 1)
	if b[0] == 0 {
		order = "bigEndian"
	}
	osName := runtime.GOOS
	if osName != "" {
		osName = strings.ToUpper(osName[:1]) + osName[1:]
	}
	osVersion := ""
	if v, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		osVersion = strings.TrimSpace(string(v))
	}
	return map[string]string{
		"byteOrder":   order,
		"os":          osName,
		"osVersion":   osVersion,
		"platform":    "unix",
		"pointerSize": strconv.Itoa(strconv.IntSize / 8),
		"wordSize":    strconv.Itoa(strconv.IntSize / 8),
	}
}

// seedPlatform fills static::tcl_platform with the host's values: the
// system host name as machine until SetPlatform names the device, and an
// empty tmmVersion until it is told one.
func seedPlatform(s *Statics) {
	m := *s.m.Load()
	for k, v := range platformKeys() {
		m["static::tcl_platform("+k+")"] = tcl.Str(v)
	}
	host, _ := os.Hostname()
	m["static::tcl_platform(machine)"] = tcl.Str(host)
	m["static::tcl_platform(tmmVersion)"] = tcl.Str("")
}

// SetPlatform sets static::tcl_platform(machine) and
// static::tcl_platform(tmmVersion) (empty fields are left as they are).
// The daemon calls it with the version before RULE_INIT runs (machine
// stays the host's name); a rule may still overwrite them, as on BIG-IP.
func (s *Statics) SetPlatform(p Platform) {
	if p.Machine != "" {
		s.Set("static::tcl_platform(machine)", tcl.Str(p.Machine))
	}
	if p.TMMVersion != "" {
		s.Set("static::tcl_platform(tmmVersion)", tcl.Str(p.TMMVersion))
	}
}
