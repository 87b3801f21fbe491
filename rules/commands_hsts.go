package rules

import (
	"strconv"
	"strings"

	"github.com/openltm/openltm/rules/tcl"
)

// HSTS is the Strict-Transport-Security an HTTP virtual adds to the
// answers that have none: the http profile's hsts block, or what
// HTTP::hsts made of it for one connection.
type HSTS struct {
	Enabled           bool // mode
	MaxAge            uint32
	IncludeSubdomains bool
	Preload           bool
}

// Value is the field's value ("" while disabled).
func (h HSTS) Value() string {
	if !h.Enabled {
		return ""
	}
	v := "max-age=" + strconv.FormatUint(uint64(h.MaxAge), 10)
	if h.IncludeSubdomains {
		v += "; includeSubDomains"
	}
	if h.Preload {
		v += "; preload"
	}
	return v
}

// Line is the field as the engine adds it, ending in CRLF; nil while
// disabled.
func (h HSTS) Line() []byte {
	if !h.Enabled {
		return nil
	}
	return []byte("Strict-Transport-Security: " + h.Value() + "\r\n")
}

// ParseHSTS reads a Line back (enabled says whether the mode adds it):
// the dataplane keeps the profile's settings as the line it adds.
func ParseHSTS(line []byte, enabled bool) HSTS {
	h := HSTS{Enabled: enabled, MaxAge: 16070400, IncludeSubdomains: true}
	v, ok := strings.CutPrefix(strings.TrimSpace(string(line)), "Strict-Transport-Security:")
	if !ok {
		return h
	}
	h.IncludeSubdomains = false
	for _, part := range strings.Split(v, ";") {
		part = strings.TrimSpace(part)
		switch {
		case strings.HasPrefix(part, "max-age="):
			if n, err := strconv.ParseUint(part[len("max-age="):], 10, 32); err == nil {
				h.MaxAge = uint32(n)
			}
		case part == "includeSubDomains":
			h.IncludeSubdomains = true
		case part == "preload":
			h.Preload = true
		}
	}
	return h
}

// HTTPHSTS is implemented by an HTTPConn whose answers get the http
// profile's hsts: HTTP::hsts reads and changes it for the connection.
type HTTPHSTS interface {
	HTTPHSTS() HSTS
	SetHTTPHSTS(HSTS)
}

// cmdHTTPHSTS is HTTP::hsts ?mode|maximum-age|include-subdomains|preload
// ?value??: without arguments the field's value this connection's
// answers get ("" while disabled); with a setting alone, that setting
// (enable or disable, or seconds) [M: F5 documents setting them only];
// with a value, the setting for the rest of the connection, over the
// profile's.
func cmdHTTPHSTS(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const usage = "HTTP::hsts ?mode|maximum-age|include-subdomains|preload ?value??"
	_, hc, err := httpConn(in, "HTTP::hsts")
	if err != nil {
		return tcl.Empty, err
	}
	c, ok := hc.(HTTPHSTS)
	if !ok {
		return tcl.Empty, tcl.Errorf("HTTP::hsts: not valid on this virtual server")
	}
	h := c.HTTPHSTS()
	if len(args) == 1 {
		return tcl.Str(h.Value()), nil
	}
	if len(args) > 3 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	var flag *bool
	switch args[1].String() {
	case "mode":
		flag = &h.Enabled
	case "include-subdomains":
		flag = &h.IncludeSubdomains
	case "preload":
		flag = &h.Preload
	case "maximum-age":
		if len(args) == 2 {
			return tcl.Int(int64(h.MaxAge)), nil
		}
		n, err := strconv.ParseUint(args[2].String(), 10, 32)
		if err != nil {
			return tcl.Empty, tcl.Errorf("HTTP::hsts maximum-age: bad value %q: expected a number of seconds", args[2].String())
		}
		h.MaxAge = uint32(n)
		c.SetHTTPHSTS(h)
		return tcl.Empty, nil
	default:
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	if len(args) == 2 {
		if *flag {
			return tcl.Str("enable"), nil
		}
		return tcl.Str("disable"), nil
	}
	switch v := args[2].String(); v {
	case "enable", "disable":
		*flag = v == "enable"
	default:
		return tcl.Empty, tcl.Errorf("HTTP::hsts %s: bad value %q: must be enable or disable", args[1].String(), v)
	}
	c.SetHTTPHSTS(h)
	return tcl.Empty, nil
}
