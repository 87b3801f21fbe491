package hoststat

import "runtime"

// Subsystem is one use the Go runtime makes of the memory it holds for
// ltmd: openltm's counterpart of BIG-IP's TMM subsystem memory. InUse is
// what it uses now, Held what it obtained from the host for it.
type Subsystem struct {
	Name        string
	InUse, Held uint64
}

// Subsystems splits runtime.MemStats by use, in the order the runtime
// documents them.
func Subsystems(m *runtime.MemStats) []Subsystem {
	return []Subsystem{
		{"heap", m.HeapInuse, m.HeapSys},
		{"stack", m.StackInuse, m.StackSys},
		{"mspan", m.MSpanInuse, m.MSpanSys},
		{"mcache", m.MCacheInuse, m.MCacheSys},
		{"profiling", m.BuckHashSys, m.BuckHashSys},
		{"gc-metadata", m.GCSys, m.GCSys},
		{"other", m.OtherSys, m.OtherSys},
	}
}

// ReadRuntime reads the Go runtime's memory now. It stops the world for
// a moment, as runtime.ReadMemStats does: a show, not a sampler, calls
// it.
func ReadRuntime() []Subsystem {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return Subsystems(&m)
}
