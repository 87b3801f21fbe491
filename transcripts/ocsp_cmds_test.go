package transcripts

import (
	"sync"

	"github.com/openltm/openltm/dataplane/tlsprof/ocsptest"
	"github.com/rogpeppe/go-internal/testscript"
)

var ocspResponders sync.Map // script work dir + address → *ocsptest.Responder

// ocspd start ADDR INDEX CA SIGNER KEY: answer OCSP requests on ADDR with
// openssl's responder over INDEX (OpenSSL's CA database), signed by
// SIGNER/KEY for CA, answers good for 10 minutes; ocspd stop ADDR: stop
// it, so that ADDR refuses connections.
func cmdOCSPd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: ocspd start ADDR INDEX CA SIGNER KEY | ocspd stop ADDR")
	}
	key := ts.Getenv("WORK") + "\x00" + args[1]
	switch {
	case args[0] == "start" && len(args) == 6:
		r := &ocsptest.Responder{Index: ts.MkAbs(args[2]), CA: ts.MkAbs(args[3]), Signer: ts.MkAbs(args[4]), SignerKey: ts.MkAbs(args[5]), Minutes: 10}
		if err := r.Start(args[1]); err != nil {
			ts.Fatalf("ocspd: %v", err)
		}
		ocspResponders.Store(key, r)
		ts.Defer(func() {
			if v, ok := ocspResponders.LoadAndDelete(key); ok {
				v.(*ocsptest.Responder).Close()
			}
		})
	case args[0] == "stop" && len(args) == 2:
		v, ok := ocspResponders.LoadAndDelete(key)
		if !ok {
			ts.Fatalf("ocspd: no responder on %s", args[1])
		}
		v.(*ocsptest.Responder).Close()
	default:
		ts.Fatalf("usage: ocspd start ADDR INDEX CA SIGNER KEY | ocspd stop ADDR")
	}
}
