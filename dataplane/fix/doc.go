// Package fix frames, checks and edits Financial Information eXchange
// (FIX 4.0 to 5.0 over FIXT.1.1) messages as the fix profile of a TCP
// virtual server reads them: tag=value fields separated by SOH, framed on
// BodyLength (9) and closed by CheckSum (10), so that rules can read tags
// and the proxy can map a sender's tag numbers and send the message on
// with a new BodyLength and CheckSum. Log writes the profile's lines to
// its message-log-publisher and report-log-publisher.
package fix
