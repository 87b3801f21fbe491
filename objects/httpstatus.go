package objects

import (
	"fmt"
	"strconv"
	"strings"
)

// StatusRange is one entry of an http profile's fallback-status-codes: a
// code (Lo == Hi) or an inclusive range of codes.
type StatusRange struct{ Lo, Hi int }

// ParseStatusCodes reads fallback-status-codes entries, each a three-digit
// status code (100 to 599) or a range of them, `502-504`; the error names
// the first entry that is neither, so that a profile is refused whole
// before any virtual uses it.
func ParseStatusCodes(list []string) ([]StatusRange, error) {
	out := make([]StatusRange, 0, len(list))
	for _, e := range list {
		lo, hi, isRange := strings.Cut(e, "-")
		if !isRange {
			hi = lo
		}
		l, err1 := statusCode(lo)
		h, err2 := statusCode(hi)
		if err1 != nil || err2 != nil || l > h {
			return nil, fmt.Errorf("fallback-status-codes %q: not a status code (100-599) or a range of them (500-599)", e)
		}
		out = append(out, StatusRange{l, h})
	}
	return out, nil
}

func statusCode(s string) (int, error) {
	if len(s) != 3 {
		return 0, strconv.ErrSyntax
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 100 || n > 599 {
		return 0, strconv.ErrRange
	}
	return n, nil
}
