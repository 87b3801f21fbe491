package objects

// tftpProfileKind is `ltm profile tftp` (parent /Common/tftp), BIG-IP's
// TFTP ALG [M: the property list and the 30-second idle-timeout are as
// remembered from v13-v17, not read from a system]. openltm acts on it
// on UDP virtuals: the member's answers from its transfer port reach the
// client through the virtual (dataplane/internal/udp/tftp.go), and the
// transfer's flow lives idle-timeout seconds without a datagram. The
// logging settings need BIG-IP's ALG logging and are kept with a warning.
func tftpProfileKind() *Kind {
	return actOn(profileKind("tftp", "tftp", `
idle-timeout int 30
log-profile str none
log-publisher str none
`), "F5 ltm profile tftp: the TFTP ALG on UDP virtuals; the member's answers from its transfer port (RFC 1350 TID) reach the client through the virtual, both ways, for idle-timeout seconds",
		"idle-timeout")
}
