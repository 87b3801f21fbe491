package shell

import (
	"strings"

	"github.com/openltm/openltm/control"
)

// PromptString renders the tmsh prompt for a session state, e.g.
// root@(openltm)(cfg-sync Standalone)(Active)(/Common)(tmos.ltm)# . A
// device in no device group is "cfg-sync Standalone" and "Active". An open
// cli transaction adds "(cli transaction)" before the "#", so nobody forgets
// that their changes are only queued.
func PromptString(p control.PromptState) string {
	user := p.User
	if user == "" {
		user = "root"
	}
	host := p.Host
	if host == "" {
		host = "openltm"
	}
	folder := p.Folder
	if folder == "" {
		folder = "/Common"
	}
	module := "tmos"
	if p.Module != "" {
		module += "." + strings.TrimPrefix(p.Module, ".")
	}
	var b strings.Builder
	b.WriteString(user)
	b.WriteString("@(")
	b.WriteString(host)
	sync, failover := p.SyncStatus, p.Failover
	if sync == "" {
		sync = "Standalone"
	}
	if failover == "" {
		failover = "Active"
	}
	b.WriteString(")(cfg-sync ")
	b.WriteString(sync)
	b.WriteString(")(")
	b.WriteString(failover)
	b.WriteString(")(")
	b.WriteString(folder)
	b.WriteString(")(")
	b.WriteString(module)
	b.WriteString(")")
	if p.InTransaction {
		b.WriteString("(cli transaction)")
	}
	b.WriteString("# ")
	return b.String()
}

// continuationPrompt is shown while a statement is still open (a brace
// block being typed over several lines).
const continuationPrompt = "> "
