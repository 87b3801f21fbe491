package tlsprof

import (
	"fmt"
	"time"
)

// OCSPResponse is the OCSP answer a client-ssl profile staples for one of
// its certificates, as `show ltm clientssl ocsp-stapling-responses` lists
// it: read from the shared cache at the moment of the show.
type OCSPResponse struct {
	Cert      string // the sys file ssl-cert
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
		e := s.entry
		if e == nil {
			continue
		}
		a := e.cur.Load()
		r := OCSPResponse{Cert: s.name, Subject: e.leaf.Subject.String(), Serial: fmt.Sprintf("%X", e.leaf.SerialNumber),
			Validator: e.o.label(), Responder: a.url, Renew: a.refresh}
		if a.der != nil && e.now().Before(a.expires) {
			r.Status, r.ThisUpdate, r.NextUpdate, r.Fetched, r.Expires = a.status, a.thisUpdate, a.nextUpdate, a.fetched, a.expires
		}
		if a.err != nil {
			r.Err = a.err.Error()
		}
		out = append(out, r)
	}
	return out
}
