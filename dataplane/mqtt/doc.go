// Package mqtt is the mqtt profile's codec: MQTT 3.1, 3.1.1 and 5.0
// control packets framed off a TCP stream, decoded into the fields the
// MQTT:: iRule commands read and edit, and encoded again after an edit.
// It owns no sockets: the L4 engine (dataplane/internal/l4/mqtt.go)
// reads and writes, this package says where a packet ends, whether it is
// well formed, and what it holds.
//
// MQTT 5.0 property blocks are kept as the bytes that came (a rule does
// not read or edit properties), so that a packet passes through
// unchanged unless a rule changes one of its named fields.
package mqtt
