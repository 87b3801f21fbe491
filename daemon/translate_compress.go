package daemon

import (
	"fmt"
	"strconv"

	"github.com/openltm/openltm/dataplane/httpcompress"
	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/rules"
)

var (
	profileCompress    = schema.MustKind("ltm profile http-compression")
	compressTypeInc    = profileCompress.MustProp("content-type-include")
	compressTypeExc    = profileCompress.MustProp("content-type-exclude")
	compressURIInc     = profileCompress.MustProp("uri-include")
	compressURIExc     = profileCompress.MustProp("uri-exclude")
	compressMinSize    = profileCompress.MustProp("min-size")
	compressLevel      = profileCompress.MustProp("gzip-level")
	compressBufferSize = profileCompress.MustProp("buffer-size")
	compressPrefer     = profileCompress.MustProp("method-prefer")
	compressKeepAccept = profileCompress.MustProp("keep-accept-encoding")
	compressVary       = profileCompress.MustProp("vary-header")
	compressHTTP10     = profileCompress.MustProp("allow-http-10")
	compressBrowsers   = profileCompress.MustProp("browser-workarounds")
	compressSelective  = profileCompress.MustProp("selective")
	compressCPUSaver   = profileCompress.MustProp("cpu-saver")
	compressCPUHigh    = profileCompress.MustProp("cpu-saver-high")
	compressCPULow     = profileCompress.MustProp("cpu-saver-low")
)

// compressPolicy reads an http-compression profile's effective
// properties (its own, then its defaults-from chain's, then the
// built-in's).
func (t *translator) compressPolicy(p *objects.Object) (*httpcompress.Policy, error) {
	list := func(pr *objects.Prop) []string {
		if v := t.cfg.Effective(p, pr.Name); v != nil {
			return v.List
		}
		return nil
	}
	e := func(pr *objects.Prop) string { return pr.Effective(t.cfg, p) }
	minSize, err := strconv.Atoi(e(compressMinSize))
	if err != nil {
		return nil, fmt.Errorf("min-size %q is not a number", e(compressMinSize))
	}
	level, err := strconv.Atoi(e(compressLevel))
	if err != nil {
		return nil, fmt.Errorf("gzip-level %q is not a number", e(compressLevel))
	}
	bufferSize, err := strconv.Atoi(e(compressBufferSize))
	if err != nil {
		return nil, fmt.Errorf("buffer-size %q is not a number", e(compressBufferSize))
	}
	high, err := strconv.Atoi(e(compressCPUHigh))
	if err != nil {
		return nil, fmt.Errorf("cpu-saver-high %q is not a number", e(compressCPUHigh))
	}
	low, err := strconv.Atoi(e(compressCPULow))
	if err != nil {
		return nil, fmt.Errorf("cpu-saver-low %q is not a number", e(compressCPULow))
	}
	prefer, _ := httpcompress.ParseCoding(e(compressPrefer))
	return httpcompress.New(httpcompress.Config{
		Profile:            p.Name,
		ContentTypeInclude: list(compressTypeInc),
		ContentTypeExclude: list(compressTypeExc),
		URIInclude:         list(compressURIInc),
		URIExclude:         list(compressURIExc),
		MinSize:            minSize,
		Level:              level,
		BufferSize:         bufferSize,
		Prefer:             prefer,
		KeepAcceptEncoding: e(compressKeepAccept) == "enabled",
		Vary:               e(compressVary) != "disabled",
		AllowHTTP10:        e(compressHTTP10) == "enabled",
		BrowserWorkarounds: e(compressBrowsers) == "enabled",
		Selective:          e(compressSelective) == "enabled",
		CPUSaver:           e(compressCPUSaver) != "disabled",
		CPUSaverHigh:       high,
		CPUSaverLow:        low,
	})
}

// compressProfile checks an http-compression profile whether or not a
// virtual uses it: a pattern that is no regular expression, or a level
// out of range, is refused when the profile is made or changed.
func (t *translator) compressProfile(o *objects.Object) {
	if _, err := t.compressPolicy(o); err != nil {
		t.skip(o, "%v", err) // (the message names the profile)
	}
}

// compressOptions is the virtual's http-compression profile, compiled:
// nil without one.
func (t *translator) compressOptions(o *objects.Object) (*httpcompress.Policy, error) {
	cp := t.profile(o, profileCompress)
	if cp == nil {
		return nil, nil
	}
	p, err := t.compressPolicy(cp)
	if err != nil {
		return nil, fmt.Errorf("profile %s: %v", cp.Name, err)
	}
	return p, nil
}

// compressNeedsHTTP refuses an http-compression profile on a virtual
// server without an http profile: there are no responses to compress,
// and BIG-IP refuses the combination too [M: its message is ours].
func (t *translator) compressNeedsHTTP(o *objects.Object) bool {
	return t.needsHTTPProfile(o, profileCompress)
}

// compressNeeds refuses, as BIG-IP does (01070394), a rule list whose
// COMPRESS:: commands need an http-compression profile the virtual
// server lacks; the first such use is reported.
func (t *translator) compressNeeds(o *objects.Object, list []*rules.Rule) bool {
	return t.profileNeeds(o, list, profileCompress, "HTTPCOMPRESSION", (*rules.Rule).CompressNeeds) // translate_stream.go
}
