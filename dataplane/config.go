package dataplane

import (
	"net/netip"

	"github.com/openltm/openltm/dataplane/internal/config"
)

// The configuration types live in dataplane/internal/config, so that the
// dataplane's own packages share them without importing this one; they
// are re-exported here unchanged, and the daemon uses them as
// dataplane.Config, dataplane.Virtual and so on. Their documentation is
// in that package.

type (
	Config            = config.Config
	NamedDest         = config.NamedDest
	Virtual           = config.Virtual
	VirtualAddress    = config.VirtualAddress
	MBLB              = config.MBLB
	OneConnect        = config.OneConnect
	PortRange         = config.PortRange
	AddrRange         = config.AddrRange
	SourceMatch       = config.SourceMatch
	NAT               = config.NAT
	GeoMatch          = config.GeoMatch
	GeoRegion         = config.GeoRegion
	VLANFilter        = config.VLANFilter
	SNATType          = config.SNATType
	SNAT              = config.SNAT
	SNATObject        = config.SNATObject
	SNATTranslation   = config.SNATTranslation
	LBMode            = config.LBMode
	ServiceDownAction = config.ServiceDownAction
	Pool              = config.Pool
	AdminSession      = config.AdminSession
	AdminState        = config.AdminState
	Member            = config.Member
	Node              = config.Node
	MonitorRule       = config.MonitorRule
	MonitorType       = config.MonitorType
	DNSCheck          = config.DNSCheck
	Monitor           = config.Monitor
	PersistKey        = config.PersistKey
	PersistMethod     = config.PersistMethod
	Persistence       = config.Persistence
	ProxyMap          = config.ProxyMap
	Event             = config.Event
	Rules             = config.Rules
	RuleConn          = config.RuleConn
	TLS               = config.TLS
	Choosable         = config.Choosable
	HTTP2             = config.HTTP2
	FQDN              = config.FQDN
	ExternalMonitor   = config.ExternalMonitor
	InbandMonitor     = config.InbandMonitor
	MonitorLogin      = config.MonitorLogin
	LDAPMonitor       = config.LDAPMonitor
	SIPMonitor        = config.SIPMonitor
	SIPDatagram       = config.SIPDatagram
	RADIUSProfile     = config.RADIUSProfile
	RADIUSClient      = config.RADIUSClient
	TFTPProfile       = config.TFTPProfile
	BWCPolicy         = config.BWCPolicy
	LSNPool           = config.LSNPool
	LSNPCP            = config.LSNPCP
	LSNMode           = config.LSNMode
	LSNPersist        = config.LSNPersist
	LSNInbound        = config.LSNInbound
	BWCCategory       = config.BWCCategory
	BWCMark           = config.BWCMark
	BWCPriorityGroup  = config.BWCPriorityGroup
	RateClass         = config.RateClass
	RateQueue         = config.RateQueue
	RateDrop          = config.RateDrop
	GTPProfile        = config.GTPProfile
	DHCPProfile       = config.DHCPProfile
	DHCPv6Option      = config.DHCPv6Option
	RADIUSMonitor     = config.RADIUSMonitor
	DBMonitor         = config.DBMonitor
	Protocol          = config.Protocol
	RateLimitMode     = config.RateLimitMode
)

