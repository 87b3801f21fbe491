package rules

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/openltm/openltm/rules/tcl"
)

// fakeConn records what rules ask of a connection, in order.
type fakeConn struct {
	addrs   [4]netip.AddrPort
	payload [2][]byte
	calls   []string
	decided []Decision
	members map[string][]netip.AddrPort
	// failPool makes Decide refuse a pool name, like an unknown pool;
	// panicPool makes it panic, like a bug in the dataplane's side.
	failPool, panicPool string
}

func newFakeConn() *fakeConn {
	return &fakeConn{
		addrs: [4]netip.AddrPort{
			netip.MustParseAddrPort("127.0.0.9:40001"),
			netip.MustParseAddrPort("127.0.0.43:10100"),
			netip.MustParseAddrPort("127.0.0.43:40001"),
			netip.MustParseAddrPort("127.0.0.34:9000"),
		},
		members: map[string][]netip.AddrPort{
			"test_pool": {netip.MustParseAddrPort("127.0.0.34:9000"), netip.MustParseAddrPort("127.0.0.34:9001")},
		},
	}
}

func (f *fakeConn) record(format string, args ...any) {
	f.calls = append(f.calls, fmt.Sprintf(format, args...))
}

func (f *fakeConn) Addr(e Endpoint) netip.AddrPort { return f.addrs[e] }
func (f *fakeConn) Protocol() int                  { return 6 }
func (f *fakeConn) Decide(d Decision) error {
	if f.failPool != "" && d.Pool == f.failPool {
		return fmt.Errorf("no such pool: %s", d.Pool)
	}
	if f.panicPool != "" && d.Pool == f.panicPool {
		panic("fake dataplane bug in " + d.Pool)
	}
	f.decided = append(f.decided, d)
	switch {
	case d.Pool != "" && d.Addr.IsValid():
		f.record("%s %s %s", d.Kind, d.Pool, d.Addr)
	case d.Pool != "":
		f.record("%s %s", d.Kind, d.Pool)
	case d.Addr.IsValid():
		f.record("%s %s", d.Kind, d.Addr)
	case d.Mode != "":
		f.record("%s %s", d.Kind, d.Mode)
	default:
		f.record("%s", d.Kind)
	}
	return nil
}
func (f *fakeConn) Collect(s Side, length, skip int) error {
	f.record("collect %s %d %d", s, length, skip)
	return nil
}
func (f *fakeConn) Release(s Side, length int) error {
	f.record("release %s %d", s, length)
	return nil
}
func (f *fakeConn) Payload(s Side) []byte { return f.payload[s] }
func (f *fakeConn) ReplacePayload(s Side, off, n int, data []byte) error {
	p := f.payload[s]
	end := min(off+n, len(p))
	f.payload[s] = append(append(append([]byte(nil), p[:off]...), data...), p[end:]...)
	return nil
}
func (f *fakeConn) Respond(s Side, data []byte) error {
	f.record("respond %s %q", s, data)
	return nil
}
func (f *fakeConn) Close(s Side) error { f.record("close %s", s); return nil }
func (f *fakeConn) Notify(s Side, n NotifyKind) error {
	f.record("notify %s %d", s, n)
	return nil
}
func (f *fakeConn) LBSelect() (string, netip.AddrPort, error) {
	return "test_pool", f.members["test_pool"][1], nil
}
func (f *fakeConn) LBServer() (string, netip.AddrPort, bool) {
	return "test_pool", f.addrs[EndServer], true
}
func (f *fakeConn) MemberStatus(pool string, m netip.AddrPort) (string, error) {
	if m.Port() == 9001 {
		return "down", nil
	}
	return "up", nil
}
func (f *fakeConn) ActiveMembers(pool string) ([]netip.AddrPort, error) {
	m, ok := f.members[pool]
	if !ok {
		return nil, fmt.Errorf("no such pool %q", pool)
	}
	return m, nil
}

// LBQueue: test_pool queues (depth limit 5, 300 ms) and holds 2.
func (f *fakeConn) LBQueue(pool string) (QueueInfo, error) {
	switch pool {
	case "", "test_pool":
		return QueueInfo{On: true, DepthLimit: 5, TimeLimit: 300, Depth: 2}, nil
	case "other":
		return QueueInfo{}, nil
	}
	return QueueInfo{}, fmt.Errorf("no such pool %q", pool)
}

func (f *fakeConn) String() string { return strings.Join(f.calls, "; ") }

// logSink collects log lines.
type logSink struct{ lines []string }

func (l *logSink) log(facility, line string) { l.lines = append(l.lines, facility+" "+line) }

func tclStr(s string) tcl.Value { return tcl.Str(s) }
