package mrf

import (
	"net/netip"
	"time"
)

// Status words of MR::message status [M: F5 names route found and no
// route found; the others are openltm's].
const (
	StatusUnprocessed = "unprocessed"
	StatusRouted      = "route found"
	StatusNoRoute     = "no route found"
	StatusConnFailed  = "connection failed"
	StatusDropped     = "dropped"
	StatusPendingFull = "too many pending messages"
)

// Message is one generic message and what rules asked of it.
type Message struct {
	// Data is the message without its terminator.
	Data []byte
	// Src and Dst are its source and destination addresses
	// (GENERICMESSAGE::message src/dst); a message from a client has
	// none unless a rule sets them.
	Src, Dst string
	// Request: an answer is expected (false for a message from a peer,
	// and for every message with no-response). Answer: it answers a
	// request (a protocol's, matched by key); Bad: the protocol could
	// not read it.
	Request, Answer, Bad bool
	// Status is MR::message status.
	Status string
	// Retries counts MR::retry.
	Retries int
	// MaxRetries is MR::max_retries for this message (from the router).
	MaxRetries int

	// RoutePeers, when set, is MR::message route peer ...: the message
	// goes to one of them (RouteRatio: by ratio, else in order).
	RoutePeers []string
	RouteRatio bool
	// RouteHost and RoutePool are MR::message route host/pool.
	RouteHost netip.AddrPort
	RoutePool string
	// Instance is MR::connection_instance (-1: rotate).
	Instance int

	// Drop, Return and Retry are what the last event asked: drop the
	// message, send it back to its originator, route it again.
	Drop   bool
	Return bool
	Retry  bool
	// Reason is MR::message drop's reason.
	Reason string

	// Store is MR::store's variables, carried to the answer.
	Store map[string]string

	// Persist is the message's persistence key (SIP::persist KEY): it
	// goes where the key's earlier messages went, while that record
	// lives (PersistTTL, else DefaultPersistTTL), and records where it
	// went otherwise.
	Persist    string
	PersistTTL time.Duration
	// PersistMode and PersistDelete are what a rule asked of the key's
	// record (DIAMETER::persist use|replace|bypass|ignore, and
	// delete-on-success|failure|any: the record forgotten as the
	// request's answer comes; persistmode.go).
	PersistMode   PersistMode
	PersistDelete PersistDelete

	// Peer is the peer the message was last routed to ("" none) and
	// Member the address it went to.
	Peer   string
	Member netip.AddrPort

	// ReqSeq is GENERICMESSAGE::message request_sequence_number: the
	// message's number among its connection's messages (from 1), which
	// a rule may set [M: F5 keeps the request's last hop by it; openltm
	// keeps the way back by the peer connection's order, so the number
	// set is only read back].
	ReqSeq uint64

	// Made: a rule made the message (GENERICMESSAGE::message create)
	// rather than the client sending it.
	Made bool

	// The v14+ MR::message settings (clone.go): CloneID is the clone's
	// id ("": the original), CloneCount the clones made of the message
	// with it (0: none), CloneOfRequest an answer's request's CloneID
	// (MR::message clone_id_request); ExistingOnly sends the message
	// only over a peer connection already open
	// (existing_connections_only); the seed is read back as set; SNAT is the source of a peer connection the
	// message opens (invalid: the transport's), SNATAutomap the
	// virtual's address.
	CloneID        string
	CloneCount     int
	CloneOfRequest string
	ExistingOnly   bool
	SNAT           netip.Addr
	SNATAutomap    bool

	origin    *Session
	pinned    netip.AddrPort // the member a persistence record names
	attempted []netip.AddrPort
	// retransmits counts the routings again after a peer connection
	// closed with m in flight (retransmission-action retransmit).
	retransmits int
	tried       []string
	// triedBuf holds the first peers tried, so that routing a message
	// allocates nothing for them.
	triedBuf [2]string
}

// Originator is the session the message came from (nil: a peer's
// unsolicited message).
func (m *Message) Originator() *Session { return m.origin }
