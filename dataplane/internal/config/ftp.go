package config

import "github.com/openltm/openltm/dataplane/ftpalg"

// FTP is a virtual's ftp profile: the FTP control channel is read both
// ways and its data addresses rewritten to the virtual's (dataplane/
// ftpalg), so that passive and active transfers pass through the
// virtual. It is an alias so that the daemon, which may not import this
// package, can build it.
type FTP = ftpalg.Options
