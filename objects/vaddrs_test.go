package objects

import (
	"slices"
	"testing"
)

func TestCompleteVirtualAddresses(t *testing.T) {
	conf := func(t *testing.T, text string) *Config {
		t.Helper()
		cfg := Default.Builtins()
		objs, err := Default.ReadConfig("t.conf", []byte(text), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			cfg.Put(o)
		}
		return cfg
	}
	ak := Default.Kind("ltm virtual-address")
	addrs := func(cfg *Config) []string {
		var out []string
		for _, a := range cfg.Of(ak) {
			out = append(out, a.Name+"="+a.Str("address"))
		}
		slices.Sort(out)
		return out
	}
	const v1 = "ltm virtual /Common/v1 { destination /Common/10.0.0.1:80 }\n"
	const v2 = "ltm virtual /Common/v2 { destination /Common/10.0.0.1:443 }\n"
	for _, tc := range []struct {
		name     string
		old, now string
		want     []string
	}{
		{"the first virtual creates its address", "", v1, []string{"/Common/10.0.0.1=10.0.0.1"}},
		{"a second on the address adds none", v1, v1 + v2, []string{"/Common/10.0.0.1=10.0.0.1"}},
		{"an address object written with another spelling is the same address", "",
			"ltm virtual /Common/v6 { destination /Common/2001:db8::1.80 }\nltm virtual-address /Common/v6addr { address 2001:db8:0::1 }\n",
			[]string{"/Common/v6addr=2001:db8:0::1"}},
		{"route domains and IPv6 name the object as written", "",
			"ltm virtual /Common/rd { destination /Common/10.0.0.2%3:80 }\nltm virtual /Common/six { destination /Common/2001:db8::2.443 }\n",
			[]string{"/Common/10.0.0.2%3=10.0.0.2%3", "/Common/2001:db8::2=2001:db8::2"}},
		{"wildcard destinations make none", "", "ltm virtual /Common/fwd { destination /Common/0.0.0.0:any }\n", nil},
		{"deleting one of two virtuals keeps the address", v1 + v2 + "ltm virtual-address /Common/10.0.0.1 { address 10.0.0.1 }\n",
			v2 + "ltm virtual-address /Common/10.0.0.1 { address 10.0.0.1 }\n", []string{"/Common/10.0.0.1=10.0.0.1"}},
		{"the last virtual's deletion deletes it", v1 + "ltm virtual-address /Common/10.0.0.1 { address 10.0.0.1 }\n",
			"ltm virtual-address /Common/10.0.0.1 { address 10.0.0.1 }\n", nil},
		{"unless auto-delete is false", v1 + "ltm virtual-address /Common/10.0.0.1 { address 10.0.0.1 auto-delete false }\n",
			"ltm virtual-address /Common/10.0.0.1 { address 10.0.0.1 auto-delete false }\n", []string{"/Common/10.0.0.1=10.0.0.1"}},
		{"an address made by hand without virtuals stays, its address filled in", "",
			"ltm virtual-address /Common/10.9.9.9 { }\n", []string{"/Common/10.9.9.9=10.9.9.9"}},
		{"a configuration replaced by one without the object gets it back", v1 + "ltm virtual-address /Common/10.0.0.1 { address 10.0.0.1 traffic-group /Common/traffic-group-local-only }\n",
			v1, []string{"/Common/10.0.0.1=10.0.0.1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var old *Config
			if tc.old != "" {
				old = conf(t, tc.old)
			}
			cfg := conf(t, tc.now)
			CompleteVirtualAddresses(Default, old, cfg)
			if got := addrs(cfg); !slices.Equal(got, tc.want) {
				t.Fatalf("addresses %q, want %q", got, tc.want)
			}
		})
	}
}

// Deleting an address object its virtual servers use is refused, as
// BIG-IP refuses it; once they are gone it may go.
func TestDeleteVirtualAddressInUse(t *testing.T) {
	cfg := Default.Builtins()
	objs, err := Default.ReadConfig("t.conf", []byte("ltm virtual /Common/v1 { destination /Common/10.0.0.1:80 }\nltm virtual-address /Common/va1 { address 10.0.0.1 }\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		cfg.Put(o)
	}
	va := cfg.Get(Default.Kind("ltm virtual-address"), "/Common/va1")
	cfg.Delete(va)
	err = cfg.CheckDelete(Default, va)
	if err == nil || err.Error() != "01070265:3: The Virtual Address (/Common/va1) cannot be deleted because it is in use by a Virtual Server (/Common/v1)." {
		t.Fatalf("delete in use: %v", err)
	}
	cfg.Delete(cfg.Get(Default.Kind("ltm virtual"), "/Common/v1"))
	if err := cfg.CheckDelete(Default, va); err != nil {
		t.Fatalf("delete once unused: %v", err)
	}
}

// An address BIG-IP makes is written with arp, icmp-echo, a host mask
// and traffic-group-1, as bigip.conf files show them.
func TestMadeVirtualAddressProperties(t *testing.T) {
	cfg := Default.Builtins()
	objs, err := Default.ReadConfig("t.conf", []byte("ltm virtual /Common/v6 { destination /Common/2001:db8::7.443 }\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		cfg.Put(o)
	}
	CompleteVirtualAddresses(Default, nil, cfg)
	a := cfg.Get(Default.Kind("ltm virtual-address"), "/Common/2001:db8::7")
	if a == nil {
		t.Fatal("no address made")
	}
	want := "ltm virtual-address /Common/2001:db8::7 {\n    address 2001:db8::7\n    arp enabled\n    icmp-echo enabled\n    mask ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff\n    traffic-group /Common/traffic-group-1\n}\n"
	if got := Format(a, PrintOpts{}); got != want {
		t.Fatalf("made\n%s\nwant\n%s", got, want)
	}
}
