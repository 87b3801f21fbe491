package transcripts

import (
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/openltm/openltm/dataplane/diameter/diamtest"
)

// diampeer ADDR NAME REALM: connect to a virtual at ADDR as a Diameter
// peer NAME of realm REALM (its CER), answering the requests the
// virtual routes to it as a diamserver does, until the script ends or
// `diampeer -close NAME`; diamseen NAME prints what it received.
func cmdDiamPeer(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("usage: diampeer ADDR NAME REALM | diampeer -close NAME")
	}
	if len(args) == 2 && args[0] == "-close" {
		v, ok := diamServers.Load(ts.Getenv("WORK") + "/" + args[1])
		if !ok {
			ts.Fatalf("diampeer: no peer %s", args[1])
		}
		v.(*diamtest.Server).Close()
		return
	}
	if len(args) != 3 {
		ts.Fatalf("usage: diampeer ADDR NAME REALM | diampeer -close NAME")
	}
	s, err := diamtest.DialServe(args[0], args[1], args[2])
	if err != nil {
		ts.Fatalf("diampeer: %v", err)
	}
	key := ts.Getenv("WORK") + "/" + args[1]
	diamServers.Store(key, s)
	ts.Defer(func() { s.Close(); diamServers.Delete(key) })
}

// diamdpr NAME: make Diameter peer NAME (a diamserver or diampeer) send
// a Disconnect-Peer-Request on each of its connections.
func cmdDiamDPR(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: diamdpr NAME")
	}
	v, ok := diamServers.Load(ts.Getenv("WORK") + "/" + args[0])
	if !ok {
		ts.Fatalf("diamdpr: no peer %s", args[0])
	}
	if v.(*diamtest.Server).DPR() == 0 {
		ts.Fatalf("diamdpr: %s has no connection", args[0])
	}
}
