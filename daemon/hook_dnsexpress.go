package daemon

import (
	"context"
	"encoding/base64"
	"io"
	"net/netip"
	"strconv"
	"strings"
	"sync"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/daemon/render"
	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/dnsexpress"
	"github.com/openltm/openltm/dataplane/gslb"
	"github.com/openltm/openltm/objects"
)

// The DNS Express kinds (dataplane/dnsexpress).
var (
	dnsZone       = schema.MustKind("ltm dns zone")
	dnsNameserver = schema.MustKind("ltm dns nameserver")
	dnsTSIGKey    = schema.MustKind("ltm dns tsig-key")
)

// expressHook keeps the DNS Express store's zones those of the committed
// ltm dns zone objects.
type expressHook struct {
	e *Engine
	x *dnsexpress.Store

	mu      sync.Mutex
	cur     []dnsexpress.ZoneConfig
	stopped bool
}

// AttachDNSExpress makes x follow every commit's ltm dns zone objects,
// has g's listeners (and p's dns-profile virtuals, through g) answer
// from it and p's dns-profile virtuals hand it their NOTIFYs, and
// answers show ltm dns zone. The returned function stops all of it.
func (e *Engine) AttachDNSExpress(x *dnsexpress.Store, g *gslb.Server, p *dataplane.Plane) (stop func(), err error) {
	h := &expressHook{e: e, x: x}
	if err := e.AddHook(h); err != nil {
		return nil, err
	}
	g.SetExpress(x)
	if p != nil {
		p.SetDNSExpress(x)
	}
	e.RegisterRuntime(expressCommands(e, x))
	return func() {
		g.SetExpress(nil)
		if p != nil {
			p.SetDNSExpress(nil)
		}
		h.mu.Lock()
		h.stopped = true
		h.mu.Unlock()
		x.Close()
	}, nil
}

// Prepare implements Hook: the zones as the store acts on them. A zone
// whose settings cannot be acted on (a name that is no domain, a
// nameserver address that is no address, a key whose secret is not
// base64) is refused when a change brings it, and left out with a
// warning when it was there before or comes from a loaded file.
func (h *expressHook) Prepare(old, cfg *objects.Config, opts CommitOptions) (Change, error) {
	for _, k := range cfg.Of(dnsTSIGKey) {
		secret := dnsTSIGKey.MustProp("secret").Effective(cfg, k)
		if _, err := base64.StdEncoding.DecodeString(secret); err != nil && secret != "none" && !opts.Lenient &&
			(old == nil || old.Get(dnsTSIGKey, k.Name) == nil || dnsTSIGKey.MustProp("secret").Effective(old, old.Get(dnsTSIGKey, k.Name)) != secret) {
			return nil, objects.Invalid("ltm dns tsig-key %s: the secret is not base64", k.Name)
		}
	}
	var zones []dnsexpress.ZoneConfig
	for _, o := range cfg.Of(dnsZone) {
		z, err := expressZone(cfg, o)
		if err != nil {
			if opts.Lenient || (old != nil && old.Get(dnsZone, o.Name) != nil && sameExpressZone(old, cfg, o)) {
				if opts.Warn != nil {
					opts.Warn(err.Error() + "; kept, and not transferred")
				}
				continue
			}
			return nil, err
		}
		zones = append(zones, z)
	}
	return &expressChange{h: h, zones: zones}, nil
}

// sameExpressZone reports whether o's settings are those old had, so
// that a zone broken by an earlier file does not block other changes.
func sameExpressZone(old, cfg *objects.Config, o *objects.Object) bool {
	a, errA := expressZone(old, old.Get(dnsZone, o.Name))
	b, errB := expressZone(cfg, o)
	return errA != nil && errB != nil && errA.Error() == errB.Error() && a.Name == b.Name
}

// expressZone translates one ltm dns zone.
func expressZone(cfg *objects.Config, o *objects.Object) (dnsexpress.ZoneConfig, error) {
	e := func(k *objects.Kind, o *objects.Object, name string) string {
		return k.MustProp(name).Effective(cfg, o)
	}
	base := o.Name[strings.LastIndexByte(o.Name, '/')+1:]
	name := strings.ToLower(dns.Fqdn(base))
	if _, ok := dns.IsDomainName(name); !ok || strings.Contains(base, " ") {
		return dnsexpress.ZoneConfig{}, objects.Invalid("ltm dns zone %s: the name is not a DNS zone name", o.Name)
	}
	z := dnsexpress.ZoneConfig{
		Name:           name,
		Enabled:        e(dnsZone, o, "dns-express-enabled") == "yes",
		NotifyAction:   e(dnsZone, o, "dns-express-notify-action"),
		VerifyNotify:   e(dnsZone, o, "dns-express-notify-tsig-verify") == "yes",
		ResponsePolicy: e(dnsZone, o, "response-policy") == "yes",
	}
	for _, a := range cfg.Effective(o, "dns-express-allow-notify").List {
		ip, err := netip.ParseAddr(a)
		if err != nil {
			return z, objects.Invalid("ltm dns zone %s: dns-express-allow-notify %q is not an IP address", o.Name, a)
		}
		z.AllowNotify = append(z.AllowNotify, ip.Unmap())
	}
	var nsKey string
	if ns := e(dnsZone, o, "dns-express-server"); ns != "" && ns != "none" {
		n, ap, err := expressNameserver(cfg, ns)
		if err != nil {
			return z, err
		}
		z.Server = ap
		nsKey = e(dnsNameserver, n, "tsig-key")
	}
	// The zone's server-tsig-key, else its nameserver's [M].
	key := e(dnsZone, o, "server-tsig-key")
	if key == "" || key == "none" {
		key = nsKey
	}
	var err error
	if z.Key, err = expressKey(cfg, key); err != nil {
		return z, err
	}
	// transfer-clients: the secondaries a process-xfr listener answers,
	// each signed with its nameserver's tsig-key.
	for _, ns := range cfg.Effective(o, "transfer-clients").List {
		n, ap, err := expressNameserver(cfg, ns)
		if err != nil {
			return z, err
		}
		k, err := expressKey(cfg, e(dnsNameserver, n, "tsig-key"))
		if err != nil {
			return z, err
		}
		z.TransferClients = append(z.TransferClients, dnsexpress.Client{Addr: ap.Addr(), Port: ap.Port(), Key: k})
	}
	return z, nil
}

