package config

import (
	"net/netip"
	"time"

	"github.com/openltm/openltm/dataplane/pcp"
)

// SNATLSN is source-address-translation type lsn: the server side's
// source is a translation address and port from an `ltm lsn-pool`.
const SNATLSN SNATType = "lsn"

// LSNMode is an lsn-pool's mode.
type LSNMode string

// The lsn-pool modes.
const (
	LSNNAPT          LSNMode = "napt"
	LSNDeterministic LSNMode = "deterministic"
	LSNPBA           LSNMode = "pba"
)

// LSNPersist is an lsn-pool's persistence mode.
type LSNPersist string

// The lsn-pool persistence modes.
const (
	LSNPersistNone        LSNPersist = "none"
	LSNPersistAddress     LSNPersist = "address"
	LSNPersistAddressPort LSNPersist = "address-port"
)

// LSNInbound is an lsn-pool's inbound-connections.
type LSNInbound string

// The lsn-pool inbound-connections settings.
const (
	LSNInboundDisabled  LSNInbound = "disabled"
	LSNInboundAutomatic LSNInbound = "automatic"
	LSNInboundExplicit  LSNInbound = "explicit"
)

// LSNPool is an `ltm lsn-pool` (large-scale NAT): the translation
// addresses and ports the server sides of its virtuals' subscribers
// take, and how they are chosen.
type LSNPool struct {
	Name string
	Mode LSNMode
	// Members are the translation prefixes; BackupMembers those a
	// deterministic pool falls back to (as NAPT) when a subscriber's
	// ports are all in use.
	Members, BackupMembers []netip.Prefix
	// PortLow and PortHigh are translation-port-range.
	PortLow, PortHigh uint16
	Persist           LSNPersist
	PersistTimeout    time.Duration
	Inbound           LSNInbound
	// ClientConnLimit is client-connection-limit: translated connections
	// one subscriber may have at once (0: no limit).
	ClientConnLimit uint32
	// The port-block-allocation settings (mode pba).
	BlockSize        int
	BlockLifetime    time.Duration // 0: none
	BlockIdle        time.Duration // 0: none
	ClientBlockLimit int
	ZombieTimeout    time.Duration // 0: none
	// Subscribers are the source prefixes of the virtual servers that
	// translate through a deterministic pool, in the order the mapping
	// counts them (the daemon sorts them).
	Subscribers []netip.Prefix
	// LogPublisher is log-publisher's full path ("": none), which gets a
	// line per translation (and port block) made and ended.
	LogPublisher string
	// LogBackupOnly is the lsn-log-profile's "backup-allocation-only"
	// for translation starts: only translations from backup-members are
	// logged. LogStart and LogEnd say whether the starts and ends of
	// outbound translations are logged (true without a log profile).
	LogStart, LogEnd, LogBackupOnly bool
	// LogCSV is the log profile's csv-format enabled.
	LogCSV bool
	// Hairpin is hairpin-mode enabled: a subscriber's connection to a
	// translation address and port of the pool in use by another
	// subscriber goes to that subscriber inside, not out.
	Hairpin bool
	// PCP is the pool's PCP server (pcp { profile selfip }); nil: none.
	PCP *LSNPCP
}

// LSNPCP is an lsn pool's Port Control Protocol server (RFC 6887) and
// its `ltm profile pcp` settings.
type LSNPCP struct {
	// Listen is the selfip's address and the profile's listening-port.
	Listen netip.AddrPort
	// MapLimit is map-limit-per-client: mappings one PCP client may
	// hold (0: no limit).
	MapLimit int
	// MinLifetime and MaxLifetime bound a mapping's lifetime.
	MinLifetime, MaxLifetime time.Duration
	// ThirdParty is third-party-option enabled: a client may ask for
	// a mapping of another internal address (the THIRD_PARTY option)
	// when it is in ThirdPartySubnets (none: any).
	ThirdParty        bool
	ThirdPartySubnets []netip.Prefix
	// Rules runs the profile's rule; nil: the profile has none (or it
	// has neither PCP_REQUEST nor PCP_RESPONSE).
	Rules PCPRules
}

// PCPRules runs a pcp profile's rule in the PCP server: PCP_REQUEST
// over each well-formed request before it is acted on, PCP_RESPONSE
// over each answer about to leave. The daemon implements it with the
// rules engine, so that the dataplane does not build programs.
type PCPRules interface {
	// PCPRequest runs PCP_REQUEST over r, from client to the server
	// at server: reject is the result code a PCP::reject chose (0:
	// none); drop is set when the rule failed (a Tcl error), and the
	// request is dropped unanswered, as a connection whose rule fails
	// is reset.
	PCPRequest(r *pcp.Request, client, server netip.AddrPort) (reject uint8, drop bool)
	// PCPResponse runs PCP_RESPONSE over resp, the answer to r; a
	// failing rule is logged and the answer leaves as it is.
	PCPResponse(r *pcp.Request, resp *pcp.Response, client, server netip.AddrPort)
}
