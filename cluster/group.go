package cluster

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/openltm/openltm/cluster/trust"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// GroupType is a device group's type, as `cm device-group type` spells it.
type GroupType string

// The two device group types BIG-IP has.
const (
	SyncFailover GroupType = "sync-failover"
	SyncOnly     GroupType = "sync-only"
)

// GroupDef is a device group's definition (`cm device-group`), kept in etcd
// so that every member agrees on who belongs.
type GroupDef struct {
	Name            string    `json:"name"`
	Type            GroupType `json:"type"`
	AutoSync        bool      `json:"auto-sync"`
	NetworkFailover bool      `json:"network-failover"`
	Devices         []string  `json:"devices"`
}

// TrustedDevice is a device of the trust domain, recorded in etcd when it is
// added (`modify cm trust-domain Root ca-devices add { NAME }`).
type TrustedDevice struct {
	Name        string    `json:"name"`
	Fingerprint string    `json:"fingerprint"`
	Added       time.Time `json:"added"`
}

func trustKey(device string) string    { return keyPrefix + "trust/devices/" + device }
func memberPrefix(group string) string { return groupPrefix(group) + "m/" }
func defKey(group string) string       { return memberPrefix(group) + "def" }

// TrustDevice adds a device to the trust domain: it signs the certificate
// request the device made (its key stays on the device), records the device
// and its certificate's fingerprint in etcd, and returns the certificate to
// hand back to the device. Only a device holding the domain's CA key can do
// this.
func (c *Conn) TrustDevice(ctx context.Context, d *trust.Domain, csrPEM []byte) ([]byte, error) {
	certPEM, err := d.Sign(csrPEM)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(certPEM)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, err
	}
	if err := c.RecordTrusted(ctx, cert); err != nil {
		return nil, err
	}
	return certPEM, nil
}

// RecordTrusted records an already issued device certificate as trusted
// (the CA holder's own identity, for one).
func (c *Conn) RecordTrusted(ctx context.Context, cert *x509.Certificate) error {
	td := TrustedDevice{Name: cert.Subject.CommonName, Fingerprint: trust.Fingerprint(cert.Raw), Added: time.Now()}
	if err := trust.ValidDeviceName(td.Name); err != nil {
		return err
	}
	data, _ := json.Marshal(td)
	rctx, cancel := c.reqCtx(ctx)
	_, err := c.cli.Put(rctx, trustKey(td.Name), string(data))
	cancel()
	return c.note("add device "+td.Name+" to the trust domain", err)
}

// RemoveTrusted takes a device out of the trust domain
// (`modify cm trust-domain Root ca-devices delete { NAME }`): it can no
// longer join device groups. Removing it from the etcd cluster's view of
// valid certificates takes a CRL (etcd --client-crl-file).
func (c *Conn) RemoveTrusted(ctx context.Context, device string) error {
	rctx, cancel := c.reqCtx(ctx)
	resp, err := c.cli.Delete(rctx, trustKey(device))
	cancel()
	if err := c.note("remove device "+device+" from the trust domain", err); err != nil {
		return err
	}
	if resp.Deleted == 0 {
		return fmt.Errorf("Device %s is not in the trust domain", device)
	}
	return nil
}

// TrustedDevices lists the trust domain's devices.
func (c *Conn) TrustedDevices(ctx context.Context) ([]TrustedDevice, error) {
	rctx, cancel := c.reqCtx(ctx)
	resp, err := c.cli.Get(rctx, keyPrefix+"trust/devices/", clientv3.WithPrefix())
	cancel()
	if err := c.note("read the trust domain", err); err != nil {
		return nil, err
	}
	var out []TrustedDevice
	for _, kv := range resp.Kvs {
		var td TrustedDevice
		if err := json.Unmarshal(kv.Value, &td); err != nil {
			return nil, fmt.Errorf("trust domain record %s: %w", kv.Key, err)
		}
		out = append(out, td)
	}
	return out, nil
}

// trusted checks that device is in the trust domain; with an identity, that
// its certificate is the one recorded.
func (c *Conn) trusted(ctx context.Context, device string, id *trust.Identity) error {
	rctx, cancel := c.reqCtx(ctx)
	resp, err := c.cli.Get(rctx, trustKey(device))
	cancel()
	if err := c.note("read the trust domain", err); err != nil {
		return err
	}
	if len(resp.Kvs) == 0 {
		return &NotTrustedError{Device: device, Reason: "it was never added to the trust domain, or was removed"}
	}
	if id == nil {
		return nil
	}
	var td TrustedDevice
	if err := json.Unmarshal(resp.Kvs[0].Value, &td); err != nil {
		return err
	}
	if td.Fingerprint != id.Fingerprint() {
		return &NotTrustedError{Device: device, Reason: "its certificate is not the one the trust domain issued to it (fingerprint " + td.Fingerprint + ")"}
	}
	return nil
}