// expressNameserver is the ltm dns nameserver of that name and the
// address and port it is reached at (a zone's server, a transfer client).
func expressNameserver(cfg *objects.Config, name string) (*objects.Object, netip.AddrPort, error) {
	n := cfg.Lookup(schema, []string{dnsNameserver.Key()}, objects.FullPath("/Common", name))
	if n == nil {
		return nil, netip.AddrPort{}, objects.NotFound(dnsNameserver, name)
	}
	addr := dnsNameserver.MustProp("address").Effective(cfg, n)
	a, err := netip.ParseAddr(strings.Split(addr, "%")[0])
	if err != nil {
		return nil, netip.AddrPort{}, objects.Invalid("ltm dns nameserver %s: address %q is not an IP address", n.Name, addr)
	}
	p := dnsNameserver.MustProp("port").Effective(cfg, n)
	port, err := strconv.ParseUint(p, 10, 16)
	if err != nil || port == 0 {
		return nil, netip.AddrPort{}, objects.Invalid("ltm dns nameserver %s: port %q is not a port (1-65535)", n.Name, p)
	}
	return n, netip.AddrPortFrom(a.Unmap(), uint16(port)), nil
}

// expressKey is the ltm dns tsig-key of that name, nil for none.
func expressKey(cfg *objects.Config, key string) (*dnsexpress.Key, error) {
	if key == "" || key == "none" {
		return nil, nil
	}
	k := cfg.Lookup(schema, []string{dnsTSIGKey.Key()}, objects.FullPath("/Common", key))
	if k == nil {
		return nil, objects.NotFound(dnsTSIGKey, key)
	}
	secret := dnsTSIGKey.MustProp("secret").Effective(cfg, k)
	if _, err := base64.StdEncoding.DecodeString(secret); err != nil || secret == "" || secret == "none" {
		return nil, objects.Invalid("ltm dns tsig-key %s: the secret is not base64", k.Name)
	}
	kbase := k.Name[strings.LastIndexByte(k.Name, '/')+1:]
	return &dnsexpress.Key{Name: strings.ToLower(dns.Fqdn(kbase)), Algorithm: dnsexpress.Algorithm(dnsTSIGKey.MustProp("algorithm").Effective(cfg, k)), Secret: secret}, nil
}

// expressChange is the zones of one commit.
type expressChange struct {
	h     *expressHook
	zones []dnsexpress.ZoneConfig
	prev  []dnsexpress.ZoneConfig
	done  bool
}

// Commit implements Change: zones that stay keep their copies.
func (c *expressChange) Commit() error {
	h := c.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopped {
		return nil
	}
	c.prev, c.done = h.cur, true
	h.x.Apply(c.zones)
	h.cur = c.zones
	return nil
}

// Abort implements Change.
func (c *expressChange) Abort() {
	if !c.done {
		return
	}
	h := c.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.stopped {
		h.x.Apply(c.prev)
		h.cur = c.prev
	}
	c.done = false
}

// expressCommands answer show ltm dns zone [NAME...]: each zone's copy,
// its last transfer and the NOTIFYs it took.
func expressCommands(e *Engine, x *dnsexpress.Store) []RuntimeCommand {
	return []RuntimeCommand{
		{"show", dnsZone.Key(), func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
			o := showOpts(s, words)
			cfg := e.Config()
			for _, name := range profileNames(e, dnsZone, names) {
				obj := cfg.Get(dnsZone, name)
				if obj == nil {
					continue
				}
				st := dnsexpress.ZoneStats{Name: obj.Name}
				z := x.Zone(obj.Name[strings.LastIndexByte(obj.Name, '/')+1:])
				if z != nil {
					st = z.Stats()
					st.Name = obj.Name
				}
				if err := render.DNSZone(w, st, o); err != nil {
					return err
				}
			}
			return nil
		}},
	}
}
