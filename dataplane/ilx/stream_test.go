package ilx

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
)

// streamJS: upper-cases the server's answers; a client whose first line
// is "to B" is sent to member B (lbSelect before allow); "crash" ends the
// process; "dg KEY" answers what the data group /Common/dg has for KEY.
const streamJS = `
var f5 = require('f5-nodejs');
var plugin = new f5.ILXPlugin();
var dg = null;
plugin.on('initialized', function () { dg = plugin.getDataGroup('/Common/dg'); });
plugin.on('connect', function (flow) {
  var first = true, head = '';
  flow.client.on('data', function (d) {
    if (!first) { flow.server.write(d); return; }
    head += d.toString();
    var nl = head.indexOf('\n');
    if (nl < 0) return;
    first = false;
    var line = head.slice(0, nl);
    if (line === 'crash') { process.exit(3); }
    if (line.indexOf('dg ') === 0) {
      var v = dg.lookup(line.slice(3));
      flow.client.end('dg=' + (v === undefined ? 'none' : v) + ' type=' + dg.getType() + '\n');
      return;
    }
    if (line.indexOf('to ') === 0) { flow.lbSelect({member: line.slice(3)}); }
    flow.client.allow();
    flow.server.write(head);
  });
  flow.server.on('data', function (d) { flow.client.write(d.toString('latin1').toUpperCase(), 'latin1'); });
  flow.server.on('error', function () {});
});
plugin.start(new f5.ILXPluginOptions({handleClientOpen: true}));
`

// member answers "NAME:" and what it reads, until the client's EOF.
func member(t *testing.T, addr, name string) netip.AddrPort {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				io.WriteString(c, name+":")
				io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().(*net.TCPAddr).AddrPort()
}

// front is a listener whose connections go through sp, to def unless
// the extension chose a member.
func front(t *testing.T, sp *StreamProfile, def netip.AddrPort, results chan<- error) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.174.3.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				err := sp.Serve(c, FlowInfo{Virtual: "/Common/vs", Client: c.RemoteAddr().(*net.TCPAddr).AddrPort()}, func(ch Choice) (net.Conn, error) {
					to := def
					if ch.Member.IsValid() {
						to = ch.Member
					}
					return net.DialTimeout("tcp", to.String(), 2*time.Second)
				})
				if err != nil {
					c.(*net.TCPConn).SetLinger(0)
				}
				c.Close()
				select {
				case results <- err:
				default:
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// exchange sends msg, half-closes, and reads to EOF.
func exchange(t *testing.T, addr string, msg []byte) (string, error) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		c.Write(msg)
		c.(*net.TCPConn).CloseWrite()
	}()
	got, err := io.ReadAll(c)
	wg.Wait()
	return string(got), err
}

