package objects

import "math"

// u32 bounds an integer property as BIG-IP bounds its unsigned 32-bit
// ones (a pool's queue-depth-limit and queue-time-limit): a negative or
// larger value is refused where it is typed, naming the property.
func u32(p *Prop) *Prop {
	p.Max = math.MaxUint32
	return p
}
