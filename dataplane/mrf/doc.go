// Package mrf is the generic message-routing framework of a TCP virtual
// with an `ltm message-routing generic protocol` and `generic router`
// profile (and of a UDP virtual with these or SIP's: each datagram one message,
// each client address and port a session, peers reached over UDP flows
// where the virtual's own transport or a peer's transport-config is UDP;
// Config.UDP, Transport.UDP, DatagramDialer): the stream cut into messages by the protocol's
// message-terminator, each message routed by the router's static routes
// (by its source and destination addresses) to a peer, and connections to
// peers kept and reused across client connections as each peer's
// connection-mode says. Answers go back to the connection the request
// came from: a peer connection keeps, in the order its requests left, who
// sent them, and each message it sends is the answer to the oldest one
// (F5's generic message protocol has no request ids and documents this
// order). A message a shared peer connection sends with no request
// waiting is routed as a client's message is (F5: every message is
// routed) and its answer goes back on that connection. A peer's
// transport-config makes its connections: their source address
// (source-address-translation) and tcp settings. max-pending-messages and
// max-pending-bytes bound the messages waiting for a peer connection to
// open. Peers with auto-initialization are connected as the virtual
// starts and kept so (Router.AutoInit). A protocol's session profile
// may persist requests with no key from a rule by the call they belong
// to (CallIDer), the client's address or a value the protocol reads
// (PersistKeyer) (Config.Persist). A protocol that probes its peers
// (Watchdogger) has a peer connection it hears nothing on probed and
// closed once its probes go unanswered (Config.Watchdog). With the
// generic protocol's disable-parser (Config.DisableParser) the stream is
// not cut: each client's reads pass through a peer connection of its
// own, and what the peer sends comes back as it is. Rules act on a
// client connection's own settings and its router's peer connections
// (conncmds.go: MR::prime, MR::ignore_peer_port, MR::always_match_port,
// MR::connect_back_port, MR::equivalent_transport). The virtual's counts (Counters)
// outlive its routers, for the protocol's and router's statistics. The
// package knows nothing of pools, sockets or rules: the L4 engine
// (dataplane/internal/l4/mrf.go) gives it a way to pick a pool member and
// dial it, and hooks for the iRules events.
package mrf
