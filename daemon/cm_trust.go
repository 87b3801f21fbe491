package daemon

import (
	"bytes"
	"context"
	"crypto/subtle"
	"crypto/tls"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/openltm/openltm/cluster/trust"
)

// The trust exchange, BIG-IP's "add device to trust": the device holding
// the domain's CA asks the new device, at its management address and with
// its admin credentials, for a certificate request; the new device makes a
// key that never leaves it and answers with the request; the CA signs it,
// records the device as trusted in etcd, and hands the certificate and the
// CA certificate back. Both calls run over TLS (the new device's
// certificate is made at start and not checked: the credentials and the
// CA's signature carry the trust, as BIG-IP's prompt to accept the peer's
// certificate does).

const (
	trustRequestPath = "/openltm/trust/request"
	trustInstallPath = "/openltm/trust/install"
)

type trustRequest struct {
	Name string `json:"name"`
}

type trustRequestReply struct {
	CSR string `json:"csr"`
}

type trustInstall struct {
	Cert string `json:"cert"`
	CA   string `json:"ca"`
}

// serveTrust serves the trust exchange on addr until the returned stop.
func (h *clusterHook) serveTrust(addr string) (func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("management address %s: %w", addr, err)
	}
	d, err := trust.NewDomain("management")
	if err != nil {
		ln.Close()
		return nil, err
	}
	host, _, _ := net.SplitHostPort(addr)
	id, err := d.Issue("management", host)
	if err != nil {
		ln.Close()
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc(trustRequestPath, h.handleTrustRequest)
	mux.HandleFunc(trustInstallPath, h.handleTrustInstall)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second,
		TLSConfig: &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{{
			Certificate: [][]byte{id.Cert.Raw}, PrivateKey: id.Key, Leaf: id.Cert}}}}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}

func (h *clusterHook) authorized(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return false
	}
	if h.opts.Credentials == "" {
		http.Error(w, "this device accepts no trust requests: ltmd was started without --admin-credentials", http.StatusForbidden)
		return false
	}
	u, p, ok := r.BasicAuth()
	if !ok || subtle.ConstantTimeCompare([]byte(u+":"+p), []byte(h.opts.Credentials)) != 1 {
		http.Error(w, "authentication failed: wrong username or password", http.StatusUnauthorized)
		return false
	}
	return true
}

func (h *clusterHook) handleTrustRequest(w http.ResponseWriter, r *http.Request) {
	if !h.authorized(w, r) {
		return
	}
	var req trustRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&req); err != nil {
		http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
		return
	}
	me := h.e.selfName()
	if req.Name != me {
		http.Error(w, fmt.Sprintf("this device is named %s, not %s (rename it with \"mv cm device %s to %s\", or add it by its name)", me, req.Name, me, req.Name), http.StatusConflict)
		return
	}
	key, err := trust.NewKey()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	csr, err := trust.Request(me, key)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	kp, _ := trust.EncodeKey(key)
	h.mu.Lock()
	h.pendingKey = kp
	h.mu.Unlock()
	_ = json.NewEncoder(w).Encode(trustRequestReply{CSR: string(csr)})
}

func (h *clusterHook) handleTrustInstall(w http.ResponseWriter, r *http.Request) {
	if !h.authorized(w, r) {
		return
	}
	var in trustInstall
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&in); err != nil {
		http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	key := h.pendingKey
	h.mu.Unlock()
	if key == nil {
		http.Error(w, "no certificate request is pending on this device", http.StatusConflict)
		return
	}
	id, err := trust.LoadIdentity([]byte(in.Cert), key, []byte(in.CA))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if id.Device != h.e.selfName() {
		http.Error(w, "the certificate is for "+id.Device, http.StatusConflict)
		return
	}
	if _, err := id.WriteFiles(h.opts.Dir); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	h.mu.Lock()
	h.pendingKey = nil
	// Reconnect with the new certificate.
	c := h.conn
	if h.member == nil {
		h.conn = nil
	} else {
		c = nil
	}
	h.mu.Unlock()
	if c != nil {
		c.Close()
	}
	h.log.Info("added to the trust domain", "device", id.Device, "fingerprint", id.Fingerprint())
	h.poke()
	w.WriteHeader(http.StatusNoContent)
}

// addToTrust runs the CA side of the exchange with the device at addr
// (`modify cm trust-domain Root ca-devices add { ADDRESS } name N
// username U password P`).
func (h *clusterHook) addToTrust(ctx context.Context, addr, name, user, password string) (string, error) {
	d, err := h.domain()
	if err != nil {
		return "", fmt.Errorf("this device does not hold the trust domain's CA key (%v): add devices from the device that does", err)
	}
	h.mu.Lock()
	conn := h.conn
	connErr := h.connErr
	h.mu.Unlock()
	if conn == nil {
		return "", fmt.Errorf("Unable to add %s to the trust domain: the etcd cluster is not reachable (%v)", name, connErr)
	}
	target, err := h.peerAddress(addr)
	if err != nil {
		return "", err
	}
	if err := h.trustSelf(ctx, conn); err != nil {
		return "", err
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}}} //nolint:gosec // see the exchange's description
	defer client.CloseIdleConnections()
	post := func(path string, body, reply any) error {
		b, _ := json.Marshal(body)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, "https://"+target+path, bytes.NewReader(b))
		if err != nil {
			return err
		}
		req.SetBasicAuth(user, password)
		resp, err := client.Do(req)
		if err != nil {
			return fmt.Errorf("cannot reach device %s at %s: %w", name, target, err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("device %s at %s refused: %s", name, target, strings.TrimSpace(string(data)))
		}
		if reply != nil {
			return json.Unmarshal(data, reply)
		}
		return nil
	}
	var rr trustRequestReply
	if err := post(trustRequestPath, trustRequest{Name: name}, &rr); err != nil {
		return "", err
	}
	cert, err := conn.TrustDevice(ctx, d, []byte(rr.CSR))
	if err != nil {
		return "", err
	}
	if err := post(trustInstallPath, trustInstall{Cert: string(cert), CA: string(d.CertPEM())}, nil); err != nil {
		return "", err
	}
	block, _ := pem.Decode(cert)
	if block == nil {
		return "", nil
	}
	return trust.Fingerprint(block.Bytes), nil
}

// peerAddress is the management address of a peer named in ca-devices
// add: an IP address takes this device's management port, as every device
// of a domain serves the same one (BIG-IP's 443).
func (h *clusterHook) peerAddress(a string) (string, error) {
	if ap, err := netip.ParseAddrPort(a); err == nil {
		return ap.String(), nil
	}
	ip, err := netip.ParseAddr(a)
	if err != nil {
		return "", errors.New("ca-devices takes a device's management address (an IP address, or address:port)")
	}
	port := "443"
	if h.opts.ManagementAddress != "" {
		if _, p, err := net.SplitHostPort(h.opts.ManagementAddress); err == nil {
			port = p
		}
	}
	return net.JoinHostPort(ip.String(), port), nil
}
