// Package diammsg reads and writes Diameter (RFC 6733) messages: the
// header, the AVPs, framing off a byte stream on the header's length,
// and rewriting an AVP in place. The diameter health monitor and the
// diameter profile's message flows share it.
package diammsg
