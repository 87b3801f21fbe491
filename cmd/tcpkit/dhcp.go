package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/dhcpv4/server4"
	"github.com/insomniacslk/dhcp/dhcpv6"
	"github.com/insomniacslk/dhcp/dhcpv6/server6"
)

// dhcpServerMain is `tcpkit dhcp-server`: a DHCP member (insomniacslk's
// server4 or, with -v6, server6). A DHCPv4 member offers 10.9.0.N (N
// the last byte of its address) with itself as server identifier,
// echoing option 82 as RFC 3046 servers do; a DHCPv6 member answers a
// Relay-Forward's SOLICIT with a Relay-Reply carrying an Advertise. Each
// answer goes to the socket the request came from. It logs what each
// request carried.
func dhcpServerMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("dhcp-server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "", "address:port to listen on (UDP)")
	label := fs.String("label", "D1", "the member's name in its log")
	v6 := fs.Bool("v6", false, "DHCPv6 (Relay-Forward in, Relay-Reply out)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *listen == "" {
		return errors.New("dhcp-server: -listen is required")
	}
	pc, err := net.ListenPacket("udp", *listen)
	if err != nil {
		return err
	}
	host := net.ParseIP(strings.Split(pc.LocalAddr().String(), ":")[0]).To4()
	var mu sync.Mutex
	logf := func(format string, a ...any) {
		mu.Lock()
		fmt.Fprintf(stdout, *label+" "+format+"\n", a...)
		mu.Unlock()
	}
	var serve func() error
	var stop func() error
	if *v6 {
		srv, err := server6.NewServer("", nil, func(conn net.PacketConn, peer net.Addr, msg dhcpv6.DHCPv6) {
			rm, ok := msg.(*dhcpv6.RelayMessage)
			if !ok {
				logf("got %s, not relayed: ignored", msg.Type())
				return
			}
			inner, err := rm.GetInnerMessage()
			if err != nil {
				return
			}
			rid := "none"
			if o := rm.Options.GetOne(dhcpv6.OptionRemoteID); o != nil {
				rid = fmt.Sprintf("%x", o.ToBytes())
			}
			logf("got %s link-address %s peer-address %s hop-count %d remote-id %s carrying %s", rm.Type(), rm.LinkAddr, rm.PeerAddr, rm.HopCount, rid, inner.Type())
			adv, err := dhcpv6.NewAdvertiseFromSolicit(inner, dhcpv6.WithServerID(&dhcpv6.DUIDEN{EnterpriseNumber: 1, EnterpriseIdentifier: []byte(*label)}))
			if err != nil {
				return
			}
			if rr, err := dhcpv6.NewRelayReplFromRelayForw(rm, adv); err == nil {
				conn.WriteTo(rr.ToBytes(), peer)
			}
		}, server6.WithConn(pc))
		if err != nil {
			return err
		}
		serve, stop = srv.Serve, srv.Close
	} else {
		srv, err := server4.NewServer("", nil, func(conn net.PacketConn, peer net.Addr, req *dhcpv4.DHCPv4) {
			ra := req.Options.Get(dhcpv4.OptionRelayAgentInformation)
			o82 := "none"
			if ra != nil {
				o82 = fmt.Sprintf("%q", ra)
			}
			logf("got %s from %s giaddr %s hops %d option-82 %s", req.MessageType(), req.ClientHWAddr, req.GatewayIPAddr, req.HopCount, o82)
			typ := dhcpv4.MessageTypeOffer
			if req.MessageType() == dhcpv4.MessageTypeRequest {
				typ = dhcpv4.MessageTypeAck
			}
			mods := []dhcpv4.Modifier{dhcpv4.WithMessageType(typ), dhcpv4.WithServerIP(host),
				dhcpv4.WithYourIP(net.IPv4(10, 9, 0, host[3])), dhcpv4.WithOption(dhcpv4.OptServerIdentifier(host))}
			if ra != nil {
				mods = append(mods, dhcpv4.WithGeneric(dhcpv4.OptionRelayAgentInformation, ra))
			}
			if resp, err := dhcpv4.NewReplyFromRequest(req, mods...); err == nil {
				conn.WriteTo(resp.ToBytes(), peer)
			}
		}, server4.WithConn(pc))
		if err != nil {
			return err
		}
		serve, stop = srv.Serve, srv.Close
	}
	go func() { <-ctx.Done(); stop() }()
	if err := serve(); err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}

