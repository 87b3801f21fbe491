package objects

import "testing"

func TestCompleteTrafficGroups(t *testing.T) {
	const folders = "sys folder /Common/app { }\nsys folder /Common/app/sub { }\n"
	for _, c := range []struct {
		name     string
		old, now string
		want     map[string]string // object key ("folder NAME" / "va NAME") -> traffic-group, or "!" + it when no longer inheriting
	}{
		{
			name: "folders inherit down the tree",
			now:  "sys folder /Common/app { inherited-traffic-group false traffic-group /Common/traffic-group-2 }\nsys folder /Common/app/sub { }\n",
			want: map[string]string{"folder /Common/app": "!/Common/traffic-group-2", "folder /Common/app/sub": "/Common/traffic-group-2"},
		},
		{
			name: "a new folder given a traffic group keeps it",
			now:  "sys folder /Common/app { traffic-group /Common/traffic-group-2 }\n",
			want: map[string]string{"folder /Common/app": "!/Common/traffic-group-2"},
		},
		{
			name: "an inheriting address follows its folder",
			now:  "sys folder /Common/app { inherited-traffic-group false traffic-group /Common/tg-b }\nltm virtual-address /Common/app/10.0.0.1 { address 10.0.0.1 inherited-traffic-group true }\n",
			want: map[string]string{"va /Common/app/10.0.0.1": "/Common/tg-b"},
		},
		{
			name: "the folder's change moves it",
			old:  "sys folder /Common/app { inherited-traffic-group false traffic-group /Common/tg-b }\nltm virtual-address /Common/app/10.0.0.1 { address 10.0.0.1 inherited-traffic-group true traffic-group /Common/tg-b }\n",
			now:  "sys folder /Common/app { inherited-traffic-group false traffic-group /Common/tg-c }\nltm virtual-address /Common/app/10.0.0.1 { address 10.0.0.1 inherited-traffic-group true traffic-group /Common/tg-b }\n",
			want: map[string]string{"va /Common/app/10.0.0.1": "/Common/tg-c"},
		},
		{
			name: "an address given its own traffic group stops inheriting",
			old:  "sys folder /Common/app { inherited-traffic-group false traffic-group /Common/tg-b }\nltm virtual-address /Common/app/10.0.0.1 { address 10.0.0.1 inherited-traffic-group true traffic-group /Common/tg-b }\n",
			now:  "sys folder /Common/app { inherited-traffic-group false traffic-group /Common/tg-b }\nltm virtual-address /Common/app/10.0.0.1 { address 10.0.0.1 inherited-traffic-group true traffic-group /Common/tg-c }\n",
			want: map[string]string{"va /Common/app/10.0.0.1": "!/Common/tg-c"},
		},
		{
			name: "a non-inheriting address keeps its own",
			now:  "sys folder /Common/app { inherited-traffic-group false traffic-group /Common/tg-b }\nltm virtual-address /Common/app/10.0.0.1 { address 10.0.0.1 traffic-group /Common/traffic-group-1 }\n",
			want: map[string]string{"va /Common/app/10.0.0.1": "!/Common/traffic-group-1"},
		},
		{
			name: "an address in a partition's top folder inherits traffic-group-1",
			now:  folders + "ltm virtual-address /Common/10.0.0.2 { address 10.0.0.2 inherited-traffic-group true traffic-group /Common/tg-x }\n",
			want: map[string]string{"va /Common/10.0.0.2": "/Common/traffic-group-1", "folder /Common/app/sub": "/Common/traffic-group-1"},
		},
		{
			name: "a sub-folder follows its parent's change",
			old:  "sys folder /Common/app { inherited-traffic-group false traffic-group /Common/traffic-group-2 }\nsys folder /Common/app/sub { inherited-traffic-group true traffic-group /Common/traffic-group-2 }\n",
			now:  "sys folder /Common/app { inherited-traffic-group false traffic-group traffic-group-1 }\nsys folder /Common/app/sub { inherited-traffic-group true traffic-group /Common/traffic-group-2 }\n",
			want: map[string]string{"folder /Common/app/sub": "traffic-group-1"},
		},
		{
			name: "a peer's change, already followed, keeps inheriting",
			old:  "sys folder /Common/app { inherited-traffic-group false traffic-group /Common/traffic-group-2 }\nsys folder /Common/app/sub { inherited-traffic-group true traffic-group /Common/traffic-group-2 }\nltm virtual-address /Common/app/10.0.0.1 { address 10.0.0.1 inherited-traffic-group true traffic-group /Common/traffic-group-2 }\n",
			now:  "sys folder /Common/app { inherited-traffic-group false traffic-group traffic-group-1 }\nsys folder /Common/app/sub { inherited-traffic-group true traffic-group traffic-group-1 }\nltm virtual-address /Common/app/10.0.0.1 { address 10.0.0.1 inherited-traffic-group true traffic-group traffic-group-1 }\n",
			want: map[string]string{"folder /Common/app/sub": "traffic-group-1", "va /Common/app/10.0.0.1": "traffic-group-1"},
		},
		{
			name: "inheritance turned back on takes the parent's again",
			old:  "sys folder /Common/app { inherited-traffic-group false traffic-group /Common/tg-b }\n",
			now:  "sys folder /Common/app { inherited-traffic-group true traffic-group /Common/tg-b }\n",
			want: map[string]string{"folder /Common/app": "/Common/traffic-group-1"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			var old *Config
			if c.old != "" {
				old = configOf(t, c.old)
			}
			cfg := configOf(t, c.now)
			CompleteTrafficGroups(Default, old, cfg)
			for key, want := range c.want {
				k, name := Default.Kind("sys folder"), key[len("folder "):]
				if key[:3] == "va " {
					k, name = Default.Kind("ltm virtual-address"), key[3:]
				}
				o := cfg.Get(k, name)
				if o == nil {
					t.Fatalf("%s is gone", key)
				}
				got := o.Str("traffic-group")
				if cfg.EffectiveStr(o, "inherited-traffic-group") != "true" {
					got = "!" + got
				}
				if got != want {
					t.Errorf("%s: traffic-group %q, want %q", key, got, want)
				}
			}
		})
	}
}

func configOf(t *testing.T, text string) *Config {
	t.Helper()
	l := readAndCheck(text)
	if r := l.Findings.Refused(); len(r) > 0 {
		t.Fatalf("%s: %v", text, r[0])
	}
	cfg := Default.Builtins()
	for _, o := range l.Objects {
		cfg.Put(o)
	}
	return cfg
}
