package monitor

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"slices"
	"strings"
	"unicode/utf8"
)

// DiameterCheck is what the diameter monitor's Capabilities-Exchange-
// Request says of the monitor: its identity, its vendor and product, and
// the applications it asks the peer for. A peer that accepts
// connections may still refuse every peer or serve none of the
// applications asked for; only a CEA with DIAMETER_SUCCESS proves it
// serves.
type DiameterCheck struct {
	// OriginHost and OriginRealm name the monitor; "" is the local host
	// name and its domain (BIG-IP sends its own FQDN) [M].
	OriginHost, OriginRealm string
	// HostIP is the Host-IP-Address; invalid is the connection's local
	// address [M].
	HostIP netip.Addr
	// VendorID and ProductName are sent as set (BIG-IP's defaults: 3375
	// and "F5 BIGIP Diameter Health Monitoring").
	VendorID    uint32
	ProductName string
	// AuthAppIDs and AcctAppIDs are Auth- and Acct-Application-Id AVPs;
	// none, none is sent.
	AuthAppIDs, AcctAppIDs []uint32
	// VSVendorID (0: none) with VSAuthAppIDs and VSAcctAppIDs make one
	// Vendor-Specific-Application-Id AVP each.
	VSVendorID                 uint32
	VSAuthAppIDs, VSAcctAppIDs []uint32
}

// F5's defaults for the diameter monitor, used when a spec has none.
const (
	DiameterVendorID    = 3375
	DiameterProductName = "F5 BIGIP Diameter Health Monitoring"
)

func (c *DiameterCheck) equal(o *DiameterCheck) bool {
	if c == nil || o == nil {
		return c == o
	}
	return c.OriginHost == o.OriginHost && c.OriginRealm == o.OriginRealm && c.HostIP == o.HostIP &&
		c.VendorID == o.VendorID && c.ProductName == o.ProductName && c.VSVendorID == o.VSVendorID &&
		slices.Equal(c.AuthAppIDs, o.AuthAppIDs) && slices.Equal(c.AcctAppIDs, o.AcctAppIDs) &&
		slices.Equal(c.VSAuthAppIDs, o.VSAuthAppIDs) && slices.Equal(c.VSAcctAppIDs, o.VSAcctAppIDs)
}

func (c *DiameterCheck) check() error {
	if c == nil {
		return nil
	}
	for _, f := range [...]struct{ name, v string }{{"origin-host", c.OriginHost}, {"origin-realm", c.OriginRealm}} {
		if strings.ContainsFunc(f.v, func(r rune) bool { return r <= ' ' || r >= 0x7f }) {
			return fmt.Errorf("%s %q is not a host name (a Diameter identity is an FQDN)", f.name, f.v)
		}
	}
	if !utf8.ValidString(c.ProductName) {
		return errors.New("product-name is not UTF-8")
	}
	vs := len(c.VSAuthAppIDs) + len(c.VSAcctAppIDs)
	if vs > 0 && c.VSVendorID == 0 {
		return errors.New("vendor-specific-auth-application-id and vendor-specific-acct-application-id need vendor-specific-vendor-id")
	}
	if vs == 0 && c.VSVendorID != 0 {
		return errors.New("vendor-specific-vendor-id needs vendor-specific-auth-application-id or vendor-specific-acct-application-id")
	}
	return nil
}

// identity is the Origin-Host and Origin-Realm sent: the settings, else
// the local host name and its domain ("f5", BIG-IP's documented default
// realm, when the name has none) [M].
func (c *DiameterCheck) identity() (host, realm string) {
	host, realm = c.OriginHost, c.OriginRealm
	if host == "" {
		host, _ = os.Hostname()
		if host == "" {
			host = "localhost"
		}
	}
	if realm == "" {
		realm = "f5"
		if _, dom, ok := strings.Cut(host, "."); ok && dom != "" {
			realm = dom
		}
	}
	return host, realm
}

