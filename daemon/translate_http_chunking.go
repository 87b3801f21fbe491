package daemon

import (
	"fmt"

	"github.com/openltm/openltm/dataplane/httpx"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/objects"
)

// The http profile's request-chunking and response-chunking.
var (
	httpRequestChunking  = profileHTTP.MustProp("request-chunking")
	httpResponseChunking = profileHTTP.MustProp("response-chunking")
)

// httpChunking fills the engine's chunking modes from the http profile
// prof (get reads its effective values). The schema refuses other
// values; a stored one that slipped through is an error naming it.
func httpChunking(get func(*objects.Prop) string, opts *mblb.HTTPOptions) error {
	for _, s := range []struct {
		p   *objects.Prop
		dst *httpx.Chunking
	}{{httpRequestChunking, &opts.RequestChunking}, {httpResponseChunking, &opts.ResponseChunking}} {
		v := get(s.p)
		c, ok := httpx.ParseChunking(v)
		if !ok {
			return fmt.Errorf("%s %q: must be preserve, selective, sustain, rechunk or unchunk", s.p.Name, v)
		}
		*s.dst = c
	}
	return nil
}
