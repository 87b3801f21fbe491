package doh

import (
	"io"
	"log"
)

// quietLog drops net/http's own lines (a client that went away, a bad
// head): the counters say what the clients sent.
var quietLog = log.New(io.Discard, "", 0)
