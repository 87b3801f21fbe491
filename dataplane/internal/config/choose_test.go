package config

import (
	"crypto/tls"
	"errors"
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/tlsprof"
)

// TestChoose checks what SSL::profile accepts: a profile of the running
// configuration (a name without a folder is in /Common), of a side the
// virtual has a profile on, that built; and that With swaps only that
// side.
func TestChoose(t *testing.T) {
	srvB := &tlsprof.Built{}
	cliB := &tls.Config{}
	choosable := map[string]*Choosable{
		"/Common/serverssl-b": {Server: true, Tag: 7, TLS: &TLS{Server: srvB, ServerProfile: "/Common/serverssl-b"}},
		"/Common/clientssl-b": {TLS: &TLS{Client: cliB, ClientProfiles: []string{"/Common/clientssl-b"}}},
		"/Common/broken":      {Server: true, Err: errors.New("key does not match")},
	}
	both := &TLS{Client: &tls.Config{}, ClientProfiles: []string{"/Common/clientssl"}, Server: &tlsprof.Built{}, ServerProfile: "/Common/serverssl", Choosable: choosable}
	clientOnly := &TLS{Client: &tls.Config{}, ClientProfiles: []string{"/Common/clientssl"}, Choosable: choosable}
	for _, tc := range []struct {
		name string
		t    *TLS
		arg  string
		err  string
	}{
		{"server", both, "/Common/serverssl-b", ""},
		{"relative", both, "serverssl-b", ""},
		{"client", both, "clientssl-b", ""},
		{"unknown", both, "/Common/nope", "no such client-ssl or server-ssl profile"},
		{"other folder", both, "/Other/serverssl-b", "no such"},
		{"did not build", both, "/Common/broken", "key does not match"},
		{"no server-ssl", clientOnly, "serverssl-b", "is a server-ssl profile and the virtual server has none"},
		{"no rule chooses", &TLS{Server: &tlsprof.Built{}}, "serverssl-b", "no client-ssl or server-ssl profile"},
		{"no TLS", nil, "serverssl-b", "no client-ssl or server-ssl profile"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := tc.t.Choose(tc.arg)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			n := tc.t.With(c)
			if c.Server {
				if n.Server != srvB || n.ServerProfile != "/Common/serverssl-b" || n.Client != tc.t.Client {
					t.Errorf("With server-ssl: server %s, client changed %v", n.ServerProfile, n.Client != tc.t.Client)
				}
			} else if n.Client != cliB || n.Server != tc.t.Server || n.ClientProfiles[0] != "/Common/clientssl-b" {
				t.Errorf("With client-ssl: client %v, server changed %v", n.ClientProfiles, n.Server != tc.t.Server)
			}
			if tc.t.ServerProfile != "/Common/serverssl" || tc.t.ClientProfiles[0] != "/Common/clientssl" {
				t.Error("With changed the virtual's TLS")
			}
		})
	}
}