// TestStreaming: through a real node extension, the member's answer
// comes back upper-cased and the flow closes in order; the first line
// picks the member; 8 MiB each way arrive whole through the credit
// windows; a data group is read by ILXDatagroup and its change seen
// without a restart; an extension that exits resets its flow and, once
// started again, takes new ones.
func TestStreaming(t *testing.T) {
	needNode(t)
	m := newManager(t)
	a := member(t, "127.174.3.2:0", "a")
	b := member(t, "127.174.3.3:0", "b")
	dgs := []DataGroup{{Name: "/Common/dg", Type: "ip", Records: []Record{{Name: "10.0.0.0/8", Value: "ten"}, {Name: "10.1.0.0/16"}}}}
	ext := Extension{Name: "e", Dir: extension(t, streamJS), Mode: Single, MaxRestarts: 5, RestartInterval: time.Minute, DataGroups: dgs}
	m.Apply([]Plugin{{Name: "/Common/p", Extensions: []Extension{ext}}})
	sp := m.StreamProfile("/Common/ilxprof", "/Common/p")
	results := make(chan error, 1)
	addr := front(t, sp, a, results)
	eventually(t, "the extension starts its ILXPlugin", func() bool {
		_, err := m.pickStreaming("/Common/p")
		return err == nil
	})

	if got, err := exchange(t, addr, []byte("hello there\n")); err != nil || got != "A:HELLO THERE\n" {
		t.Fatalf("upper-cased answer: %q, %v (flow: %v)", got, err, <-results)
	}
	if err := <-results; err != nil {
		t.Fatalf("an orderly flow ended with %v", err)
	}
	if got, err := exchange(t, addr, []byte("to "+b.String()+"\nx")); err != nil || got != "B:TO "+strings.ToUpper(b.String())+"\nX" {
		t.Fatalf("member by first line: %q, %v", got, err)
	}
	<-results

	big := bytes.Repeat([]byte("abcdefghij"), 800<<10)
	big = append([]byte("bulk\n"), big...)
	got, err := exchange(t, addr, big)
	if err != nil || len(got) != len(big)+2 || got[:2] != "A:" || got[2:] != strings.ToUpper(string(big)) {
		t.Fatalf("8 MiB: %d bytes (want %d), %v", len(got), len(big)+2, err)
	}
	<-results

	for _, c := range []struct{ key, want string }{{"10.1.2.3", "true"}, {"10.2.0.1", "ten"}, {"11.0.0.1", "none"}} {
		if got, err := exchange(t, addr, []byte("dg "+c.key+"\n")); err != nil || got != "dg="+c.want+" type=1\n" {
			t.Fatalf("dg %s: %q, %v", c.key, got, err)
		}
		<-results
	}
	ext.DataGroups = []DataGroup{{Name: "/Common/dg", Type: "ip", Records: []Record{{Name: "11.0.0.0/8", Value: "eleven"}}}}
	m.Apply([]Plugin{{Name: "/Common/p", Extensions: []Extension{ext}}})
	eventually(t, "the changed data group reaches the extension", func() bool {
		got, _ := exchange(t, addr, []byte("dg 11.0.0.1\n"))
		<-results
		return got == "dg=eleven type=1\n"
	})
	st, _, _ := m.Stats("/Common/p")
	if st[0].Restarts != 0 || st[0].Flows < 6 {
		t.Fatalf("stats after the data group change: %+v", st[0])
	}

	// The extension exits mid-flow: the flow is reset, the process comes
	// back and serves again.
	_, err = exchange(t, addr, []byte("crash\n"))
	if ferr := <-results; !errors.Is(ferr, ErrDestroyed) {
		t.Fatalf("a flow whose extension exited: %v (client saw %v)", ferr, err)
	}
	eventually(t, "the extension serves again after its restart", func() bool {
		if _, err := m.pickStreaming("/Common/p"); err != nil {
			return false
		}
		got, _ := exchange(t, addr, []byte("again\n"))
		<-results
		return got == "A:AGAIN\n"
	})
}

// TestStreamingRefused: a plugin without an ILXPlugin, or none at all,
// refuses flows.
func TestStreamingRefused(t *testing.T) {
	needNode(t)
	m := newManager(t)
	m.Apply([]Plugin{{Name: "/Common/p", Extensions: []Extension{{Name: "e", Dir: extension(t, sampleJS), Mode: Single, MaxRestarts: 5, RestartInterval: time.Minute}}}})
	c1, c2 := net.Pipe()
	defer c1.Close()
	defer c2.Close()
	dial := func(Choice) (net.Conn, error) { return nil, fmt.Errorf("no dial expected") }
	if err := m.StreamProfile("x", "/Common/p").Serve(c1, FlowInfo{}, dial); !errors.Is(err, ErrNotStreaming) {
		t.Fatalf("no ILXPlugin: %v", err)
	}
	if err := m.StreamProfile("x", "/Common/q").Serve(c1, FlowInfo{}, dial); !errors.Is(err, ErrNoPlugin) {
		t.Fatalf("no plugin: %v", err)
	}
}

// relayJS relays both ways through the extension's handlers (ignoring
// write()'s return, as a careless extension does).
const relayJS = `
var f5 = require('f5-nodejs');
var plugin = new f5.ILXPlugin();
plugin.on('connect', function (flow) {
  flow.client.on('data', function (d) { flow.server.write(d); });
  flow.server.on('data', function (d) { flow.client.write(d); });
});
plugin.start();
`