func (def *GroupDef) validate() error {
	if def.Name == "" {
		return errors.New("device group name is empty")
	}
	if err := trust.ValidDeviceName(def.Name); err != nil {
		return fmt.Errorf("device group name %q: use letters, digits, '.', '-' or '_'", def.Name)
	}
	switch def.Type {
	case "":
		def.Type = SyncOnly // BIG-IP's default
	case SyncFailover, SyncOnly:
	default:
		return fmt.Errorf("device group %s: type %q is not valid (sync-failover or sync-only)", def.Name, def.Type)
	}
	seen := map[string]bool{}
	for _, d := range def.Devices {
		if seen[d] {
			return fmt.Errorf("device group %s: device %s is listed twice", def.Name, d)
		}
		seen[d] = true
	}
	return nil
}

// CreateGroup creates a device group (`create cm device-group`). Every
// listed device must be in the trust domain.
func (c *Conn) CreateGroup(ctx context.Context, def GroupDef) error {
	if err := def.validate(); err != nil {
		return err
	}
	for _, d := range def.Devices {
		if err := c.trusted(ctx, d, nil); err != nil {
			return err
		}
	}
	data, _ := json.Marshal(def)
	rctx, cancel := c.reqCtx(ctx)
	resp, err := c.cli.Txn(rctx).
		If(clientv3.Compare(clientv3.CreateRevision(defKey(def.Name)), "=", 0)).
		Then(clientv3.OpPut(defKey(def.Name), string(data))).Commit()
	cancel()
	if err := c.note("create device group "+def.Name, err); err != nil {
		return err
	}
	if !resp.Succeeded {
		return fmt.Errorf("The requested device group (/Common/%s) already exists in partition Common.", def.Name)
	}
	return nil
}

// Groups lists every device group of the etcd cluster, for a device to
// find the group it was added to (BIG-IP devices learn of groups that list
// them through their trust domain).
func (c *Conn) Groups(ctx context.Context) ([]GroupDef, error) {
	// Keys only: the groups' configuration texts are under the same
	// prefix.
	rctx, cancel := c.reqCtx(ctx)
	resp, err := c.cli.Get(rctx, keyPrefix+"groups/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	cancel()
	if err := c.note("read the device groups", err); err != nil {
		return nil, err
	}
	var out []GroupDef
	for _, kv := range resp.Kvs {
		rest, ok := strings.CutPrefix(string(kv.Key), keyPrefix+"groups/")
		name, ok2 := strings.CutSuffix(rest, "/m/def")
		if !ok || !ok2 || strings.Contains(name, "/") {
			continue
		}
		def, err := c.Group(ctx, name)
		if err != nil {
			continue // deleted meanwhile
		}
		out = append(out, def)
	}
	return out, nil
}

// Group reads a device group's definition.
func (c *Conn) Group(ctx context.Context, name string) (GroupDef, error) {
	def, _, err := c.group(ctx, name)
	return def, err
}

func (c *Conn) group(ctx context.Context, name string) (GroupDef, int64, error) {
	var def GroupDef
	rctx, cancel := c.reqCtx(ctx)
	resp, err := c.cli.Get(rctx, defKey(name))
	cancel()
	if err := c.note("read device group "+name, err); err != nil {
		return def, 0, err
	}
	if len(resp.Kvs) == 0 {
		return def, 0, fmt.Errorf("The requested device group (/Common/%s) was not found.", name)
	}
	if err := json.Unmarshal(resp.Kvs[0].Value, &def); err != nil {
		return def, 0, fmt.Errorf("device group %s: %w", name, err)
	}
	return def, resp.Kvs[0].ModRevision, nil
}

// ModifyGroup changes a device group's definition
// (`modify cm device-group NAME ...`) with fn, in a transaction conditioned
// on the definition fn saw; devices added must be trusted.
func (c *Conn) ModifyGroup(ctx context.Context, name string, fn func(*GroupDef) error) error {
	for try := 0; try < 10; try++ {
		def, rev, err := c.group(ctx, name)
		if err != nil {
			return err
		}
		before := slices.Clone(def.Devices)
		if err := fn(&def); err != nil {
			return err
		}
		def.Name = name
		if err := def.validate(); err != nil {
			return err
		}
		for _, d := range def.Devices {
			if !slices.Contains(before, d) {
				if err := c.trusted(ctx, d, nil); err != nil {
					return err
				}
			}
		}
		data, _ := json.Marshal(def)
		rctx, cancel := c.reqCtx(ctx)
		resp, err := c.cli.Txn(rctx).
			If(clientv3.Compare(clientv3.ModRevision(defKey(name)), "=", rev)).
			Then(clientv3.OpPut(defKey(name), string(data))).Commit()
		cancel()
		if err := c.note("modify device group "+name, err); err != nil {
			return err
		}
		if resp.Succeeded {
			return nil
		}
	}
	return fmt.Errorf("device group %s is being modified by other devices; try again", name)
}

// DeleteGroup deletes a device group with its configuration history.
func (c *Conn) DeleteGroup(ctx context.Context, name string) error {
	rctx, cancel := c.reqCtx(ctx)
	resp, err := c.cli.Delete(rctx, groupPrefix(name), clientv3.WithPrefix())
	cancel()
	if err := c.note("delete device group "+name, err); err != nil {
		return err
	}
	if resp.Deleted == 0 {
		return fmt.Errorf("The requested device group (/Common/%s) was not found.", name)
	}
	return nil
}
