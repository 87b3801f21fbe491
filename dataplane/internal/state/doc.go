// Package state holds the dataplane's runtime objects and the policy they
// carry: the runtime of each virtual server, pool, member and node (kept
// across commits by name, with their counters and monitor watches), the
// one availability decision (Member.Availability), load balancing
// (Pool.Pick) and the one member choice every data path makes (Choose:
// a rule's named member, then persistence, then balancing), and address
// translation (Translate, SNATSource). The L4 engines, message-based
// balancing and the rule views read and count through it; the dataplane
// root builds and swaps its objects at each commit and reads them for
// shows.
package state