const (
	RateAny                        = config.RateAny
	RateToClient                   = config.RateToClient
	RateToServer                   = config.RateToServer
	DropTail                       = config.DropTail
	DropRED                        = config.DropRED
	DropFRED                       = config.DropFRED
	ProtoTCP                       = config.ProtoTCP
	ProtoUDP                       = config.ProtoUDP
	SNATNone                       = config.SNATNone
	SNATAutomap                    = config.SNATAutomap
	SNATPool                       = config.SNATPool
	SNATLSN                        = config.SNATLSN
	RoundRobin                     = config.RoundRobin
	RatioMember                    = config.RatioMember
	RatioNode                      = config.RatioNode
	LeastConnectionsMember         = config.LeastConnectionsMember
	LeastConnectionsNode           = config.LeastConnectionsNode
	WeightedLeastConnectionsMember = config.WeightedLeastConnectionsMember
	WeightedLeastConnectionsNode   = config.WeightedLeastConnectionsNode
	RatioLeastConnectionsMember    = config.RatioLeastConnectionsMember
	RatioLeastConnectionsNode      = config.RatioLeastConnectionsNode
	ObservedMember                 = config.ObservedMember
	PredictiveMember               = config.PredictiveMember
	FastestNode                    = config.FastestNode
	DownNone                       = config.DownNone
	DownReset                      = config.DownReset
	DownDrop                       = config.DownDrop
	DownReselect                   = config.DownReselect
	SessionEnabled                 = config.SessionEnabled
	SessionUserDisabled            = config.SessionUserDisabled
	StateUserUp                    = config.StateUserUp
	StateUserDown                  = config.StateUserDown
	MonitorTCP                     = config.MonitorTCP
	MonitorTCPHalfOpen             = config.MonitorTCPHalfOpen
	MonitorHTTP                    = config.MonitorHTTP
	MonitorGatewayICMP             = config.MonitorGatewayICMP
	MonitorHTTPS                   = config.MonitorHTTPS
	MonitorHTTP2                   = config.MonitorHTTP2
	MonitorUDP                     = config.MonitorUDP
	MonitorICMP                    = config.MonitorICMP
	MonitorDNS                     = config.MonitorDNS
	MonitorExternal                = config.MonitorExternal
	MonitorInband                  = config.MonitorInband
	MonitorSMTP                    = config.MonitorSMTP
	MonitorPOP3                    = config.MonitorPOP3
	MonitorIMAP                    = config.MonitorIMAP
	MonitorFTP                     = config.MonitorFTP
	MonitorNNTP                    = config.MonitorNNTP
	MonitorLDAP                    = config.MonitorLDAP
	MonitorSIP                     = config.MonitorSIP
	MonitorRADIUS                  = config.MonitorRADIUS
	MonitorRADIUSAcct              = config.MonitorRADIUSAcct
	MonitorPostgreSQL              = config.MonitorPostgreSQL
	PersistSourceAddr              = config.PersistSourceAddr
	PersistUniversal               = config.PersistUniversal
	PersistCookie                  = config.PersistCookie
	PersistHash                    = config.PersistHash
	PersistDestAddr                = config.PersistDestAddr
	PersistSSL                     = config.PersistSSL
	PersistMSRDP                   = config.PersistMSRDP
	PersistSIP                     = config.PersistSIP
	PersistHost                    = config.PersistHost
	EventClientAccepted            = config.EventClientAccepted
	EventClientData                = config.EventClientData
	EventLBSelected                = config.EventLBSelected
	EventLBFailed                  = config.EventLBFailed
	EventServerConnected           = config.EventServerConnected
	EventServerData                = config.EventServerData
	EventServerClosed              = config.EventServerClosed
	EventClientClosed              = config.EventClientClosed
	MaxPortsPerVirtual             = config.MaxPortsPerVirtual
	MaxAddressesPerVirtual         = config.MaxAddressesPerVirtual
	DefaultPersistTimeout          = config.DefaultPersistTimeout
)

// PrefixRange is the range of addresses p covers, for a source filter.
func PrefixRange(p netip.Prefix) AddrRange { return config.PrefixRange(p) }

// NewSourceMatch merges a traffic-matching-criteria's source ranges once
// at commit; nil when it filters nothing.
func NewSourceMatch(addrs []AddrRange, ports []PortRange) *SourceMatch {
	return config.NewSourceMatch(addrs, ports)
}

// JoinPort writes name:port the way BIG-IP names members and flows:
// "/Common/10.1.1.1:80", and '.' before the port after an IPv6 address
// ("dead:beef::1.80").
func JoinPort(name string, port uint16) string { return config.JoinPort(name, port) }

// ParseRateLimitMode maps a virtual's rate-limit-mode word; ok is false
// for a word BIG-IP does not have.
func ParseRateLimitMode(s string) (RateLimitMode, bool) { return config.ParseRateLimitMode(s) }
