// Package mblbvs runs message-based load balancing for the plane's
// virtual servers: a virtual with the mblb profile hands each accepted
// client connection to its virtual's mblb.Engine instead of the L4 flow
// engines. The engine frames messages (declaratively, or through the
// virtual's iRules and TCP::notify) and asks this package, per message,
// which member takes it (state.Choose: a rule's pool, member or node,
// persistence, the pool's balancing, members that just failed passed
// over) and how to reach it (translation and SNAT). The connection table
// shows the client flow and every server connection as separate flows, as
// BIG-IP does for MBLB (seed 000: `client <-> vs <-> any6` and
// `any6 <-> vs <-> member`). Set keeps one engine per virtual across
// commits; Env is all it needs of the plane.
package mblbvs
