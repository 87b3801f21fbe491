package daemon

import (
	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/synhdr"
	"github.com/openltm/openltm/objects"
)

// synSides adds what the virtual reads of its clients' SYNs: the client
// side's tcp-options (the options TCP::option get may read) and the
// server side's proxy-mss. proxy-mss is acted on only when a profile or
// one of its parents sets it: BIG-IP's default is enabled, and acting
// on the default would make every virtual's listener keep SYNs and each
// member connect copy its settings, where the route's MSS, which openltm
// kept before, serves loopback and LAN members alike [M].
func (t *translator) synSides(client, server *objects.Object, v *dataplane.Virtual) {
	if client != nil {
		if p, err := synhdr.ParsePicks(t.eff(client, "tcp-options")); err == nil && !p.Empty() {
			if v.ClientTCP == nil {
				v.ClientTCP = &dataplane.TCPSide{}
			}
			v.ClientTCP.TCPOptions = p
		}
	}
	if server != nil && t.explicit(server, "proxy-mss") && t.eff(server, "proxy-mss") == "enabled" {
		if v.ServerTCP == nil {
			v.ServerTCP = &dataplane.TCPSide{}
		}
		v.ServerTCP.ProxyMSS = true
	}
}
