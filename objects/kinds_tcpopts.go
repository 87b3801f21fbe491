package objects

import "strconv"

// bounded sets an integer property's range: a value outside it is
// refused where it is read.
func bounded(p *Prop, lo, hi int64) *Prop {
	p.Min, p.Max = lo, hi
	return p
}

// validToS reports whether s is a value of ip-tos-to-client or
// ip-tos-to-server (a pool's, a profile's): pass-through, mimic or a ToS
// byte 0-255.
func validToS(s string) bool {
	if s == "pass-through" || s == "mimic" {
		return true
	}
	n, err := strconv.Atoi(s)
	return err == nil && n >= 0 && n <= 255 && strconv.Itoa(n) == s
}
