package objects

// fixProfileKind is `ltm profile fix` (parent /Common/fix), with the
// properties BIG-IP lists for it [M: rows and defaults as BIG-IP 12-17
// lists them, not read from a system; sender-tag-class items as
// { NAME { sender-id SENDER tag-map-class DATA-GROUP } }]. openltm
// frames and checks each FIX message of a TCP virtual with it, maps tag
// numbers per sender (sender-tag-class), and runs FIX_HEADER and
// FIX_MESSAGE; the log publishers and the statistics sample interval
// are kept with a warning.
func fixProfileKind() *Kind {
	k := actOn(profileKind("fix", "fix", `
error-action enum dont-forward dont-forward|drop-connection
full-logon-parsing tf true
message-log-publisher str none
quick-parsing tf false
report-log-publisher str none
response-parsing tf false
statistics-sample-interval int 20
`), "F5 ltm profile fix: FIX messages of a TCP virtual framed on BodyLength and checked (CheckSum), tags mapped per SenderCompID (sender-tag-class), the member chosen after the first message's FIX_HEADER",
		"error-action", "full-logon-parsing", "quick-parsing", "response-parsing", "sender-tag-class")
	k.Props = append(k.Props, help(&Prop{Name: "sender-tag-class", Type: TColl, Items: ItemPlain, Sub: &Kind{Title: "Sender Tag Class", Props: []*Prop{
		help(str("sender-id", "none"), "the SenderCompID (tag 49) of the client's Logon"),
		help(ref("tag-map-class", "ltm data-group internal"), "a string or integer data group: each record maps a tag number from the client (key) to the one the member gets (data)"),
	}}}, "{ NAME { sender-id SENDER tag-map-class DATA-GROUP } }: the tag numbers a sender's messages carry are mapped for the member, and back in the member's answers"))
	return k
}
