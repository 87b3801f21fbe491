package daemon

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"sort"
	"strconv"
	"time"

	"github.com/openltm/openltm/dataplane/gslb/iquery"
	"github.com/openltm/openltm/objects"
)

// commands are the iQuery agent's tmsh commands:
//
//	run gtm trust-exchange address ADDR [port N] [fingerprint SHA256]
//	show gtm iquery
//	show gtm trusted-device
//	delete gtm trusted-device NAME|FINGERPRINT
//
// trust-exchange is openltm's bigip_add: it reads the certificate the peer
// presents on its iQuery port and, once the user confirms its fingerprint
// (given after `fingerprint`, as read from `show gtm iquery` on the peer),
// trusts it. Each side runs it for the other: the GSLB to follow the
// datacenter, the datacenter to let the GSLB in.
func (a *iqueryAgent) commands() []RuntimeCommand {
	return []RuntimeCommand{
		{"run", "gtm trust-exchange", a.trustExchange},
		{"show", "gtm iquery", a.showIQuery},
		{"show", "gtm trusted-device", func(ctx context.Context, s *Session, _, words []string, w io.Writer) error {
			return a.showTrusted(w)
		}},
		{"delete", "gtm trusted-device", func(ctx context.Context, s *Session, _, words []string, w io.Writer) error {
			if len(words) != 1 {
				return &objects.SyntaxError{Msg: "delete gtm trusted-device takes one device name or fingerprint", Expected: []string{"NAME", "FINGERPRINT"}}
			}
			n, err := a.store.Remove(words[0])
			if err != nil {
				return err
			}
			if n == 0 {
				return &objects.ConfigError{Code: "01020036", Msg: fmt.Sprintf("The requested trusted device (%s) was not found.", words[0])}
			}
			return nil
		}},
	}
}

func (a *iqueryAgent) trustExchange(ctx context.Context, s *Session, _, words []string, w io.Writer) error {
	var addr netip.Addr
	port := IQueryPort
	fp := ""
	usage := []string{"address ADDR", "port N", "fingerprint SHA256"}
	for i := 0; i < len(words); i += 2 {
		if i+1 >= len(words) {
			return &objects.SyntaxError{Msg: fmt.Sprintf("%q needs a value", words[i]), Expected: usage}
		}
		v := words[i+1]
		switch words[i] {
		case "address":
			ad, err := netip.ParseAddr(v)
			if err != nil {
				return &objects.SyntaxError{Msg: fmt.Sprintf("%q is not an IP address", v), Expected: []string{"an IP address"}}
			}
			addr = ad
		case "port":
			n, err := strconv.ParseUint(v, 10, 16)
			if err != nil || n == 0 {
				return &objects.SyntaxError{Msg: fmt.Sprintf("%q is not a port", v), Expected: []string{"1-65535"}}
			}
			port = uint16(n)
		case "fingerprint":
			fp = v
		default:
			return &objects.SyntaxError{Msg: fmt.Sprintf("%q unknown property", words[i]), Expected: usage}
		}
	}
	if !addr.IsValid() {
		return &objects.SyntaxError{Msg: "run gtm trust-exchange needs the peer's address", Expected: usage}
	}
	peer := netip.AddrPortFrom(addr, port).String()
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	certPEM, dev, err := iquery.FetchCertificate(cctx, peer)
	if err != nil {
		return objects.Invalid("iQuery peer %s did not present a certificate: %v", peer, err)
	}
	if fp == "" {
		return objects.Invalid("iQuery peer %s presents the certificate of %q, fingerprint %s; to trust it, confirm with: run gtm trust-exchange address %s fingerprint %s",
			peer, dev.Name, dev.Fingerprint, addr, dev.Fingerprint)
	}
	if fp != dev.Fingerprint {
		a.e.log.Warn("iquery: trust-exchange refused a certificate whose fingerprint was not the one confirmed", "peer", peer, "device", dev.Name, "fingerprint", dev.Fingerprint, "confirmed", fp)
		return objects.Invalid("iQuery peer %s presents fingerprint %s, not %s: not trusted", peer, dev.Fingerprint, fp)
	}
	if _, err := a.store.Add(certPEM); err != nil {
		return err
	}
	a.e.log.Info("iquery: trusted a device", "peer", peer, "device", dev.Name, "fingerprint", dev.Fingerprint)
	_, err = fmt.Fprintf(w, "Trusted %s (%s), fingerprint %s\n", dev.Name, peer, dev.Fingerprint)
	return err
}

func (a *iqueryAgent) showIQuery(ctx context.Context, s *Session, _, words []string, w io.Writer) error {
	p := &lineWriter{w: w}
	p.f("Gtm::IQuery\n")
	p.f("  %-13s: %s\n", "Device", a.store.ID.Name)
	p.f("  %-13s: %s\n", "Fingerprint", a.store.ID.Fingerprint())
	a.mu.Lock()
	var listen []string
	for ap := range a.pubs {
		listen = append(listen, ap.String())
	}
	a.mu.Unlock()
	sort.Strings(listen)
	if len(listen) == 0 {
		listen = []string{"none (no net self whose allow-service admits tcp:4353)"}
	}
	for i, l := range listen {
		k := ""
		if i == 0 {
			k = "Listening"
		}
		p.f("  %-13s: %s\n", k, l)
	}
	p.f("\nPeers\n")
	peers := a.sub.Peers()
	if len(peers) == 0 {
		p.f("  none\n")
	}
	for _, ps := range peers {
		state := "down"
		if ps.Connected {
			state = "connected"
		}
		line := fmt.Sprintf("  %-22s %-10s device %s", ps.Addr, state, orNone(ps.Device))
		if ps.Connected && len(ps.Addrs) > 1 {
			line += ", via " + ps.Via
		}
		if ps.Connected && ps.TLS != "" {
			line += ", " + ps.TLS
		}
		if !ps.LastReport.IsZero() {
			line += ", last report " + ps.LastReport.UTC().Format(time.RFC3339)
		}
		if !ps.Connected && ps.LastError != "" {
			line += ", " + ps.LastError
		}
		p.f("%s\n", line)
	}
	p.f("\n")
	if p.err != nil {
		return p.err
	}
	return a.showTrusted(w)
}

func (a *iqueryAgent) showTrusted(w io.Writer) error {
	p := &lineWriter{w: w}
	p.f("Trusted Devices\n")
	ds := a.store.Trust.Trusted()
	if len(ds) == 0 {
		p.f("  none\n")
	}
	for _, d := range ds {
		p.f("  %-24s %s\n", d.Name, d.Fingerprint)
	}
	return p.err
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// lineWriter writes formatted lines and keeps the first error.
type lineWriter struct {
	w   io.Writer
	err error
}

func (l *lineWriter) f(format string, args ...any) {
	if l.err == nil {
		_, l.err = fmt.Fprintf(l.w, format, args...)
	}
}
