package objects

import "strings"

// checkAdapt refuses what BIG-IP refuses of content adaptation: a
// request-adapt or response-adapt profile whose internal-virtual names
// a virtual server that is not internal (its traffic would have nowhere
// to go), and an internal virtual server with a destination, since it
// listens nowhere [M: BIG-IP lists an internal virtual with destination
// 0.0.0.0:any, which is accepted].
func checkAdapt(s *Schema, c *Config, o *Object) error {
	switch o.Kind.Key() {
	case "ltm virtual":
		if v := o.Props["internal"]; v == nil || v.Str != "internal" {
			return nil
		}
		if d := o.Props["destination"]; d != nil && !anyDestination(d.Str) {
			return Invalid("The virtual server (%s) is an internal virtual server and cannot have a destination (%s).", o.Name, d.Str)
		}
	case "ltm profile request-adapt", "ltm profile response-adapt":
		v := o.Props["internal-virtual"]
		if v == nil || v.Str == "" || v.Str == "none" {
			return nil
		}
		vs := c.Lookup(s, []string{"ltm virtual"}, v.Str)
		if vs == nil {
			return nil // the reference check reports it
		}
		if iv := vs.Props["internal"]; iv == nil || iv.Str != "internal" {
			return Invalid("The %s profile (%s) names virtual server (%s) as its internal-virtual, which is not an internal virtual server.", strings.TrimPrefix(o.Kind.Key(), "ltm profile "), o.Name, vs.Name)
		}
	}
	return nil
}

// anyDestination reports whether d is the destination BIG-IP gives an
// internal virtual server: any address, any port.
func anyDestination(d string) bool {
	d = d[strings.LastIndexByte(d, '/')+1:]
	switch d {
	case "0.0.0.0:any", "0.0.0.0:0", "any:any", "any:0", "0.0.0.0.any", "::.any", "any6.any", "any6:any":
		return true
	}
	return false
}
