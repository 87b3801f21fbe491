package tlsprof

import (
	"bytes"
	"fmt"
	"net/netip"
	"sort"
	"time"
)

// OCSPResponse is the OCSP answer a client-ssl profile staples for one of
// its certificates, as `show ltm clientssl ocsp-stapling-responses` lists
// it, or the one a server-ssl profile checked a member's certificate by
// (`show ltm serverssl ocsp-responses`): read from the shared cache at the
// moment of the show.
type OCSPResponse struct {
	Cert      string // the sys file ssl-cert; "" for a member's certificate
	Subject   string // the certificate's subject
	Serial    string // the certificate's serial number, hex
	Validator string // "cert-validator NAME" or "ocsp-stapling-params NAME"
	Responder string // the URL last asked; "" before the first exchange
	// Status is good, revoked or unknown; "" when no answer is stapled
	// (none yet, or the last one ran out).
	Status string
	// ThisUpdate and NextUpdate are the answer's own (NextUpdate zero:
	// the responder gave none); Fetched when it came; Expires when it
	// stops being stapled; Renew when the responder is asked again.
	ThisUpdate, NextUpdate, Fetched, Expires, Renew time.Time
	// Err is the last exchange's error ("" when it gave the answer).
	Err string
	// Members are the addresses of the members that presented the
	// certificate in a server-ssl handshake, first seen first, at most
	// 16 (MoreMembers counts those past them); none for a client-ssl
	// profile's certificate.
	Members     []netip.AddrPort
	MoreMembers int
}

// OCSPResponses lists the answers the profile staples, one per
// certificate with a validator, in cert-key-chain order; none when the
// profile has no ocsp-stapling. It only reads: no exchange is started.
func (b *Built) OCSPResponses() []OCSPResponse {
	if b == nil {
		return nil
	}
	var out []OCSPResponse
	for _, s := range b.stapling {
		if s.entry != nil {
			out = append(out, s.entry.response(s.name))
		}
	}
	return out
}

// MemberOCSPResponses lists the answers a server-ssl profile's ocsp
// validator holds for the members' certificates its handshakes checked
// (under the validator's current settings, so across commits that leave
// them alone), by subject and serial number; none when the profile has no
// ocsp or no member was checked yet. It only reads: no exchange is
// started.
func (b *Built) MemberOCSPResponses() []OCSPResponse {
	if b == nil || b.ocsp == nil {
		return nil
	}
	key := b.ocsp.o.key()
	var es []*ocspEntry
	ocspCache.mu.Lock()
	for _, e := range ocspCache.m {
		if e.vkey == key && e.member.Load() {
			es = append(es, e)
		}
	}
	ocspCache.mu.Unlock()
	sort.Slice(es, func(i, j int) bool {
		if c := bytes.Compare(es[i].leaf.RawSubject, es[j].leaf.RawSubject); c != 0 {
			return c < 0
		}
		return es[i].leaf.SerialNumber.Cmp(es[j].leaf.SerialNumber) < 0
	})
	out := make([]OCSPResponse, len(es))
	for i, e := range es {
		out[i] = e.response("")
		out[i].Members, out[i].MoreMembers = e.members.list()
	}
	return out
}

// response is what a show lists of e's answer now.
func (e *ocspEntry) response(cert string) OCSPResponse {
	a := e.cur.Load()
	r := OCSPResponse{Cert: cert, Subject: e.leaf.Subject.String(), Serial: fmt.Sprintf("%X", e.leaf.SerialNumber),
		Validator: e.o.label(), Responder: a.url, Renew: a.refresh}
	if a.der != nil && e.now().Before(a.expires) {
		r.Status, r.ThisUpdate, r.NextUpdate, r.Fetched, r.Expires = a.status, a.thisUpdate, a.nextUpdate, a.fetched, a.expires
	}
	if a.err != nil {
		r.Err = a.err.Error()
	}
	return r
}