// dhcpClientMain is `tcpkit dhcp-client`: it sends one DISCOVER (or,
// with -v6, a SOLICIT) to the virtual and prints every answer that comes
// within the wait, sorted: its type, server and what it carried. It
// fails when fewer than -answers came.
func dhcpClientMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("dhcp-client", flag.ContinueOnError)
	fs.SetOutput(stderr)
	connect := fs.String("connect", "", "the virtual's address:port")
	bind := fs.String("bind", "", "the local address to send from")
	v6 := fs.Bool("v6", false, "send a DHCPv6 SOLICIT")
	mac := fs.String("mac", "02:00:00:00:00:01", "the client's hardware address")
	hops := fs.Int("hops", 0, "DHCPv4 hops, as a relay before the virtual would set it")
	giaddr := fs.String("giaddr", "", "DHCPv4 giaddr, as a relay before the virtual would set it")
	want := fs.Int("answers", 1, "answers to wait for")
	wait := fs.Duration("wait", 5*time.Second, "how long to wait for them")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *connect == "" {
		return errors.New("dhcp-client: -connect is required")
	}
	hw, err := net.ParseMAC(*mac)
	if err != nil {
		return err
	}
	raddr, err := net.ResolveUDPAddr("udp", *connect)
	if err != nil {
		return err
	}
	var laddr *net.UDPAddr
	if *bind != "" {
		laddr = &net.UDPAddr{IP: net.ParseIP(*bind)}
	}
	c, err := net.ListenUDP("udp", laddr)
	if err != nil {
		return err
	}
	defer c.Close()
	var msg []byte
	if *v6 {
		sol, err := dhcpv6.NewSolicit(hw)
		if err != nil {
			return err
		}
		msg = sol.ToBytes()
	} else {
		mods := []dhcpv4.Modifier{func(d *dhcpv4.DHCPv4) { d.HopCount = uint8(*hops) }}
		if *giaddr != "" {
			mods = append(mods, dhcpv4.WithGatewayIP(net.ParseIP(*giaddr)))
		}
		d, err := dhcpv4.NewDiscovery(hw, mods...)
		if err != nil {
			return err
		}
		msg = d.ToBytes()
	}
	if _, err := c.WriteToUDP(msg, raddr); err != nil {
		return err
	}
	var lines []string
	buf := make([]byte, 2048)
	deadline := time.Now().Add(*wait)
	for len(lines) < *want && ctx.Err() == nil {
		c.SetReadDeadline(deadline)
		n, _, err := c.ReadFromUDP(buf)
		if err != nil {
			break
		}
		if *v6 {
			m, err := dhcpv6.MessageFromBytes(buf[:n])
			if err != nil {
				lines = append(lines, "not DHCPv6: "+err.Error())
				continue
			}
			sid := ""
			if id, ok := m.Options.ServerID().(*dhcpv6.DUIDEN); ok {
				sid = string(id.EnterpriseIdentifier)
			}
			lines = append(lines, fmt.Sprintf("%s server %s same-transaction %v", m.Type(), sid, m.TransactionID.String() == msg2tid(msg)))
			continue
		}
		o, err := dhcpv4.FromBytes(buf[:n])
		if err != nil {
			lines = append(lines, "not DHCPv4: "+err.Error())
			continue
		}
		o82 := "none"
		if ra := o.Options.Get(dhcpv4.OptionRelayAgentInformation); ra != nil {
			o82 = fmt.Sprintf("%q", ra)
		}
		lines = append(lines, fmt.Sprintf("%s from %s yiaddr %s option-82 %s", o.MessageType(), o.ServerIdentifier(), o.YourIPAddr, o82))
	}
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Fprintln(stdout, l)
	}
	if len(lines) < *want {
		return fmt.Errorf("dhcp-client: %d answers of %d", len(lines), *want)
	}
	return nil
}

// msg2tid is a SOLICIT's transaction id as dhcpv6 prints one.
func msg2tid(b []byte) string {
	var t dhcpv6.TransactionID
	copy(t[:], b[1:4])
	return t.String()
}
