package daemon

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/objects"
)

// mblb fills the virtual's message-based load balancing settings from its
// mblb and one-connect profiles. It returns false when the virtual was
// skipped (t.skip says why).
//
// A one-connect profile without mblb is kept but not acted on: openltm has
// no HTTP message parser yet, so there is nothing to detach between
// requests of a plain L4 virtual.
func (t *translator) mblb(o *objects.Object, v *dataplane.Virtual) bool {
	prof := t.profile(o, "ltm profile mblb")
	if prof == nil {
		return true
	}
	m, err := mblbSettings(func(n string) string { return t.cfg.EffectiveStr(prof, n) })
	if err != nil {
		t.skip(o, "profile %s: %v", prof.Name, err)
		return false
	}
	m.Profile = prof.Name
	if oc := t.profile(o, "ltm profile one-connect"); oc != nil {
		s, err := oneConnectSettings(func(n string) string { return t.cfg.EffectiveStr(oc, n) })
		if err != nil {
			t.skip(o, "profile %s: %v", oc.Name, err)
			return false
		}
		s.Profile = oc.Name
		m.OneConnect = s
	}
	v.MBLB = m
	return true
}

// mblbSettings reads an mblb profile's effective properties.
func mblbSettings(get func(string) string) (*dataplane.MBLB, error) {
	m := &dataplane.MBLB{
		MaxMessageSize: atoi(get("max-message-size")),
		MaxInFlight:    atoi(get("max-in-flight")),
		DisableRetry:   get("retry") == "disabled",
	}
	if rt := get("response-timeout"); rt != "" && rt != "none" && rt != "0" {
		m.ResponseTimeout = seconds(rt)
	}
	f := mblb.Framing{}
	switch get("framing") {
	case "", "rule":
		f.Mode = mblb.Rule
	case "per-read":
		f.Mode = mblb.PerRead
	case "length":
		f.Mode = mblb.Length
		size, _ := strconv.Atoi(get("length-size"))
		adj := get("length-adjust")
		if adj == "" || adj == "none" {
			adj = "0"
		}
		a, err := strconv.Atoi(adj)
		if err != nil {
			return nil, fmt.Errorf("length-adjust %q is not an integer", adj)
		}
		f.Length = mblb.LengthField{
			Offset:         atoi(get("length-offset")),
			Size:           size,
			LittleEndian:   get("length-byte-order") == "little",
			Adjust:         int64(a),
			IncludesHeader: get("length-includes-header") == "enabled",
		}
	case "delimiter":
		f.Mode = mblb.Delimiter
		d, err := unescape(get("delimiter"))
		if err != nil {
			return nil, err
		}
		if len(d) == 0 {
			return nil, fmt.Errorf("framing delimiter needs a delimiter")
		}
		f.Delimiter = d
	default:
		return nil, fmt.Errorf("framing %q is not one of rule, per-read, length, delimiter", get("framing"))
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	m.Request = f
	return m, nil
}

// unescape reads a delimiter as typed: \n, \r, \t, \\ and \xHH.
func unescape(s string) ([]byte, error) {
	if s == "none" {
		return nil, nil
	}
	var out []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			out = append(out, c)
			continue
		}
		i++
		switch s[i] {
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case '\\':
			out = append(out, '\\')
		case 'x':
			if i+3 > len(s) {
				return nil, fmt.Errorf("delimiter %q: \\x needs two hex digits", s)
			}
			b, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
			if err != nil {
				return nil, fmt.Errorf("delimiter %q: bad \\x escape", s)
			}
			out = append(out, byte(b))
			i += 2
		default:
			out = append(out, '\\', s[i])
		}
	}
	return out, nil
}

// oneConnectSettings reads a one-connect profile's effective properties.
func oneConnectSettings(get func(string) string) (*dataplane.OneConnect, error) {
	oc := &dataplane.OneConnect{
		MaxSize:  atoi(get("max-size")),
		MaxAge:   seconds(get("max-age")),
		MaxReuse: atoi(get("max-reuse")),
	}
	switch it := get("idle-timeout-override"); it {
	case "", "disabled", "0":
	case "indefinite":
		oc.IdleTimeoutOverride = -1
	default:
		n, err := strconv.Atoi(it)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("idle-timeout-override %q: want disabled, indefinite or seconds", it)
		}
		oc.IdleTimeoutOverride = time.Duration(n) * time.Second
	}
	switch sm := strings.TrimSpace(get("source-mask")); sm {
	case "", "any", "any6", "0.0.0.0":
	default:
		a, err := netip.ParseAddr(sm)
		if err != nil {
			return nil, fmt.Errorf("source-mask %q is not an address mask", sm)
		}
		oc.SourceMask = a
	}
	return oc, nil
}
