package config

// RateLimitMode is how a virtual server's rate-limit is counted: BIG-IP's
// rate-limit-mode with its rate-limit-src-mask and rate-limit-dst-mask.
// The zero value counts every connection of the virtual together
// (object).
type RateLimitMode struct {
	// Object keeps the budgets to this virtual (the object-* modes);
	// without it a source's (or destination's) budget is shared by
	// every virtual counted the same way (source, destination,
	// source-destination), each checking it against its own limit.
	Object bool
	// BySource and ByDest say which client addresses key a budget;
	// neither is the mode object.
	BySource, ByDest bool
	// SrcMask and DstMask are the prefix lengths the addresses are cut
	// to before they key a budget; 0 keeps the whole address (/32, /128).
	SrcMask, DstMask int
}

// ParseRateLimitMode maps rate-limit-mode's words; ok is false for a word
// it does not know.
func ParseRateLimitMode(s string) (m RateLimitMode, ok bool) {
	switch s {
	case "object", "":
		return RateLimitMode{Object: true}, true
	case "object-source":
		return RateLimitMode{Object: true, BySource: true}, true
	case "object-destination":
		return RateLimitMode{Object: true, ByDest: true}, true
	case "object-source-destination":
		return RateLimitMode{Object: true, BySource: true, ByDest: true}, true
	case "source":
		return RateLimitMode{BySource: true}, true
	case "destination":
		return RateLimitMode{ByDest: true}, true
	case "source-destination":
		return RateLimitMode{BySource: true, ByDest: true}, true
	}
	return RateLimitMode{}, false
}

// Keyed reports whether budgets are kept per address rather than one for
// the whole virtual.
func (m RateLimitMode) Keyed() bool { return m.BySource || m.ByDest }
