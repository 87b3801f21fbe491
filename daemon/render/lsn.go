package render

import (
	"io"
	"strconv"

	"github.com/openltm/openltm/dataplane/lsn"
)

// LSNPool prints one `Ltm::LSN Pool` block: the pool's mode and
// addresses, its translations (asked for, active, made, refused), the
// backup members' share, the ports and port blocks held, the inbound
// connections (and those hairpinned), the PCP server's requests and
// mappings, and the subscribers [M: the layout and field names are
// openltm's, in the style of the other shows].
func LSNPool(w io.Writer, name string, p *lsn.Pool, o Options) error {
	var st *lsn.Stats
	var sn lsn.Snapshot
	if p != nil {
		st, sn = &p.Stats, p.Snapshot()
	} else {
		st = &lsn.Stats{}
	}
	n := func(c interface{ Load() int64 }) string { return o.num(uint64(max(c.Load(), 0))) }
	mode := string(sn.Mode)
	if mode == "" {
		mode = "-"
	}
	return statBlock(w, "Ltm::LSN Pool: "+o.rel(name), [][2]string{
		{"Mode", mode},
		{"Translation Addresses", o.num(sn.Addresses)},
		{"  In Use", strconv.Itoa(sn.AddressesUsed)},
		{"Translation Ports In Use", n(&st.PortsInUse)},
		{"Translations", ""},
		{"  Requests", n(&st.Requests)},
		{"  Active", n(&st.Active)},
		{"  Total", n(&st.Total)},
		{"  Failures", n(&st.Failures)},
		{"  Client Limit Rejects", n(&st.ClientLimit)},
		{"Backup Translations", ""},
		{"  Active", n(&st.BackupActive)},
		{"  Total", n(&st.BackupTotal)},
		{"Persistence", ""},
		{"  Mappings", strconv.Itoa(sn.Persistence)},
		{"  Hits", n(&st.PersistHits)},
		{"Port Blocks", ""},
		{"  Active", n(&st.BlocksActive)},
		{"  Allocated", n(&st.BlocksTotal)},
		{"  Failures", n(&st.BlockFailures)},
		{"  Zombie", n(&st.BlocksZombie)},
		{"  Zombie Connections Cut", n(&st.ZombiesCut)},
		{"Inbound Connections", ""},
		{"  Active", n(&st.InboundActive)},
		{"  Total", n(&st.InboundTotal)},
		{"  Refused", n(&st.InboundRefused)},
		{"  Hairpinned", n(&st.Hairpins)},
		{"PCP", ""},
		{"  Requests Answered", n(&st.PCPRequests)},
		{"  Errors Returned", n(&st.PCPFailures)},
		{"  MAP Mappings", n(&st.PCPMaps)},
		{"  PEER Mappings", n(&st.PCPPeers)},
		{"  Rejected by iRule", n(&st.PCPRuleRejects)},
		{"  Dropped by iRule", n(&st.PCPRuleDrops)},
		{"Subscribers", ""},
		{"  Active", strconv.Itoa(sn.Subscribers)},
		{"  Total", n(&st.SubscribersTotal)},
	})
}
