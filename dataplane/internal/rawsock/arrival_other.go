//go:build !linux

package rawsock

// ArrivalCmsgLen is the control-message room an arrival needs (none
// is read off Linux).
const ArrivalCmsgLen = 64

// SetArrival does nothing off Linux: the arrival interface is not read.
func SetArrival(int, bool) {}

// PktinfoIf is 0 off Linux: not known.
func PktinfoIf([]byte) int { return 0 }
