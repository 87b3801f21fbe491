package rules

import "testing"

// seedDataRule is the message-based seed's rule, which runs on every
// message in each direction.
const seedDataRule = `when CLIENT_DATA {
  TCP::release
  TCP::notify request
  TCP::collect
}
when SERVER_DATA {
  TCP::release
  TCP::notify response
  TCP::collect
}`

// quietConn is a connection whose data commands do nothing, so that a
// benchmark measures the interpreter alone.
type quietConn struct{ nopConn }

func (q *quietConn) Collect(s Side, length, skip int) error { return nil }
func (q *quietConn) Release(s Side, length int) error       { return nil }
func (q *quietConn) Notify(s Side, n NotifyKind) error      { return nil }

// BenchmarkSeedClientData is the interpretive cost of the message-based
// seed's CLIENT_DATA event per message.
func BenchmarkSeedClientData(b *testing.B) { benchQuietEvent(b, seedDataRule) }

// BenchmarkEmptyEvent is what running an event costs before the
// interpreter does anything (the budget, the clock, the handler lookup);
// subtract it from the other benchmarks to get the interpreter's share.
func BenchmarkEmptyEvent(b *testing.B) { benchQuietEvent(b, `when CLIENT_DATA { }`) }

// benchQuietEvent runs rule's CLIENT_DATA on a connection whose data
// commands do nothing.
func benchQuietEvent(b *testing.B, rule string) {
	benchEvent(b, &quietConn{nopConn{*newFakeConn()}}, rule, ClientData)
}

// benchEvent runs event ev of rule on one session of connection c.
func benchEvent(b *testing.B, c Conn, rule string, ev Event) {
	p := NewProgram(nil, mustCompile(b, "bench", rule))
	s := p.NewConnState(c)
	defer s.Release()
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Run(ev); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHTTPRequestEmptyRule is BenchmarkHTTPRequestRule's request
// with an empty HTTP_REQUEST: indexing and writing the head, running the
// event.
func BenchmarkHTTPRequestEmptyRule(b *testing.B) {
	benchHTTPRequest(b, `when HTTP_REQUEST { }`)
}