// passJS leaves both directions to ltmd (handleClientData and
// handleServerData false) and only says hello to the client first.
const passJS = `
var f5 = require('f5-nodejs');
var plugin = new f5.ILXPlugin();
plugin.on('connect', function (flow) { flow.client.write('hi '); });
plugin.start({handleClientData: false, handleServerData: false});
`

// TestStreamingBackpressure: a client that sends as fast as it can to a
// member that reads nothing fills the credit windows and no more: ltmd
// holds at most a window (and a read) of the client's bytes unacknowledged
// and a few of the extension's queued, whatever the client has sent.
func TestStreamingBackpressure(t *testing.T) {
	needNode(t)
	m := newManager(t)
	ln, err := net.Listen("tcp", "127.174.3.4:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	held := make(chan net.Conn, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			held <- c // never read
		}
	}()
	m.Apply([]Plugin{{Name: "/Common/p", Extensions: []Extension{{Name: "e", Dir: extension(t, relayJS), Mode: Single, MaxRestarts: 5, RestartInterval: time.Minute}}}})
	sp := m.StreamProfile("x", "/Common/p")
	results := make(chan error, 1)
	addr := front(t, sp, ln.Addr().(*net.TCPAddr).AddrPort(), results)
	eventually(t, "the extension starts its ILXPlugin", func() bool {
		_, err := m.pickStreaming("/Common/p")
		return err == nil
	})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go func() {
		buf := bytes.Repeat([]byte("x"), 1<<20)
		c.SetWriteDeadline(time.Now().Add(10 * time.Second))
		for i := 0; i < 64; i++ {
			if _, err := c.Write(buf); err != nil {
				return
			}
		}
	}()
	var f *sflow
	eventually(t, "the flow is open", func() bool {
		p, _ := m.pickStreaming("/Common/p")
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, x := range p.flows {
			f = x
		}
		return f != nil
	})
	time.Sleep(1500 * time.Millisecond) // let the client fill what it can
	for i := range f.side {
		s := &f.side[i]
		s.mu.Lock()
		unacked, queued := s.unacked, s.outBytes
		s.mu.Unlock()
		if unacked > window+chunk || queued > 4*window {
			t.Fatalf("%s side: %d bytes unacknowledged, %d queued (window %d)", sideNames[i], unacked, queued, window)
		}
	}
	if s := &f.side[client_]; s.unacked < window {
		t.Fatalf("the client's window is not full: %d bytes unacknowledged", s.unacked)
	}
	// Both ends go: the flow ends (a client alone going leaves its
	// unsent bytes waiting for the member, as a plain flow's do until
	// its idle timeout).
	c.Close()
	(<-held).Close()
	select {
	case <-results:
	case <-time.After(10 * time.Second):
		t.Fatal("the flow did not end after its client and member went")
	}
}

// TestStreamingDirect: with handleClientData and handleServerData false
// the bytes go straight across, after what the extension wrote itself.
func TestStreamingDirect(t *testing.T) {
	needNode(t)
	m := newManager(t)
	a := member(t, "127.174.3.5:0", "a")
	m.Apply([]Plugin{{Name: "/Common/p", Extensions: []Extension{{Name: "e", Dir: extension(t, passJS), Mode: Single, MaxRestarts: 5, RestartInterval: time.Minute}}}})
	sp := m.StreamProfile("x", "/Common/p")
	results := make(chan error, 1)
	addr := front(t, sp, a, results)
	eventually(t, "the extension starts its ILXPlugin", func() bool {
		_, err := m.pickStreaming("/Common/p")
		return err == nil
	})
	got, err := exchange(t, addr, []byte("plain bytes"))
	if err != nil || !strings.HasPrefix(got, "hi ") || !strings.HasSuffix(got, "a:plain bytes") {
		t.Fatalf("direct flow: %q, %v", got, err)
	}
	if err := <-results; err != nil {
		t.Fatalf("direct flow ended with %v", err)
	}
}
