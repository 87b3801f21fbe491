package config

import "github.com/openltm/openltm/dataplane/starttls"

// STARTTLS is a virtual's smtps, imap or pop3 profile: the conversation
// is read both ways (dataplane/starttls) so that the virtual offers and
// answers STARTTLS and ends the client's TLS itself. It is an alias so
// that the daemon, which may not import this package, can build it.
type STARTTLS = starttls.Options
