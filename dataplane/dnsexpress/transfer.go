package dnsexpress

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/dnszone"
)

// Key is a TSIG key as ltm dns tsig-key holds it.
type Key struct {
	Name      string // fqdn, lower case, as the signer names it
	Algorithm string // dns.HmacMD5, dns.HmacSHA1, dns.HmacSHA256
	Secret    string // base64
}

// Algorithm maps ltm dns tsig-key's algorithm to its TSIG name; "" for
// one openltm does not know.
func Algorithm(f5 string) string {
	switch f5 {
	case "hmac-md5":
		return dns.HmacMD5
	case "hmac-sha1":
		return dns.HmacSHA1
	case "hmac-sha256":
		return dns.HmacSHA256
	}
	return ""
}

// xfrTimeout bounds a transfer's dial and each of its reads [M].
var xfrTimeout = 10 * time.Second

// transfer brings the zone from server: an IXFR from have's serial when
// there is a copy (the primary may answer it with the whole zone, or with
// its SOA alone when the copy is current), else an AXFR. how says which
// it was: "axfr", "ixfr", or "current" (have is returned).
func transfer(origin string, server netip.AddrPort, src netip.Addr, key *Key, have *dnszone.Zone) (d *dnszone.Zone, how string, err error) {
	q := new(dns.Msg)
	if have != nil {
		q.SetIxfr(origin, have.SOA().Serial, have.SOA().Ns, have.SOA().Mbox)
	} else {
		q.SetAxfr(origin)
	}
	t := &dns.Transfer{DialTimeout: xfrTimeout, ReadTimeout: xfrTimeout, WriteTimeout: xfrTimeout}
	if key != nil {
		q.SetTsig(key.Name, key.Algorithm, 300, time.Now().Unix())
		t.TsigSecret = map[string]string{key.Name: key.Secret}
	}
	dl := &net.Dialer{Timeout: xfrTimeout}
	if src.IsValid() {
		dl.LocalAddr = &net.TCPAddr{IP: src.AsSlice()}
	}
	c, err := dl.Dial("tcp", server.String())
	if err != nil {
		return nil, "", err
	}
	t.Conn = &dns.Conn{Conn: c}
	defer t.Close()
	ch, err := t.In(q, server.String())
	if err != nil {
		return nil, "", err
	}
	var rrs []dns.RR
	for env := range ch {
		if env.Error != nil {
			err = env.Error
			for range ch { // let In's goroutine end
			}
			break
		}
		rrs = append(rrs, env.RR...)
	}
	if err != nil {
		return nil, "", xfrError(err)
	}
	if len(rrs) == 0 {
		return nil, "", errors.New("empty transfer")
	}
	first, ok := rrs[0].(*dns.SOA)
	if !ok || !strings.EqualFold(first.Hdr.Name, origin) {
		return nil, "", errors.New("transfer does not start with the zone's SOA")
	}
	if have != nil && len(rrs) == 1 {
		if first.Serial == have.SOA().Serial {
			return have, "current", nil
		}
		return nil, "", fmt.Errorf("IXFR answered with serial %d alone", first.Serial)
	}
	if len(rrs) < 2 {
		return nil, "", errors.New("truncated transfer")
	}
	if _, soa := rrs[1].(*dns.SOA); have != nil && soa {
		d, err := incremental(origin, have, rrs)
		return d, "ixfr", err
	}
	last, ok := rrs[len(rrs)-1].(*dns.SOA)
	if !ok || last.Serial != first.Serial {
		return nil, "", errors.New("transfer does not end with the zone's SOA")
	}
	d = dnszone.Build(strings.ToLower(origin), rrs[:len(rrs)-1])
	if d.SOA() == nil {
		return nil, "", errors.New("no SOA at the apex")
	}
	return d, "axfr", nil
}

// xfrError names the rcode of a primary's refusal, which miekg/dns
// gives as a number.
func xfrError(err error) error {
	const p = "bad xfr rcode: "
	if s := err.Error(); strings.Contains(s, p) {
		n, cerr := strconv.Atoi(s[strings.Index(s, p)+len(p):])
		if cerr == nil {
			return fmt.Errorf("the primary answered %s", dns.RcodeToString[n])
		}
	}
	return err
}

// incremental applies an IXFR's differences (RFC 1995: new SOA, then
// per version the old SOA and its deletions, the new SOA and its
// additions, and the new SOA again) to have.
func incremental(origin string, have *dnszone.Zone, rrs []dns.RR) (*dnszone.Zone, error) {
	set := map[string]dns.RR{}
	for _, rr := range have.Records() {
		set[rrKey(rr)] = rr
	}
	adding, soas := false, 0
	for _, rr := range rrs[1 : len(rrs)-1] {
		if _, ok := rr.(*dns.SOA); ok {
			if soas%2 == 0 {
				adding = false // an old version's SOA: its deletions follow
			} else {
				adding = true
			}
			soas++
			continue
		}
		if adding {
			set[rrKey(rr)] = rr
		} else {
			delete(set, rrKey(rr))
		}
	}
	last, ok := rrs[len(rrs)-1].(*dns.SOA)
	if !ok || last.Serial != rrs[0].(*dns.SOA).Serial || soas%2 != 0 {
		return nil, errors.New("IXFR does not end with the zone's SOA")
	}
	out := []dns.RR{rrs[0]}
	for _, rr := range set {
		if rr.Header().Rrtype != dns.TypeSOA {
			out = append(out, rr)
		}
	}
	return dnszone.Build(strings.ToLower(origin), out), nil
}

// rrKey names a record apart from its TTL, as IXFR deletes it.
func rrKey(rr dns.RR) string {
	c := dns.Copy(rr)
	c.Header().Ttl = 0
	c.Header().Name = strings.ToLower(c.Header().Name)
	return c.String()
}
