package httpcompress

import (
	"testing"
	"time"

	"github.com/openltm/openltm/hoststat"
)

// TestBrowserAllows: browser-workarounds narrows what the old browsers
// get compressed, selective keeps compression for the browsers known to
// decode it; with neither, every agent is the lists' to judge.
func TestBrowserAllows(t *testing.T) {
	const (
		firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
		chrome  = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36"
		ie6     = "Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1)"
		ie6sv1  = "Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; SV1)"
		ie5     = "Mozilla/4.0 (compatible; MSIE 5.5; Windows 98)"
		ie8     = "Mozilla/4.0 (compatible; MSIE 8.0; Windows NT 6.1; Trident/4.0)"
		nn407   = "Mozilla/4.07 [en] (X11; I; Linux 2.0.36 i686)"
		nn47    = "Mozilla/4.7 [en] (WinNT; I)"
		opera8  = "Opera/8.54 (Windows NT 5.1; U; en)"
		opera9  = "Opera/9.80 (Windows NT 6.1) Presto/2.12 Version/12.16"
		curl    = "curl/8.5.0"
	)
	for _, c := range []struct {
		ua               string
		workarounds, sel bool
		want             Browser
	}{
		{firefox, false, false, AnyType},
		{nn407, false, false, AnyType},
		{"", false, false, AnyType},
		{firefox, true, false, AnyType},
		{chrome, true, false, AnyType},
		{ie6, true, false, HTMLOnly},
		{ie6sv1, true, false, AnyType},
		{ie5, true, false, HTMLOnly},
		{ie8, true, false, AnyType},
		{nn407, true, false, NoCompression},
		{nn47, true, false, HTMLOnly},
		{curl, true, false, AnyType},
		{"", true, false, AnyType},
		{firefox, false, true, AnyType},
		{ie8, false, true, AnyType},
		{ie6sv1, false, true, AnyType},
		{ie6, false, true, NoCompression},
		{nn47, false, true, NoCompression},
		{opera8, false, true, NoCompression},
		{opera9, false, true, AnyType},
		{curl, false, true, NoCompression},
		{"", false, true, NoCompression},
		{ie6, true, true, HTMLOnly},
		{nn407, true, true, NoCompression},
		{curl, true, true, NoCompression},
		{"Mozilla/99999999999999999999", false, true, AnyType},
	} {
		p, err := New(Config{Level: 1, BrowserWorkarounds: c.workarounds, Selective: c.sel})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.BrowserAllows([]byte(c.ua)); got != c.want {
			t.Errorf("workarounds %v selective %v %q: %d, want %d", c.workarounds, c.sel, c.ua, got, c.want)
		}
	}
	for ct, want := range map[string]bool{"text/html": true, "TEXT/HTML; charset=utf-8": true, " text/html ": true, "text/css": false, "": false, "text/htmlx": false} {
		if IsHTML([]byte(ct)) != want {
			t.Errorf("IsHTML(%q) = %v", ct, !want)
		}
	}
}

// TestSaving: the CPU saver stops compression at cpu-saver-high percent
// of ltmd's load and resumes only below cpu-saver-low; disabled, it
// never stops it.
func TestSaving(t *testing.T) {
	for _, c := range []struct {
		name      string
		on        bool
		high, low int
		loads     []float64 // ltmd's load at each reading, percent
		want      []bool
	}{
		{"disabled", false, 90, 75, []float64{0, 99, 100}, []bool{false, false, false}},
		{"below high", true, 90, 75, []float64{0, 50, 89}, []bool{false, false, false}},
		{"hysteresis", true, 90, 75, []float64{0, 95, 80, 75, 74, 80, 90}, []bool{false, true, true, true, false, false, true}},
		{"equal thresholds", true, 50, 50, []float64{0, 50, 49, 50}, []bool{false, true, false, true}},
	} {
		t0 := time.Unix(1000, 0)
		var cpu time.Duration
		i := 0
		m := &hoststat.CPUMeter{Procs: 1, Read: func() (time.Duration, time.Time) {
			// A second passes per reading, ltmd busy for loads[i] of it.
			if i > 0 {
				cpu += time.Duration(c.loads[i] * float64(time.Second) / 100)
			}
			at := t0.Add(time.Duration(i) * time.Second)
			i++
			return cpu, at
		}}
		p, err := New(Config{Level: 1, CPUSaver: c.on, CPUSaverHigh: c.high, CPUSaverLow: c.low, CPU: m})
		if err != nil {
			t.Fatal(err)
		}
		for k, w := range c.want {
			if !c.on {
				m.Percent() // (the meter moves on; the policy does not ask it)
			}
			if got := p.Saving(); got != w {
				t.Errorf("%s: load %v%%: saving %v, want %v", c.name, c.loads[k], got, w)
			}
		}
	}
}
