package render

import (
	"io"

	"github.com/openltm/openltm/dataplane/authn"
)

// AuthProfile prints one `Ltm::Auth Profile` block: the auth sessions
// the profile has open and had, and their answers by kind [M: the
// layout and field names are openltm's, after BIG-IP's auth profile
// statistics (sessions, success, failure, error, want credential)].
func AuthProfile(w io.Writer, name string, st authn.Stats, o Options) error {
	n := func(v int64) string { return o.num(uint64(max(v, 0))) }
	return statBlock(w, "Ltm::Auth Profile: "+o.rel(name), [][2]string{
		{"Sessions", ""},
		{"  Current", n(st.Current)},
		{"  Maximum", n(st.Max)},
		{"  Total", n(st.Total)},
		{"Results", ""},
		{"  Success", n(st.Success)},
		{"  Failure", n(st.Failure)},
		{"  Error", n(st.Error)},
		{"  Want Credential", n(st.WantCredential)},
		{"  Answered From Cache", n(st.CacheHits)},
	})
}
