package objects

// sseProfileKind is `ltm profile sse` (parent /Common/sse): Server-Sent
// Events on an HTTP virtual [M: rows and defaults as the tmsh reference
// names them (max-buffered-msg-bytes 65536, max-field-name-size 1024),
// not read from a system]. openltm reads text/event-stream responses
// event by event as they stream and runs SSE_RESPONSE for each.
func sseProfileKind() *Kind {
	k := actOn(profileKind("sse", "sse", `
max-buffered-msg-bytes int 65536
max-field-name-size int 1024
`), "F5 ltm profile sse: text/event-stream responses of an HTTP virtual read event by event as they stream, SSE_RESPONSE and SSE::field for the rules",
		"max-buffered-msg-bytes", "max-field-name-size")
	for _, p := range k.Props {
		switch p.Name {
		case "max-buffered-msg-bytes":
			p.Min, p.Max = 1, 16<<20
			p.Help = "the longest event, in bytes, that SSE_RESPONSE sees; a longer one passes unchanged [M]"
		case "max-field-name-size":
			p.Min, p.Max = 1, 65535
			p.Help = "the longest field name, in bytes; an event with a longer one passes unchanged [M]"
		}
	}
	return k
}
