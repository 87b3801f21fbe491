package daemon

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"time"

	"github.com/openltm/openltm/daemon/render"
	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/persist"
	"github.com/openltm/openltm/objects"
)

// persistCommands answers show / delete ltm persistence
// persist-records: the records explain why a client keeps reaching one
// member, and why a pool behind a NAT or proxy is unbalanced.
func persistCommands(p *dataplane.Plane) []RuntimeCommand {
	return []RuntimeCommand{
		{"show", "ltm persistence persist-records", func(ctx context.Context, s *Session, _, words []string, w io.Writer) error {
			all := false
			if i := slices.Index(words, "all-properties"); i >= 0 {
				all, words = true, slices.Delete(slices.Clone(words), i, i+1)
			}
			f, err := persistFilter(s.Folder(), words)
			if err != nil {
				return err
			}
			pw := render.NewPersistWriter(w)
			if all {
				pw = render.NewPersistWriterAll(w, time.Now(), s.Folder())
			}
			var werr error
			p.PersistRecords(f, func(r *persist.Record) bool {
				if ctx.Err() != nil {
					werr = ctx.Err()
					return false
				}
				werr = pw.Write(r)
				return werr == nil
			})
			if werr != nil {
				return werr
			}
			return pw.Close()
		}},
		{"delete", "ltm persistence persist-records", func(ctx context.Context, s *Session, _, words []string, w io.Writer) error {
			f, err := persistFilter(s.Folder(), words)
			if err != nil {
				return err
			}
			p.DeletePersistRecords(f)
			return nil
		}},
	}
}

// persistFilter reads the filter words of show/delete ltm persistence
// persist-records; pool and virtual names are relative to the folder.
func persistFilter(folder string, words []string) (persist.Filter, error) {
	var f persist.Filter
	valid := []string{"client-addr", "key", "mode", "node-addr", "node-port", "pool", "virtual"}
	addr := func(dst *netip.Addr, v string) error {
		a, err := netip.ParseAddr(v)
		if err != nil {
			return objects.Invalid("%q is not an IP address", v)
		}
		*dst = a
		return nil
	}
	for i := 0; i < len(words); i++ {
		k := words[i]
		if i+1 >= len(words) {
			return f, &objects.SyntaxError{Msg: fmt.Sprintf("%q needs a value", k), Expected: valid}
		}
		v := words[i+1]
		i++
		var err error
		switch k {
		case "client-addr":
			err = addr(&f.ClientAddr, v)
		case "node-addr":
			err = addr(&f.NodeAddr, v)
		case "node-port":
			var n int
			if n, err = objects.ParsePort(v); err == nil {
				f.NodePort = uint16(n)
			} else {
				err = objects.Invalid("%v", err)
			}
		case "key":
			f.Key = v
		case "mode":
			m, ok := persist.ParseMode(v)
			if !ok {
				return f, objects.Invalid("%q is not a persistence mode (source-address, dest-address, universal, cookie, hash, ssl-session-id, msrdp, sip, host)", v)
			}
			f.Mode = m
		case "pool":
			f.Pool = objects.FullPath(folder, v)
		case "virtual":
			f.Virtual = objects.FullPath(folder, v)
		default:
			return f, &objects.SyntaxError{Msg: fmt.Sprintf("%q unknown property", k), Expected: valid}
		}
		if err != nil {
			return f, err
		}
	}
	return f, nil
}
