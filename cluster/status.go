package cluster

import (
	"encoding/json"
	"fmt"
)

// Sync status strings, as `show cm sync-status` and the prompt's
// (cfg-sync ...) print them.
const (
	StatusInSync              = "In Sync"
	StatusChangesPending      = "Changes Pending"
	StatusAwaitingInitialSync = "Awaiting Initial Sync"
	StatusDisconnected        = "Disconnected"
	StatusSyncFailure         = "Sync Failure"
	StatusNotAllDevicesSynced = "Not All Devices Synced"
)

// SyncStatus is what `show cm sync-status` prints for the group.
type SyncStatus struct {
	Status  string
	Color   string // green, yellow, blue or red, as BIG-IP colours it
	Summary string
	// Details has one line per device, then a recommended action when
	// there is one.
	Details []string
	// Applied is this device's generation, Head the group's newest.
	Applied, Head uint64
}

// SyncStatus reports the group's sync state from this device's view.
func (m *Member) SyncStatus() SyncStatus {
	m.mu.Lock()
	st := SyncStatus{Applied: m.applied, Head: m.head}
	applyErr := m.applyErr
	m.mu.Unlock()
	def := m.Group()

	if ok, err := m.c.Connected(); !ok {
		st.Status, st.Color = StatusDisconnected, "red"
		st.Summary = fmt.Sprintf("%s cannot reach the etcd cluster of device group %s: %v", m.me, m.group, err)
		st.Details = []string{fmt.Sprintf("%s: running generation %d, changes to the group are refused until the etcd cluster is reachable", m.me, st.Applied)}
		return st
	}
	alive := m.mr.under("alive/")
	states := m.mr.under("state/")
	var behindOnline, behindOffline []string
	for _, d := range def.Devices {
		var ds memberState
		if kv, ok := states[d]; ok {
			_ = json.Unmarshal(kv.Value, &ds)
		}
		if d == m.me {
			ds.Applied = st.Applied
		}
		_, online := alive[d]
		conn := "connected"
		if !online {
			conn = "disconnected"
		}
		line := fmt.Sprintf("%s: %s, generation %d", d, conn, ds.Applied)
		if ds.Error != "" {
			line += " (last sync failed: " + ds.Error + ")"
		}
		st.Details = append(st.Details, line)
		if d != m.me && ds.Applied < st.Head {
			if online {
				behindOnline = append(behindOnline, d)
			} else {
				behindOffline = append(behindOffline, d)
			}
		}
	}
	switch {
	case st.Head == 0:
		st.Status, st.Color = StatusAwaitingInitialSync, "blue"
		st.Summary = "The device group is awaiting the initial config sync"
		st.Details = append(st.Details, fmt.Sprintf("Recommended action: Synchronize one device to group %s (run cm config-sync to-group %s)", m.group, m.group))
	case applyErr != nil:
		st.Status, st.Color = StatusSyncFailure, "red"
		st.Summary = fmt.Sprintf("%s could not apply the configuration of device group %s: %v", m.me, m.group, applyErr)
		st.Details = append(st.Details, fmt.Sprintf("Recommended action: correct the configuration and synchronize a device to group %s", m.group))
	case st.Applied < st.Head:
		st.Status, st.Color = StatusChangesPending, "yellow"
		st.Summary = fmt.Sprintf("There are changes in device group %s (generation %d) not yet applied on %s (generation %d)", m.group, st.Head, m.me, st.Applied)
		st.Details = append(st.Details, fmt.Sprintf("Recommended action: Synchronize group %s to %s (run cm config-sync from-group %s)", m.group, m.me, m.group))
	case len(behindOnline) > 0:
		st.Status, st.Color = StatusChangesPending, "yellow"
		st.Summary = fmt.Sprintf("There are changes in device group %s (generation %d) not yet applied on %v", m.group, st.Head, behindOnline)
		st.Details = append(st.Details, fmt.Sprintf("Recommended action: run cm config-sync from-group %s on %v", m.group, behindOnline))
	case len(behindOffline) > 0:
		st.Status, st.Color = StatusNotAllDevicesSynced, "yellow"
		st.Summary = fmt.Sprintf("%v did not receive the last sync (generation %d): disconnected", behindOffline, st.Head)
	default:
		st.Status, st.Color = StatusInSync, "green"
		st.Summary = "All devices in the device group are in sync"
	}
	return st
}

// DeviceStatus is one device of the group as this device sees it, for
// show cm device: whether it holds its presence key, the generation it
// applied, its network failover addresses and the traffic groups it is
// active for.
type DeviceStatus struct {
	Name    string
	Online  bool
	Applied uint64
	Unicast []string
	Active  []string
}

// Devices reports the group's devices in the group's order.
func (m *Member) Devices() []DeviceStatus {
	m.mu.Lock()
	applied := m.applied
	m.mu.Unlock()
	alive := m.mr.under("alive/")
	states := m.mr.under("state/")
	owners := map[string][]string{}
	for _, tg := range m.FailoverStatus() {
		if tg.Owner != "" {
			owners[tg.Owner] = append(owners[tg.Owner], tg.Name)
		}
	}
	var out []DeviceStatus
	for _, d := range m.Group().Devices {
		var ds memberState
		if kv, ok := states[d]; ok {
			_ = json.Unmarshal(kv.Value, &ds)
		}
		if d == m.me {
			ds.Applied = applied
		}
		_, online := alive[d]
		out = append(out, DeviceStatus{Name: d, Online: online, Applied: ds.Applied, Unicast: ds.Unicast, Active: owners[d]})
	}
	return out
}
