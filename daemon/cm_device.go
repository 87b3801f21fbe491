package daemon

import (
	"context"
	"fmt"
	"io"
	"net"
	"runtime/debug"
	"strings"

	"github.com/openltm/openltm/objects"
)

var (
	cmDeviceConfigsync = cmDevice.MustProp("configsync-ip")
	cmDeviceMgmt       = cmDevice.MustProp("management-ip")
)

// showCMDevice is show cm device: this device (its name, hostname,
// management, config sync and failover addresses, version and failover
// state) and, in a device group, each other device as the group's etcd
// keys describe it (presence, failover addresses, the traffic groups it
// is active for). [M: BIG-IP's field names and layout; a peer's hostname
// and management address are its own settings, which a config sync does
// not carry, so they print as "-".]
func showCMDevice(e *Engine) RuntimeCommand {
	return RuntimeCommand{"show", "cm device", func(_ context.Context, _ *Session, names, words []string, w io.Writer) error {
		if len(words) > 0 {
			return synErr(nil, nil, "show cm device takes device names only (%q)", words[0])
		}
		self := e.selfName()
		var selfObj *objects.Object
		for _, o := range e.Config().Of(cmDevice) {
			if cmDeviceSelf.Str(o) == "true" {
				selfObj = o
			}
		}
		mgmt, sync := "-", "none"
		if selfObj != nil {
			if v := noneEmpty(cmDeviceMgmt.Str(selfObj)); v != "" {
				mgmt = v
			}
			if v := noneEmpty(cmDeviceConfigsync.Str(selfObj)); v != "" {
				sync = v
			}
		}
		h := e.cluster.Load()
		if h != nil && mgmt == "-" && h.opts.ManagementAddress != "" {
			if host, _, err := net.SplitHostPort(h.opts.ManagementAddress); err == nil {
				mgmt = host
			}
		}
		var unicast []string
		if addrs, err := e.unicastAddrs(); err == nil {
			for _, a := range addrs {
				unicast = append(unicast, a.String())
			}
		}
		bi, _ := debug.ReadBuildInfo()
		version := moduleVersion(bi)
		state := "active"
		type row struct{ name, host, mgmt, sync, unicast, version, state, active string }
		var rows []row
		if h != nil {
			h.mu.Lock()
			m := h.member
			h.mu.Unlock()
			if m != nil {
				for _, d := range m.Devices() {
					if d.Name == self {
						if active, _ := m.DeviceState(); !active {
							state = "standby"
						}
						continue
					}
					st := "offline"
					switch {
					case d.Online && len(d.Active) > 0:
						st = "active"
					case d.Online:
						st = "standby"
					}
					rows = append(rows, row{d.Name, "-", "-", "-", orNone(strings.Join(d.Unicast, " ")), "-", st, orNone(strings.Join(d.Active, " "))})
				}
			}
		}
		rows = append([]row{{self, e.Hostname(), mgmt, sync, orNone(strings.Join(unicast, " ")), version, state, "-"}}, rows...)
		if len(names) > 0 {
			found := false
			for _, r := range rows {
				if nameMatch(names, r.name) || nameMatch(names, "/Common/"+r.name) {
					found = true
				}
			}
			if !found {
				return objects.NotFound(cmDevice, names[0])
			}
		}
		bar := strings.Repeat("-", 64)
		for _, r := range rows {
			if !nameMatch(names, r.name) && !nameMatch(names, "/Common/"+r.name) {
				continue
			}
			fmt.Fprintf(w, "%s\nCM::Device: /Common/%s\n%s\n", bar, r.name, bar)
			for _, f := range [][2]string{{"Hostname", r.host}, {"Management IP", r.mgmt}, {"Configsync IP", r.sync},
				{"Failover Unicast Address(es)", r.unicast}, {"Version", r.version}, {"Failover State", r.state}} {
				fmt.Fprintf(w, "  %-30s %s\n", f[0], f[1])
			}
			if r.active != "-" {
				fmt.Fprintf(w, "  %-30s %s\n", "Active For", r.active)
			}
			fmt.Fprintln(w)
		}
		return nil
	}}
}
