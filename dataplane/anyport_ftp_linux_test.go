//go:build linux

package dataplane

import (
	"bytes"
	"net/netip"
	"testing"

	"github.com/openltm/openltm/dataplane/ftpalg"
)

// TestAnyPortFTP: an ftp virtual on every port of 127.239.1.1 carries
// passive (PASV, EPSV) and active (PORT, EPRT) transfers on two control
// ports, each to the member (at port any) on the same port: the passive
// data listeners the gateway opens on the virtual's address are passed
// over by the steering, which takes every other port of the address,
// and given back once they accepted.
func TestAnyPortFTP(t *testing.T) {
	if !steerNetns(t) {
		return
	}
	file := bytes.Repeat([]byte("openltm ftp on every port\n"), 10000)
	members := map[string]*ftpMember{
		"30021": startFTPMember(t, "127.239.1.11:30021", file),
		"30022": startFTPMember(t, "127.239.1.11:30022", file),
	}
	p, _ := loggedPlane(t)
	cfg := basic("127.239.1.1:0", "127.239.1.11:0")
	cfg.Virtuals["/Common/vs"].FTP = &ftpalg.Options{Profile: "/Common/ftp", DataPort: 20, TranslateExtended: true}
	mustApply(t, p, cfg)
	if why := AnyPortUnsupported(cfg.Virtuals["/Common/vs"]); why != "" {
		t.Fatalf("refused: %s", why)
	}
	for _, port := range []string{"30021", "30022"} {
		for _, mode := range []string{"PASV", "EPSV", "PORT", "EPRT"} {
			m := members[port]
			ftpOnce(t, m, ap("127.239.1.1:"+port), mode, file, "the virtual's address")
		}
	}
	// The data ports were given back: only the control ports' flows'
	// entries ever were in the steering beside the virtual's.
	p.mu.Lock()
	s := p.steer
	p.mu.Unlock()
	if s == nil {
		t.Fatal("no steering")
	}
	if n := s.PassedCount(); n != 0 {
		t.Errorf("%d data ports still passed over after the transfers", n)
	}
}

// ftpOnce runs one transfer of file in mode through the ftp virtual vs
// to the member m: the file arrives whole, the data connection is with
// vs's address (want names it), and m is sent exactly one data command.
func ftpOnce(t *testing.T, m *ftpMember, vs netip.AddrPort, mode string, file []byte, want string) {
	t.Helper()
	m.mu.Lock()
	m.cmds = nil
	m.mu.Unlock()
	cl := ftpClient(t, vs.String())
	got, peer := transfer(t, cl, vs, mode, false, nil)
	if !bytes.Equal(got, file) {
		t.Errorf("%v, %s: %d bytes arrived, want %d", vs, mode, len(got), len(file))
	}
	if peer.Addr() != vs.Addr() {
		t.Errorf("%v, %s: the data connection was with %v, not %s", vs, mode, peer, want)
	}
	cl.PrintfLine("QUIT")
	cl.ReadResponse(221)
	cl.Close()
	m.mu.Lock()
	cmds := m.cmds
	m.mu.Unlock()
	if len(cmds) != 1 {
		t.Errorf("%v, %s: the member was sent %v, want one data command", vs, mode, cmds)
	}
}
