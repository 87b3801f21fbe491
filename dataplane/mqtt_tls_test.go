package dataplane

import (
	"crypto/tls"
	"encoding/pem"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mqtt"
	"github.com/openltm/openltm/dataplane/mqtt/mqtttest"
	"github.com/openltm/openltm/dataplane/tlsprof"
)

// TestMQTTOverTLS: an mqtt virtual with client-ssl reads MQTT over the
// client's TLS (a rule rewrites the topics it reads), with and without
// rules, and with server-ssl toward a TLS broker; a malformed packet
// inside TLS is refused as in plaintext.
func TestMQTTOverTLS(t *testing.T) {
	t.Parallel()
	cert, key, roots := testCert(t, "mqtt.example")
	plain := startBroker(t, "127.112.1.10:1883", "plain")
	mcert, mkey, _ := testCert(t, "member.example")
	pair, err := tlsprof.Pair("member", mcert, mkey, nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.112.1.11:8883", &tls.Config{Certificates: []tls.Certificate{pair}})
	if err != nil {
		t.Fatal(err)
	}
	secure := mqtttest.Serve(ln, "secure")
	t.Cleanup(secure.Close)

	p, _ := newPlane(t)
	cfg := basic("127.112.1.1:8883", plain.Addr())
	delete(cfg.Virtuals, "/Common/vs")
	withPool(cfg, "/Common/secure", secure.Addr())
	mqttVirtual(t, cfg, "/Common/rw", "127.112.1.1:8883", "/Common/pool", `when MQTT_CLIENT_INGRESS {
		if {[MQTT::type] eq "PUBLISH"} { MQTT::topic "tls/[MQTT::topic]" }
	}`)
	mqttVirtual(t, cfg, "/Common/bare", "127.112.1.2:8883", "/Common/pool", "")
	mqttVirtual(t, cfg, "/Common/both", "127.112.1.3:8883", "/Common/secure", "")
	for _, n := range []string{"/Common/rw", "/Common/bare", "/Common/both"} {
		cfg.Virtuals[n].TLS = clientSSL(t, cert, key)
	}
	cfg.Virtuals["/Common/both"].TLS.Server = serverSSL(t)
	mustApply(t, p, cfg)

	dial := func(t *testing.T, vs, id string) *mqtttest.Client {
		t.Helper()
		c, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", vs, &tls.Config{ServerName: "mqtt.example", RootCAs: roots})
		if err != nil {
			t.Fatal(err)
		}
		cl, err := mqtttest.Start(c, mqtttest.Connect(id))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cl.Close() })
		if ack, err := cl.Expect(mqtt.CONNACK, 10*time.Second); err != nil || ack.ReturnCode != 0 {
			t.Fatalf("CONNACK: %v %+v", err, ack)
		}
		return cl
	}
	for _, tt := range []struct {
		name, vs, sub, pub string
		member             *mqtttest.Broker
	}{
		{"rule", "127.112.1.1:8883", "tls/room", "room", plain},
		{"no rule", "127.112.1.2:8883", "hall", "hall", plain},
		{"server-ssl", "127.112.1.3:8883", "deck", "deck", secure},
	} {
		t.Run(tt.name, func(t *testing.T) {
			id := strings.ReplaceAll(tt.name, " ", "-")
			sub := dial(t, tt.vs, "sub-"+id)
			subscribe(t, sub, tt.sub)
			pub := dial(t, tt.vs, "pub-"+id)
			if err := pub.Send(&mqtt.Packet{Type: mqtt.PUBLISH, Topic: tt.pub, Payload: []byte("over tls")}); err != nil {
				t.Fatal(err)
			}
			m, err := sub.Expect(mqtt.PUBLISH, 10*time.Second)
			if err != nil || m.Topic != tt.sub || string(m.Payload) != "over tls" {
				t.Fatalf("PUBLISH: %v %+v", err, m)
			}
			if !slices.Contains(tt.member.ClientIDs(), "pub-"+id) {
				t.Fatalf("member %s saw %v", tt.member.Name, tt.member.ClientIDs())
			}
		})
	}

	t.Run("malformed", func(t *testing.T) {
		before := p.ProfileStats(ProfileMQTT, "/Common/mqtt", []string{"/Common/bare"}).MQTT
		c, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", "127.112.1.2:8883", &tls.Config{ServerName: "mqtt.example", RootCAs: roots})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.Write([]byte{0x30, 0x02, 0x00}) // a PUBLISH before any CONNECT
		c.Write([]byte{0x05})
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if n, err := c.Read(make([]byte, 16)); err == nil {
			t.Fatalf("read %d bytes, want the connection ended", n)
		}
		eventually(t, "the reset counted", func() bool {
			now := p.ProfileStats(ProfileMQTT, "/Common/mqtt", []string{"/Common/bare"}).MQTT
			return now.Malformed-before.Malformed == 1
		})
	})
}

// TestMQTTMosquittoTLS: mosquitto_pub and mosquitto_sub over client-ssl
// with --cafile, 3.1.1 and 5.0.
func TestMQTTMosquittoTLS(t *testing.T) {
	t.Parallel()
	pubPath, err1 := exec.LookPath("mosquitto_pub")
	subPath, err2 := exec.LookPath("mosquitto_sub")
	if err1 != nil || err2 != nil {
		t.Skip("mosquitto_pub and mosquitto_sub are not installed (Debian package mosquitto-clients)")
	}
	cert, key, _ := testCert(t, "mqtt.example")
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certs[0].Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	a := startBroker(t, "127.112.2.10:1883", "member-a")
	p, _ := newPlane(t)
	cfg := basic("127.112.2.1:8883", a.Addr())
	delete(cfg.Virtuals, "/Common/vs")
	mqttVirtual(t, cfg, "/Common/m", "127.112.2.1:8883", "/Common/pool", refuseMallory)
	cfg.Virtuals["/Common/m"].TLS = clientSSL(t, cert, key)
	mustApply(t, p, cfg)
	// --insecure: the certificate names mqtt.example, not the address;
	// the chain is still checked against the CA file.
	tlsArgs := []string{"-h", "127.112.2.1", "-p", "8883", "--cafile", ca, "--insecure"}
	for _, v := range []string{"mqttv311", "mqttv5"} {
		t.Run(v, func(t *testing.T) { mosquittoExchange(t, pubPath, subPath, tlsArgs, v, "s/"+v, "secure "+v, a) })
	}
}
