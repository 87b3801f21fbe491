package rules

import (
	"strconv"
	"strings"
	"time"

	"github.com/openltm/openltm/rules/tcl"
)

// cmdDiameterPersist is DIAMETER::persist: without arguments, the key
// the message is persisted by (the rule's, else the session profile's:
// message routing's persist-avp value); `KEY ?BIDIRECTIONAL?` sets the
// key; reset forgets the record of the message's key; use, replace,
// bypass and ignore say how the message's routing treats that record;
// `timeout ?SECONDS?` reads or sets the record's life; delete-none,
// delete-on-success, delete-on-failure and delete-on-any say whether
// the record is forgotten as the message's transaction completes (set
// over a request, or over its answer in DIAMETER_EGRESS);
// `bidirectional ?BOOLEAN?` and `direction ?detect|forward|reverse?`
// are read and set [M: openltm's records are found by their key
// whichever way a message goes, so neither changes the routing].
func cmdDiameterPersist(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const usage = "DIAMETER::persist ?KEY ?BIDIRECTIONAL?? | reset | use | replace | bypass | ignore | timeout ?SECONDS? | " +
		"bidirectional ?BOOLEAN? | direction ?detect|forward|reverse? | delete-none | delete-on-success | delete-on-failure | delete-on-any"
	if len(args) > 3 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	st, err := diameterMsg(in, "DIAMETER::persist")
	if err != nil {
		return tcl.Empty, err
	}
	out := &st.out
	if len(args) == 1 {
		if out.Persist == "" {
			return tcl.Str(st.ctx.PersistKey), nil
		}
		return tcl.Str(out.Persist), nil
	}
	sub := args[1].String()
	one := len(args) == 2
	switch sub {
	case "use", "replace", "bypass", "ignore", "delete-none", "delete-on-success", "delete-on-failure", "delete-on-any":
		if one && !st.ctx.Routed {
			return tcl.Empty, tcl.Errorf("DIAMETER::persist %s: only on message routing (a diameter session profile's persistence records); the diameter profile keeps none it acts on", sub)
		}
	case "timeout":
		if !one && !st.ctx.Routed {
			return tcl.Empty, tcl.Errorf("DIAMETER::persist timeout: only on message routing (a diameter session profile's persistence records); the diameter profile keeps none it acts on")
		}
	}
	switch sub {
	case "reset":
		if one {
			out.PersistReset = true
			return tcl.Empty, nil
		}
	case "use", "replace", "bypass", "ignore":
		if one {
			out.PersistMode = sub
			return tcl.Empty, nil
		}
	case "delete-none", "delete-on-success", "delete-on-failure", "delete-on-any":
		if one {
			out.PersistDelete = sub
			return tcl.Empty, nil
		}
	case "timeout":
		if one {
			if out.PersistTimeout > 0 {
				return tcl.Int(int64(out.PersistTimeout / time.Second)), nil
			}
			return tcl.Int(int64(st.ctx.PersistTTL / time.Second)), nil
		}
		n, err := strconv.Atoi(strings.TrimSpace(args[2].String()))
		if err != nil || n <= 0 {
			return tcl.Empty, tcl.Errorf("DIAMETER::persist timeout: bad value %q: must be a number of seconds above 0", args[2].String())
		}
		out.PersistTimeout = time.Duration(n) * time.Second
		return tcl.Empty, nil
	case "bidirectional":
		if one {
			return tcl.Bool(out.PersistBidir == "true"), nil
		}
		b, ok := persistBool(args[2].String())
		if !ok {
			return tcl.Empty, tcl.Errorf("DIAMETER::persist bidirectional: bad value %q: must be a boolean", args[2].String())
		}
		out.PersistBidir = strconv.FormatBool(b)
		return tcl.Empty, nil
	case "direction":
		if one {
			if out.PersistDirection == "" {
				return tcl.Str("detect"), nil // [M]
			}
			return tcl.Str(out.PersistDirection), nil
		}
		switch d := args[2].String(); d {
		case "detect", "forward", "reverse":
			out.PersistDirection = d
			return tcl.Empty, nil
		default:
			return tcl.Empty, tcl.Errorf("DIAMETER::persist direction: bad direction %q: must be detect, forward or reverse", d)
		}
	}
	if len(args) == 3 {
		b, ok := persistBool(args[2].String())
		if !ok {
			return tcl.Empty, tcl.Errorf("DIAMETER::persist: bad bidirection %q: must be a boolean", args[2].String())
		}
		out.PersistBidir = strconv.FormatBool(b)
	}
	out.Persist = sub
	return tcl.Empty, nil
}

// persistBool reads a boolean as F5's DIAMETER::persist takes one:
// true, enable(d), yes, on or 1; false, disable(d), no, off or 0.
func persistBool(s string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "enable", "enabled", "yes", "on", "1":
		return true, true
	case "false", "disable", "disabled", "no", "off", "0":
		return false, true
	}
	return false, false
}
