package daemon

import (
	"crypto/tls"
	"log/slog"
	"sync"

	"github.com/openltm/openltm/dataplane/gslb/iquery"
	"github.com/openltm/openltm/dataplane/tlsprof"
	"github.com/openltm/openltm/objects"
)

var (
	serverIQCiphers    = gtmServer.MustProp("iquery-cipher-list")
	serverIQMinTLS     = gtmServer.MustProp("iquery-minimum-tls-version")
	serverIQAllowPath  = gtmServer.MustProp("iq-allow-path")
	serverIQAllowCheck = gtmServer.MustProp("iq-allow-service-check")
)

// iqueryTLSOf reads a gtm server's iquery-cipher-list and
// iquery-minimum-tls-version into the policy of its iQuery channel: nil
// (TLS 1.3 only, openltm's default) when both are none. A cipher list
// without a minimum allows TLSv1.2 and up of what it selects; a minimum
// without a cipher list allows DEFAULT from that version up.
func iqueryTLSOf(o *objects.Object) (*iquery.TLSPolicy, []string, error) {
	ciphers, minv := serverIQCiphers.Str(o), serverIQMinTLS.Str(o)
	if (ciphers == "" || ciphers == "none") && (minv == "" || minv == "none") {
		return nil, nil, nil
	}
	floor := uint16(tls.VersionTLS12)
	if minv != "" && minv != "none" {
		v, ok := tlsprof.ParseVersion(minv)
		if !ok {
			return nil, nil, objects.Invalid("The gtm server (%s) iquery-minimum-tls-version (%s) is not TLSv1, TLSv1.1, TLSv1.2 or TLSv1.3.", o.Name, minv)
		}
		floor = v
	}
	ch, err := tlsprof.ChannelOf("gtm server "+o.Name+" iquery-cipher-list", ciphers, floor)
	if err != nil {
		return nil, nil, objects.Invalid("%s", err)
	}
	return &iquery.TLSPolicy{MinVersion: ch.MinVersion, MaxVersion: ch.MaxVersion, CipherSuites: ch.Suites}, ch.Warnings, nil
}

// iqueryTLSCache keeps the policies read from each pair of settings, so
// the agent's rounds do not parse cipher strings again every second.
type iqueryTLSCache struct {
	mu sync.Mutex
	m  map[[2]string]*iquery.TLSPolicy
}

// of is the policy of o's settings; settings the configuration could not
// have committed (refused at commit) read as the default. What crypto/tls
// cannot do as asked (a gap between versions, some TLS 1.3 suites only)
// is logged once.
func (c *iqueryTLSCache) of(o *objects.Object, log *slog.Logger) *iquery.TLSPolicy {
	k := [2]string{serverIQCiphers.Str(o), serverIQMinTLS.Str(o)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if pol, ok := c.m[k]; ok {
		return pol
	}
	pol, warns, err := iqueryTLSOf(o)
	if err != nil {
		pol = nil
	}
	for _, w := range warns {
		log.Warn("iquery: " + w)
	}
	if c.m == nil || len(c.m) > 256 {
		c.m = map[[2]string]*iquery.TLSPolicy{}
	}
	c.m[k] = pol
	return pol
}
