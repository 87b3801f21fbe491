package authn

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-ldap/ldap/v3"
)

// CRLDPServer is an `ltm auth crldp-server`: an LDAP server a
// distribution point that names a directory entry (a DN, not a URL) is
// read from.
type CRLDPServer struct {
	Addr, BaseDN string
}

// SSLCRLDP is an `ltm auth ssl-crldp` configuration: the client
// certificate's CRL distribution points are fetched (an http URL
// directly, an ldap URL or a DN from the crldp servers), each CRL's
// signature checked against the certificate's issuer, and the
// certificate's serial looked for in it. A revoked certificate is a
// failure; no CRL that could be read and checked, an error.
type SSLCRLDP struct {
	Servers []CRLDPServer
	// CacheTimeout is how long a CRL is kept (cache-timeout), bounded
	// by its own nextUpdate.
	CacheTimeout time.Duration
	// ConnectTimeout bounds one fetch (connection-timeout).
	ConnectTimeout time.Duration
	Client         *http.Client

	mu    sync.Mutex
	cache map[[32]byte]crlEntry
}

type crlEntry struct {
	crl     *x509.RevocationList
	expires time.Time
}

// maxCRL bounds what is read of one CRL.
const maxCRL = 16 << 20

// Authenticate implements Backend.
func (d *SSLCRLDP) Authenticate(ctx context.Context, r Request) Result {
	if r.Cert == nil {
		return Result{Status: Failure, Err: errors.New("no client certificate")}
	}
	if r.Issuer == nil || r.Cert.CheckSignatureFrom(r.Issuer) != nil {
		return Result{Status: Error, Err: errors.New("the client sent no issuer certificate to check its CRL's signature with")}
	}
	points := r.Cert.CRLDistributionPoints
	if len(points) == 0 {
		return Result{Status: Error, Err: fmt.Errorf("%q names no CRL distribution point", r.Cert.Subject)}
	}
	var last error
	for _, p := range points {
		crl, err := d.crl(ctx, p, r.Issuer)
		if err != nil {
			last = fmt.Errorf("CRL %s: %w", p, err)
			continue
		}
		for _, e := range crl.RevokedCertificateEntries {
			if e.SerialNumber.Cmp(r.Cert.SerialNumber) == 0 {
				return Result{Status: Failure, Err: fmt.Errorf("%q (serial %X) is in the CRL of %s", r.Cert.Subject, r.Cert.SerialNumber, p)}
			}
		}
		return Result{Status: Success}
	}
	return Result{Status: Error, Err: last}
}

// crl is the checked CRL at point, from the cache while it holds.
func (d *SSLCRLDP) crl(ctx context.Context, point string, issuer *x509.Certificate) (*x509.RevocationList, error) {
	k := sha256.Sum256([]byte(point + "\x00" + string(issuer.Raw)))
	now := time.Now()
	d.mu.Lock()
	if e, ok := d.cache[k]; ok && now.Before(e.expires) {
		d.mu.Unlock()
		return e.crl, nil
	}
	d.mu.Unlock()
	if d.ConnectTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d.ConnectTimeout)
		defer cancel()
	}
	der, err := d.fetch(ctx, point)
	if err != nil {
		return nil, err
	}
	crl, err := x509.ParseRevocationList(der)
	if err != nil {
		return nil, err
	}
	if err := crl.CheckSignatureFrom(issuer); err != nil {
		return nil, fmt.Errorf("not signed by %q: %v", issuer.Subject, err)
	}
	if !crl.NextUpdate.IsZero() && crl.NextUpdate.Before(now) {
		return nil, fmt.Errorf("expired at %v", crl.NextUpdate)
	}
	exp := now.Add(d.CacheTimeout)
	if !crl.NextUpdate.IsZero() && crl.NextUpdate.Before(exp) {
		exp = crl.NextUpdate
	}
	d.mu.Lock()
	if d.cache == nil || len(d.cache) > 1000 {
		d.cache = map[[32]byte]crlEntry{}
	}
	d.cache[k] = crlEntry{crl, exp}
	d.mu.Unlock()
	return crl, nil
}

// fetch reads a distribution point: an http(s) URL, or an ldap URL or
// a DN read (its certificateRevocationList attribute) from the crldp
// servers in order.
func (d *SSLCRLDP) fetch(ctx context.Context, point string) ([]byte, error) {
	if strings.HasPrefix(point, "http://") || strings.HasPrefix(point, "https://") {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, point, nil)
		if err != nil {
			return nil, err
		}
		c := d.Client
		if c == nil {
			c = http.DefaultClient
		}
		res, err := c.Do(req)
		if err != nil {
			return nil, err
		}
		defer res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("HTTP %d", res.StatusCode)
		}
		return io.ReadAll(io.LimitReader(res.Body, maxCRL))
	}
	dn := point
	if strings.HasPrefix(point, "ldap://") {
		// ldap://host/DN?attr: the DN, read from the crldp servers [M].
		rest := strings.TrimPrefix(point, "ldap://")
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			dn = rest[i+1:]
		}
		if i := strings.IndexByte(dn, '?'); i >= 0 {
			dn = dn[:i]
		}
	}
	if len(d.Servers) == 0 {
		return nil, errors.New("names a directory entry, and no crldp server is configured")
	}
	var last error
	for _, s := range d.Servers {
		b, err := ldapCRL(ctx, s, dn)
		if err == nil {
			return b, nil
		}
		last = err
	}
	return nil, last
}

func ldapCRL(ctx context.Context, s CRLDPServer, dn string) ([]byte, error) {
	dl := &net.Dialer{Timeout: 15 * time.Second}
	if t, ok := ctx.Deadline(); ok {
		dl.Deadline = t
	}
	conn, err := ldap.DialURL("ldap://"+s.Addr, ldap.DialWithDialer(dl))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if dn == "" {
		dn = s.BaseDN
	}
	res, err := conn.Search(ldap.NewSearchRequest(dn, ldap.ScopeBaseObject, ldap.NeverDerefAliases, 1, 15, false,
		"(objectClass=*)", []string{"certificateRevocationList;binary", "certificateRevocationList"}, nil))
	if err != nil {
		return nil, err
	}
	for _, e := range res.Entries {
		for _, a := range e.Attributes {
			if strings.HasPrefix(strings.ToLower(a.Name), "certificaterevocationlist") && len(a.ByteValues) > 0 {
				return a.ByteValues[0], nil
			}
		}
	}
	return nil, fmt.Errorf("%s on %s holds no certificateRevocationList", dn, s.Addr)
}
