//go:build !linux

package rules

import "net/netip"

func routeLookup(dst netip.Addr) (routeMetrics, error) { return routeMetrics{}, nil }
func routeDelete(dst netip.Addr) error                 { return nil }
