package rules

import "github.com/openltm/openltm/rules/tcl"

// The IP:: commands of BIG-IP's IP Intelligence subscription and of
// AFM's per-flow ingress limits. openltm has no reputation database and
// its flows keep no ingress packet limit of their own (a flow is shaped
// with a bandwidth controller: BWC::policy, BWC::pps). A rule naming one
// is kept with a warning and not run, as one with TCP::setmss is (an
// answer it could mistake for "no threat" or "no limit" would be worse);
// the command itself, should it run, is a Tcl error saying why.
var ipUnsupported = map[string]string{
	"IP::reputation":         "openltm has no IP Intelligence (reputation) database",
	"IP::intelligence":       "openltm has no IP Intelligence database",
	"IP::ingress_rate_limit": "openltm's flows keep no ingress packet limit of their own; shape the flow with a bandwidth controller (BWC::policy attach, BWC::pps)",
	"IP::ingress_drop_rate":  "openltm's flows keep no ingress packet limit, so none drops packets",
}

func registerIPUnsupported(t *tcl.Commands) { registerUnsupported(t, ipUnsupported) }
