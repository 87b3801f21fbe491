package render

import (
	"bytes"
	"encoding/hex"
	"io"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/lsn"
	"github.com/openltm/openltm/dataplane/mrf"
)

// LSNPCPMappings prints an lsn pool's PCP mappings one a line, after
// its `Ltm::LSN Pool` block in `show ltm lsn-pool NAME detail`: the
// opcode that made each (MAP: inbound opened; PEER: outbound only), the
// protocol, the subscriber's internal address and port, the external
// one the pool gave it, the seconds of lifetime left at now, the PCP
// client that owns it and its mapping nonce, so that an operator can
// tell which subscriber holds which external port [M: BIG-IP documents
// no listing of PCP mappings; the layout is openltm's, in the style of
// the member tables].
func LSNPCPMappings(w io.Writer, ms []lsn.PCPMapping, now time.Time, o Options) error {
	var buf bytes.Buffer
	buf.WriteString("PCP Mappings\n")
	t := plainTable(&buf)
	t.Header("Opcode", "Protocol", "Internal", "External", "Lifetime Left", "Client", "Nonce")
	for _, m := range ms {
		op, proto := "MAP", "tcp"
		if m.Peer {
			op = "PEER"
		}
		if m.UDP {
			proto = "udp"
		}
		left := max(m.Expires.Sub(now), 0) / time.Second
		if err := t.Append(op, proto, endpoint(m.Internal), endpoint(m.External), strconv.FormatInt(int64(left), 10),
			addrOrNone(m.Owner), hex.EncodeToString(m.Nonce[:])); err != nil {
			return err
		}
	}
	if len(ms) > 0 {
		if err := t.Render(); err != nil {
			return err
		}
	}
	return writeRows(w, &buf, len(ms))
}

// MRFDynamicRoutes prints the dynamic routes a virtual's message router
// learnt from its clients, in `show ltm message-routing diameter profile
// router NAME detail`: each client's Origin-Host and Origin-Realm, the
// address it connected from, the seconds since it last sent anything
// and those its route has left (the session profile's
// dynamic-route-timeout less that; "-" with none: the route lives as
// long as its connection) [M: BIG-IP documents the dynamic routes, not
// a show of them; the layout is openltm's].
func MRFDynamicRoutes(w io.Writer, virtual string, rs []mrf.DynamicRoute, o Options) error {
	var buf bytes.Buffer
	buf.WriteString("Dynamic Routes: " + o.rel(virtual) + "\n")
	t := plainTable(&buf)
	t.Header("Origin-Host", "Origin-Realm", "Client", "Idle", "Time Left")
	for _, r := range rs {
		left := "-"
		if r.Left >= 0 {
			left = strconv.FormatInt(int64(r.Left/time.Second), 10)
		}
		if err := t.Append(r.Host, r.Realm, addrOrNone(r.Client), strconv.FormatInt(int64(r.Idle/time.Second), 10), left); err != nil {
			return err
		}
	}
	if len(rs) > 0 {
		if err := t.Render(); err != nil {
			return err
		}
	}
	return writeRows(w, &buf, len(rs))
}

// writeRows writes buf without the table's trailing blanks, and the
// count of rows.
func writeRows(w io.Writer, buf *bytes.Buffer, n int) error {
	var out strings.Builder
	for _, line := range strings.Split(strings.TrimRight(buf.String(), "\n"), "\n") {
		out.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	out.WriteString("Total records returned: " + strconv.Itoa(n) + "\n")
	_, err := io.WriteString(w, out.String())
	return err
}

func endpoint(a netip.AddrPort) string {
	if !a.IsValid() {
		return "-"
	}
	return dataplane.JoinPort(a.Addr().String(), a.Port())
}

func addrOrNone(a netip.Addr) string {
	if !a.IsValid() {
		return "-"
	}
	return a.String()
}
