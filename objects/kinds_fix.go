package objects

// fixProfileKind is `ltm profile fix` (parent /Common/fix), with the
// properties BIG-IP lists for it [M: rows and defaults as BIG-IP 12-17
// lists them, not read from a system; sender-tag-class items as
// { NAME { sender-id SENDER tag-map-class DATA-GROUP } }]. openltm
// frames and checks each FIX message of a TCP virtual with it, maps tag
// numbers per sender (sender-tag-class), runs FIX_HEADER and
// FIX_MESSAGE (over the member's messages too with response-parsing),
// and logs through its publishers: every message to
// message-log-publisher, errors and a status report every
// statistics-sample-interval seconds to report-log-publisher.
func fixProfileKind() *Kind {
	k := actOn(profileKind("fix", "fix", `
error-action enum dont-forward dont-forward|drop-connection
full-logon-parsing tf true
message-log-publisher ref sys+log-config+publisher none
quick-parsing tf false
report-log-publisher ref sys+log-config+publisher none
response-parsing tf false
statistics-sample-interval int 20
`), "F5 ltm profile fix: FIX messages of a TCP virtual framed on BodyLength and checked (CheckSum), tags mapped per SenderCompID (sender-tag-class), the member chosen after the first message's FIX_HEADER",
		"error-action", "full-logon-parsing", "quick-parsing", "response-parsing", "sender-tag-class",
		"message-log-publisher", "report-log-publisher", "statistics-sample-interval")
	k.Props = append(k.Props, help(&Prop{Name: "sender-tag-class", Type: TColl, Items: ItemPlain, Sub: &Kind{Title: "Sender Tag Class", Props: []*Prop{
		help(str("sender-id", "none"), "the SenderCompID (tag 49) of the client's Logon"),
		help(ref("tag-map-class", "ltm data-group internal"), "a string or integer data group: each record maps a tag number from the client (key) to the one the member gets (data)"),
	}}}, "{ NAME { sender-id SENDER tag-map-class DATA-GROUP } }: the tag numbers a sender's messages carry are mapped for the member, and back in the member's answers"))
	for _, p := range k.Props {
		switch p.Name {
		case "message-log-publisher":
			p.Help = "the sys log-config publisher that gets every FIX message, from the client and from the member"
		case "report-log-publisher":
			p.Help = "the sys log-config publisher that gets the malformed messages (and what was done) and the status reports"
		case "statistics-sample-interval":
			p.Help = "seconds between two status reports to report-log-publisher (0: none)"
		case "response-parsing":
			p.Help = "true: the member's messages are checked as the client's, and run FIX_HEADER and FIX_MESSAGE on the server side"
		}
	}
	return k
}