// diameterCER is the Capabilities-Exchange-Request from local.
func diameterCER(c *DiameterCheck, local netip.Addr, hopByHop, endToEnd uint32) []byte {
	host, realm := c.identity()
	ip := c.HostIP
	if !ip.IsValid() {
		ip = local
	}
	var b []byte
	b = appendAVP(b, avpOriginHost, avpMandatory, 0, []byte(host))
	b = appendAVP(b, avpOriginRealm, avpMandatory, 0, []byte(realm))
	b = appendAVP(b, avpHostIPAddress, avpMandatory, 0, diamAddress(ip))
	b = appendAVP(b, avpVendorID, avpMandatory, 0, u32(c.VendorID))
	b = appendAVP(b, avpProductName, 0, 0, []byte(c.ProductName))
	for _, id := range c.AuthAppIDs {
		b = appendAVP(b, avpAuthAppID, avpMandatory, 0, u32(id))
	}
	for _, id := range c.AcctAppIDs {
		b = appendAVP(b, avpAcctAppID, avpMandatory, 0, u32(id))
	}
	for _, app := range [...]struct {
		code uint32
		ids  []uint32
	}{{avpAuthAppID, c.VSAuthAppIDs}, {avpAcctAppID, c.VSAcctAppIDs}} {
		for _, id := range app.ids {
			g := appendAVP(nil, avpVendorID, avpMandatory, 0, u32(c.VSVendorID))
			g = appendAVP(g, app.code, avpMandatory, 0, u32(id))
			b = appendAVP(b, avpVendorSpecificApp, avpMandatory, 0, g)
		}
	}
	return diamMessage(diamRequest, diamCER, hopByHop, endToEnd, b)
}

// probeDiameter sends a CER over TCP and is up on a CEA answering it with
// Result-Code 2001 (DIAMETER_SUCCESS), as BIG-IP's diameter monitor
// does (mode tcp and mr-tcp alike). Requests the peer sends first (a
// watchdog) are read past, up to a few. On success the monitor says
// goodbye with a Disconnect-Peer-Request whose answer it does not wait
// for [M].
func probeDiameter(ctx context.Context, spec *Spec, target netip.AddrPort) (Outcome, error) {
	c := spec.Diameter
	if c == nil {
		c = &DiameterCheck{VendorID: DiameterVendorID, ProductName: DiameterProductName}
	}
	if err := c.check(); err != nil {
		return Outcome{}, err
	}
	conn, err := dial(ctx, target)
	if err != nil {
		return Outcome{}, err
	}
	defer conn.Close()
	defer bound(ctx, conn)()
	var ids [8]byte
	rand.Read(ids[:])
	hbh, e2e := binary.BigEndian.Uint32(ids[:]), binary.BigEndian.Uint32(ids[4:])
	local := conn.LocalAddr().(*net.TCPAddr).AddrPort().Addr()
	if _, err := conn.Write(diameterCER(c, local, hbh, e2e)); err != nil {
		return Outcome{}, fmt.Errorf("Unable to send; %v", unwrapSyscall(err))
	}
	r := bufio.NewReader(&capped{r: conn, left: maxReply})
	for range 4 {
		m, err := readDiameter(r)
		if err != nil {
			return Outcome{}, streamFailure(ctx, err, "Capabilities-Exchange-Answer")
		}
		if m.flags&diamRequest != 0 {
			continue
		}
		if m.code != diamCER || m.hopByHop != hbh {
			return Outcome{}, fmt.Errorf("Unexpected response: Diameter command %d, not the Capabilities-Exchange-Answer", m.code)
		}
		rc, ok := m.avps[avpResultCode]
		if !ok || len(rc) != 4 {
			return Outcome{}, errors.New("Capabilities-Exchange-Answer without a Result-Code")
		}
		if code := binary.BigEndian.Uint32(rc); code != diamSuccess {
			why := diamResults[code]
			if msg := m.avps[avpErrorMessage]; len(msg) > 0 {
				why = strings.TrimSpace(why + " " + string(msg))
			}
			return Outcome{}, fmt.Errorf("Capabilities-Exchange-Answer Result-Code %d (%s)", code, why)
		}
		host, realm := c.identity()
		var b []byte
		b = appendAVP(b, avpOriginHost, avpMandatory, 0, []byte(host))
		b = appendAVP(b, avpOriginRealm, avpMandatory, 0, []byte(realm))
		b = appendAVP(b, avpDisconnectCause, avpMandatory, 0, u32(2)) // DO_NOT_WANT_TO_TALK_TO_YOU
		conn.Write(diamMessage(diamRequest, diamDPR, hbh+1, e2e+1, b))
		return Outcome{Up: true}, nil
	}
	return Outcome{}, errors.New("Unexpected response: Diameter requests and no Capabilities-Exchange-Answer")
}
