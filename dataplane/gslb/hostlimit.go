package gslb

// SetServerMetrics records what a gtm server reports of itself (CPU,
// memory, throughput), which its resource limits are judged on; nil
// forgets it (the server no longer reports: its CPU and memory limits
// no longer apply, throughput is its virtual servers' again).
func (s *Server) SetServerMetrics(server string, m *HostMetrics) {
	if m != nil {
		c := *m
		m = &c
	}
	s.hostRT(server).metrics.Store(m)
	s.availChanged()
}

// hostOverLimit says which of a server's resource limits it is at, ""
// for none. Throughput and packets the server did not report itself are
// its virtual servers' together, as for a pool's limits.
func hostOverLimit(h *host) string {
	c := h.cfg
	hm := h.rt.metrics.Load()
	if hm != nil {
		if c.LimitCPUUsage > 0 && hm.CPUUsage >= c.LimitCPUUsage {
			return reasonHostCPU
		}
		if c.LimitMemAvail > 0 && hm.MemAvail >= 0 && hm.MemAvail <= c.LimitMemAvail {
			return reasonHostMem
		}
	}
	if c.LimitMaxBps == 0 && c.LimitMaxPps == 0 {
		return ""
	}
	bps, pps := int64(-1), int64(-1)
	if hm != nil {
		bps, pps = hm.Bps, hm.Pps
	}
	if bps < 0 || pps < 0 {
		var vb, vp int64
		for _, v := range h.vss {
			if m := v.rt.metrics.Load(); m != nil {
				vb, vp = vb+m.Bps, vp+m.PacketRate
			}
		}
		if bps < 0 {
			bps = vb
		}
		if pps < 0 {
			pps = vp
		}
	}
	if c.LimitMaxBps > 0 && bps >= c.LimitMaxBps {
		return reasonHostBps
	}
	if c.LimitMaxPps > 0 && pps >= c.LimitMaxPps {
		return reasonHostPps
	}
	return ""
}
