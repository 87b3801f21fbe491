// Package cluster runs BIG-IP style device groups on etcd: the group's
// configuration as an ordered log of generations that every device follows,
// device trust, sync status, and the election of each traffic group's
// active device by lease. It never touches packets: it tells the daemon
// what to load and when to bind or release floating addresses.
//
// # What ltmd calls
//
// At start, when the device belongs to a group (settings below):
//
//	id, _ := trust.ReadFiles(trust.Files{...})          // device.crt, device.key, ca.crt
//	conn, err := cluster.Connect(ctx, cluster.Config{Device: "bigip1",
//		Endpoints: endpoints, Identity: id, DomainCA: id.CAPEM()})
//	m, err := cluster.Join(ctx, conn, "dg1", cluster.Options{
//		Applied:       lastAppliedGroupGeneration, // kept in the local store
//		Apply:         loadGenerationHitlessly,     // parse, validate, swap
//		TrafficGroups: trafficGroupsFromConfig,     // cm traffic-group objects
//		OnFailover:    bindOrReleaseFloatingAddresses,
//	})
//
// Commands map to calls:
//
//	commit of a change in tmsh            m.Commit(ctx, base, gen) → ConflictError: reload and retry
//	run cm config-sync to-group dg1       m.SyncToGroup(ctx, gen)
//	run cm config-sync from-group dg1     m.SyncFromGroup(ctx)
//	show cm sync-status, prompt           m.SyncStatus() (Status, Color, Summary, Details)
//	show cm failover-status, prompt       m.FailoverStatus(), m.FailoverState()
//	run sys failover standby [traffic-group tg]   m.GoStandby(ctx, tg)
//	create / modify / delete cm device-group      conn.CreateGroup / ModifyGroup / DeleteGroup
//	modify cm trust-domain Root ca-devices add    conn.TrustDevice(ctx, domain, csr) on the CA holder
//	modify cm trust-domain Root ca-devices delete conn.RemoveTrusted(ctx, name)
//	change of cm traffic-group objects    m.SetTrafficGroups(tgs)
//	stop of ltmd                          m.Close() (hands traffic groups over at once), conn.Close()
//
// The commit path: a change is made against group generation base (the
// generation the device applied); the daemon validates it locally, calls
// m.Commit, and only on success records it in its local store with the
// returned group generation. Device-local objects (non-floating self IPs,
// the device's own cm device settings, hostname) are not part of the group
// text; the daemon keeps them out of Generation.Config, as BIG-IP keeps them
// out of config sync.
//
// # Settings
//
// ltmd takes the etcd cluster from flags (they are needed before any
// configuration is loaded): --cluster-endpoints (comma-separated client
// URLs; https ones are reached with the device's certificate),
// --cluster-dir (device.crt, device.key, ca.crt and, on the devices that
// add others to the trust domain, ca.key; default the state directory's
// "cluster"), --management-address and --admin-credentials (the trust
// exchange peers run against this device), --failover-time (the lease
// TTL). The device group, its members, type and auto-sync, and the
// traffic groups are configuration objects (cm device-group, cm
// traffic-group) like BIG-IP's.
//
// # Keys in etcd
//
//	/openltm/trust/devices/NAME           trusted device and its certificate fingerprint
//	/openltm/groups/G/head                newest generation number
//	/openltm/groups/G/gen/%020d           a generation's record (who, when, commands, digest)
//	/openltm/groups/G/blob/%020d/NONCE/N  its configuration text, in chunks of at most 1 MiB
//	/openltm/groups/G/m/def               the device group's definition
//	/openltm/groups/G/m/alive/NAME        presence, held by the device's lease
//	/openltm/groups/G/m/state/NAME        the generation the device applied, its last sync error, its unicast addresses
//	/openltm/groups/G/m/tg/TG/owner       the active device of a traffic group, held by its lease
//	/openltm/groups/G/m/tg/TG/standby/NAME  "run sys failover standby" in force
//	/openltm/groups/G/m/tg/TG/score/NAME    the device's HA score (ha-group), held by its lease
//
// # Failover
//
// Each device holds one lease (2 s by default) renewed eight times per TTL.
// Its presence key and any traffic group it owns are tied to that lease, so
// a device that dies or loses etcd loses them together when etcd expires the
// lease. The online devices then rank themselves for each traffic group by
// ha-order (devices not listed follow by name; a device told to go standby
// comes last) and the first claims ownership with a transaction that only
// succeeds when no one owns it. The device's own side: it considers itself
// active only while its lease is surely held, that is until 85% of the TTL
// after it sent its last successful renewal, so a device cut off from etcd
// stops serving before etcd frees its traffic groups for another device.
// A traffic group with an HA group (TrafficGroup.HAScore) ranks the
// devices by the HA score each publishes (Member.SetScores) before
// ha-order, and its active device gives it up once another scores more
// than its own score plus the active bonus (hascore.go).
// etcd's concurrency.Election is not used because it elects the oldest
// campaigner, which cannot express ha-order or auto-failback.
//
// With network-failover enabled and Options.Heartbeat set, the devices
// also send each other UDP heartbeats (package heartbeat) and, while etcd
// is unreachable for all of them, decide failover from those as BIG-IP's
// network failover does: the active device keeps its traffic groups, a
// standby takes over when the active falls silent, and etcd's election
// wins again when etcd answers (netfailover.go).
package cluster
