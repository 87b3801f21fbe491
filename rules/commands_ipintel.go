package rules

import "github.com/openltm/openltm/rules/tcl"

// The IP:: commands of BIG-IP's IP Intelligence subscription: openltm
// has no reputation database (IP::ingress_rate_limit and
// IP::ingress_drop_rate are commands_ratelimit.go's). A rule naming one
// is kept with a warning and not run, as one with TCP::setmss is (an
// answer it could mistake for "no threat" would be worse);
// the command itself, should it run, is a Tcl error saying why.
var ipUnsupported = map[string]string{
	"IP::reputation":   "openltm has no IP Intelligence (reputation) database",
	"IP::intelligence": "openltm has no IP Intelligence database",
}

func registerIPUnsupported(t *tcl.Commands) { registerUnsupported(t, ipUnsupported) }
