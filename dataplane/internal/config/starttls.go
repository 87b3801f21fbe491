package config

import "github.com/openltm/openltm/dataplane/starttls"

// STARTTLS is a virtual's smtps, imap, pop3 or client-ldap profile: the conversation
// is read both ways (dataplane/starttls) so that the virtual offers and
// answers STARTTLS and ends the client's TLS itself. It is an alias so
// that the daemon, which may not import this package, can build it.
type STARTTLS = starttls.Options

// ServerLDAP is a virtual's server-ldap profile: StartTLS toward the
// member before server-ssl's handshake (ldap.go in l4).
type ServerLDAP = starttls.ServerLDAP
