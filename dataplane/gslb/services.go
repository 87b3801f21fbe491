package gslb

import (
	"errors"
	"strings"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/rules"
)

// Services is what a query's iRules asked of the dns profile's steps
// (DNS::disable, DNS::enable, DNS::last_act): a rule may keep one query
// from a service the profile has, or end it another way than the
// profile's unhandled-query-action. The zero value changes nothing, so
// that a query without rules carries no cost.
type Services struct {
	// Off holds the Service* bits of the services skipped.
	Off uint8
	// LastAct is the query's unhandled-query-action (allow, drop,
	// reject, hint, noerror); "" for the profile's.
	LastAct string
}

// The services DNS::disable names, as bits of Services.Off.
const (
	ServiceGTM    uint8 = 1 << iota // the wide IPs
	ServiceDNSX                     // DNS Express and the static zones
	ServiceCache                    // the profile's cache
	ServiceDNSSEC                   // signing the answers
	ServiceRPZ                      // the cache's response policy zones
)

// What DNS::origin answers in DNS_RESPONSE, BIG-IP's names for what
// built the response.
const (
	OriginServer     = "SERVER"      // a pool member, or BIND
	OriginCache      = "CACHE"       // the profile's cache
	OriginGTM        = "GTM_BUILD"   // a wide IP
	OriginDNSX       = "DNSX"        // DNS Express, or a static zone on a virtual
	OriginLastAction = "LAST_ACTION" // unhandled-query-action
	OriginTCL        = "TCL"         // a rule's DNS::return
	OriginRPZ        = "RPZ"         // a cache's response policy zone
)

// MessageLog is a QueryLog that also takes a rule's own line (DNS::log):
// dataplane/dnsvs's loggers are.
type MessageLog interface {
	// Message logs msg as a line of the query id's.
	Message(id uint16, msg string)
}

var errServiceWide = errors.New("DNS::disable, DNS::enable and DNS::last_act are valid in a listener's or a virtual's DNS_REQUEST, not in a wide IP's rules")

// service takes DNS::disable, DNS::enable and DNS::last_act. A gtm
// listener's rules may skip the wide IPs and DNS Express; the cache,
// DNSSEC and the last action are a virtual's dns profile's in openltm
// [M], so a listener's rule asking for them is an error.
func (c *ruleConn) service(a rules.DNSAction) error {
	if c.wide {
		return errServiceWide
	}
	var bits uint8
	switch a.Name {
	case rules.DNSComponentAll:
		bits = ServiceGTM | ServiceDNSX
		if c.virtual {
			bits |= ServiceCache | ServiceDNSSEC | ServiceRPZ
		}
	case rules.DNSComponentGTM:
		bits = ServiceGTM
	case rules.DNSComponentDNSX:
		bits = ServiceDNSX
	case rules.DNSComponentCache:
		bits = ServiceCache
	case rules.DNSComponentDNSSEC:
		bits = ServiceDNSSEC
	case rules.DNSComponentRPZ:
		bits = ServiceRPZ
	case rules.DNSComponentAVR:
		return nil // openltm has no AVR: nothing runs to be skipped
	}
	if a.Kind == rules.DNSLastAct {
		if !c.virtual {
			return errors.New("DNS::last_act: openltm acts on it on an LTM virtual's dns profile, not on a gtm listener")
		}
		c.svc.LastAct = a.Name
		return nil
	}
	if !c.virtual && bits&(ServiceCache|ServiceDNSSEC|ServiceRPZ) != 0 {
		cmd := "DNS::enable "
		if a.Kind == rules.DNSDisable {
			cmd = "DNS::disable "
		}
		return errors.New(cmd + a.Name + ": openltm acts on it on an LTM virtual's dns profile, not on a gtm listener")
	}
	if a.Kind == rules.DNSDisable {
		c.svc.Off |= bits
	} else {
		c.svc.Off &^= bits
	}
	return nil
}

// DNSRPZPolicy implements rules.DNSPolicy: what the virtual's cache told
// (SetRPZ); a listener's queries meet no cache's policy here.
func (c *ruleConn) DNSRPZPolicy() string { return c.rpz }

// DNSOrigin implements rules.DNSServices. A virtual's service tells it
// (SetOrigin); on a listener it is worked out when asked: a wide IP's
// answer, DNS Express's, else BIND's (the static zones, the profile's
// steps) as SERVER [M].
func (c *ruleConn) DNSOrigin() string {
	switch {
	case c.origin != "":
		return c.origin
	case c.w != nil:
		return OriginGTM
	}
	if len(c.q.Question) == 1 && !c.virtual {
		if x := c.s.express.Load(); x != nil {
			q := c.q.Question[0]
			if x.x.Answer(c.q, strings.ToLower(q.Name)) != nil {
				return OriginDNSX
			}
		}
	}
	return OriginServer
}

// DNSIsWideIP implements rules.DNSServices: a wide IP of any type,
// by name, alias or wildcard.
func (c *ruleConn) DNSIsWideIP(name string) bool {
	_, some := c.p.wideIPFor(name, dns.TypeA)
	return some != nil
}

// DNSLog implements rules.DNSServices.
func (c *ruleConn) DNSLog(msg string) bool {
	if c.log == nil {
		return false
	}
	if msg != "" {
		c.log(c.q.Id, msg)
	}
	return true
}
