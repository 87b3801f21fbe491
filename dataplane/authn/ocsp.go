package authn

import (
	"bytes"
	"context"
	"crypto"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"golang.org/x/crypto/ocsp"
)

// OCSPResponder is an `ltm auth ocsp-responder`.
type OCSPResponder struct {
	Name string
	// URL is where requests go; empty: the certificate's own OCSP
	// address (its Authority Information Access), unless IgnoreAIA.
	URL       string
	IgnoreAIA bool
	// CAs are the ca-file's certificates: a client certificate's issuer
	// is looked for among them when the client did not send it.
	CAs []*x509.Certificate
	// Others are va-file's certificates, which may sign answers besides
	// the issuer and the responders it delegated to.
	Others []*x509.Certificate
	// Hash is cert-id-digest (SHA-1 by default).
	Hash crypto.Hash
	// VerifySig: the answer's signature is checked (verify-sig); off,
	// an answer is read whoever signed it.
	VerifySig bool
	// StatusAge, when not zero, is how old an answer's thisUpdate may
	// be; ValidityPeriod the clock skew allowed on its dates.
	StatusAge, ValidityPeriod time.Duration
}

// SSLOCSP is an `ltm auth ssl-ocsp` configuration: its responders are
// asked in order until one answers about the client certificate; good
// is a success, revoked or unknown a failure [M: BIG-IP's pam_ssl_ocsp
// fails unknown], no answer an error.
type SSLOCSP struct {
	Responders []*OCSPResponder
	// MaxTimeout bounds the whole question (max-timeout).
	MaxTimeout time.Duration
	Client     *http.Client
}

// maxOCSPAnswer bounds what is read from a responder.
const maxOCSPAnswer = 1 << 20

// Authenticate implements Backend.
func (s *SSLOCSP) Authenticate(ctx context.Context, r Request) Result {
	if r.Cert == nil {
		return Result{Status: Failure, Err: errors.New("no client certificate")}
	}
	if s.MaxTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.MaxTimeout)
		defer cancel()
	}
	var last error
	for _, o := range s.Responders {
		if ctx.Err() != nil {
			break
		}
		res, err := s.ask(ctx, o, r)
		if err != nil {
			last = fmt.Errorf("ocsp-responder %s: %w", o.Name, err)
			continue
		}
		return res
	}
	if last == nil {
		last = errors.New("no OCSP responder configured")
		if ctx.Err() != nil {
			last = ctx.Err()
		}
	}
	return Result{Status: Error, Err: last}
}

func (s *SSLOCSP) ask(ctx context.Context, o *OCSPResponder, r Request) (Result, error) {
	issuer := r.Issuer
	if issuer == nil || r.Cert.CheckSignatureFrom(issuer) != nil {
		issuer = findIssuer(r.Cert, o.CAs)
	}
	if issuer == nil {
		return Result{}, fmt.Errorf("the issuer of %q is in neither the client's chain nor ca-file", r.Cert.Subject)
	}
	u := o.URL
	if u == "" && !o.IgnoreAIA && len(r.Cert.OCSPServer) > 0 {
		u = r.Cert.OCSPServer[0]
	}
	if u == "" {
		return Result{}, errors.New("no url, and the certificate names no OCSP responder")
	}
	h := o.Hash
	if h == 0 {
		h = crypto.SHA1
	}
	req, err := ocsp.CreateRequest(r.Cert, issuer, &ocsp.RequestOptions{Hash: h})
	if err != nil {
		return Result{}, err
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(req))
	if err != nil {
		return Result{}, err
	}
	hr.Header.Set("Content-Type", "application/ocsp-request")
	hr.Header.Set("Accept", "application/ocsp-response")
	c := s.Client
	if c == nil {
		c = http.DefaultClient
	}
	res, err := c.Do(hr)
	if err != nil {
		return Result{}, err
	}
	der, err := io.ReadAll(io.LimitReader(res.Body, maxOCSPAnswer))
	res.Body.Close()
	if err != nil {
		return Result{}, err
	}
	if res.StatusCode != http.StatusOK {
		return Result{}, fmt.Errorf("%s answered HTTP %d", u, res.StatusCode)
	}
	var ans *ocsp.Response
	if o.VerifySig {
		ans, err = ocsp.ParseResponseForCert(der, r.Cert, issuer)
		if err != nil {
			// Signed by one of va-file's certificates?
			for _, other := range o.Others {
				if a, err2 := ocsp.ParseResponseForCert(der, r.Cert, other); err2 == nil {
					ans, err = a, nil
					break
				}
			}
		}
	} else {
		ans, err = ocsp.ParseResponseForCert(der, r.Cert, nil)
		if ans != nil {
			err = nil
		}
	}
	if err != nil {
		return Result{}, fmt.Errorf("answer from %s: %w", u, err)
	}
	if ans.SerialNumber == nil || ans.SerialNumber.Cmp(r.Cert.SerialNumber) != 0 {
		return Result{}, fmt.Errorf("answer from %s is about another certificate", u)
	}
	now := time.Now()
	skew := o.ValidityPeriod
	if ans.ThisUpdate.After(now.Add(skew)) {
		return Result{}, fmt.Errorf("answer from %s is dated in the future (%v)", u, ans.ThisUpdate)
	}
	if !ans.NextUpdate.IsZero() && ans.NextUpdate.Before(now.Add(-skew)) {
		return Result{}, fmt.Errorf("answer from %s expired at %v", u, ans.NextUpdate)
	}
	if o.StatusAge > 0 && now.Sub(ans.ThisUpdate) > o.StatusAge+skew {
		return Result{}, fmt.Errorf("answer from %s is older than status-age", u)
	}
	data := []Attr{{"ssl_ocsp:status", ocspStatus(ans.Status)}}
	switch ans.Status {
	case ocsp.Good:
		return Result{Status: Success, Data: data}, nil
	case ocsp.Revoked:
		return Result{Status: Failure, Data: data, Err: fmt.Errorf("%q (serial %X) was revoked at %v", r.Cert.Subject, r.Cert.SerialNumber, ans.RevokedAt)}, nil
	}
	return Result{Status: Failure, Data: data, Err: fmt.Errorf("the responder does not know %q (serial %X)", r.Cert.Subject, r.Cert.SerialNumber)}, nil
}

func ocspStatus(s int) string {
	switch s {
	case ocsp.Good:
		return "good"
	case ocsp.Revoked:
		return "revoked"
	}
	return "unknown"
}

// findIssuer is the certificate among cas that signed cert.
func findIssuer(cert *x509.Certificate, cas []*x509.Certificate) *x509.Certificate {
	for _, ca := range cas {
		if bytes.Equal(ca.RawSubject, cert.RawIssuer) && cert.CheckSignatureFrom(ca) == nil {
			return ca
		}
	}
	return nil
}
