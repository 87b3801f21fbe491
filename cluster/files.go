package cluster

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/openltm/openltm/objects/store"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// File is a file the device group carries besides its configuration text,
// as a BIG-IP config sync carries its geolocation database updates: each
// generation names the group's current files by content (a generation that
// does not set them carries its predecessor's forward), so a device that
// applies any generation, or joins late, can tell whether its own copies
// are the group's and fetch those that are not.
type File struct {
	Kind   string `json:"kind"` // what the file is for: "geoip"
	Name   string `json:"name"` // its base name, where the device keeps it
	SHA256 string `json:"sha256"`
	Size   int    `json:"size"`
}

// Keys under /openltm/files/GROUP/, outside the group's log so that its
// watch never holds their chunks:
//
//	SHA256/c%06d   the content in chunks of at most ChunkSize
//	SHA256/n       the number of chunks, written last: the file is there
func (l *Log) filePrefix(sum string) string {
	return keyPrefix + "files/" + l.group + "/" + sum + "/"
}

// PutFile stores data for the group once (by its SHA-256; a file already
// there is not written again) and returns its File for a commit.
func (l *Log) PutFile(ctx context.Context, kind, name string, data []byte) (File, error) {
	s := sha256.Sum256(data)
	f := File{Kind: kind, Name: name, SHA256: hex.EncodeToString(s[:]), Size: len(data)}
	p := l.filePrefix(f.SHA256)
	rctx, cancel := l.c.reqCtx(ctx)
	resp, err := l.c.cli.Get(rctx, p+"n", clientv3.WithCountOnly())
	cancel()
	if err := l.c.note(l.op("store a file in"), err); err != nil {
		return f, err
	}
	if resp.Count > 0 {
		return f, nil
	}
	chunks := split(data, l.chunk)
	for i, ch := range chunks {
		rctx, cancel := l.c.bulkCtx(ctx, len(ch))
		_, err := l.c.cli.Put(rctx, fmt.Sprintf("%sc%06d", p, i), string(ch))
		cancel()
		if err != nil {
			l.dropFile(ctx, f.SHA256)
			return f, l.c.note(l.op("store a file in"), err)
		}
	}
	rctx, cancel = l.c.reqCtx(ctx)
	_, err = l.c.cli.Put(rctx, p+"n", strconv.Itoa(len(chunks)))
	cancel()
	if err != nil {
		l.dropFile(ctx, f.SHA256)
	}
	return f, l.c.note(l.op("store a file in"), err)
}

// GetFile reads a file of the group, checked against its digest.
func (l *Log) GetFile(ctx context.Context, f File) ([]byte, error) {
	p := l.filePrefix(f.SHA256)
	rctx, cancel := l.c.bulkCtx(ctx, f.Size)
	resp, err := l.c.cli.Get(rctx, p, clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend))
	cancel()
	if err := l.c.note(l.readOp(), err); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.Grow(f.Size)
	n := -1
	for _, kv := range resp.Kvs {
		k := string(kv.Key[len(p):])
		if k == "n" {
			n, _ = strconv.Atoi(string(kv.Value))
			continue
		}
		buf.Write(kv.Value)
	}
	if n < 0 {
		return nil, fmt.Errorf("device group %s: %s file %s (%s) is no longer kept: a newer generation replaced it", l.group, f.Kind, f.Name, f.SHA256[:12])
	}
	s := sha256.Sum256(buf.Bytes())
	if hex.EncodeToString(s[:]) != f.SHA256 {
		return nil, fmt.Errorf("device group %s: %s file %s does not match the digest recorded at commit", l.group, f.Kind, f.Name)
	}
	return buf.Bytes(), nil
}

func (l *Log) dropFile(ctx context.Context, sum string) {
	rctx, cancel := l.c.reqCtx(context.WithoutCancel(ctx))
	defer cancel()
	_, _ = l.c.cli.Delete(rctx, l.filePrefix(sum), clientv3.WithPrefix())
}

// CommitFiles is Commit with the group's files set to files (none when
// empty): the generation that changes them.
func (l *Log) CommitFiles(ctx context.Context, base uint64, g store.Generation, files []File) (uint64, error) {
	if files == nil {
		files = []File{}
	}
	return l.commit(ctx, base, g, files)
}

// filesOf are the files generation base names (none for 0, or for a
// base the group no longer has: that commit loses its conflict check). A
// base that cannot be read fails the commit rather than drop the group's
// files.
func (l *Log) filesOf(ctx context.Context, base uint64) ([]File, error) {
	if base == 0 {
		return nil, nil
	}
	rctx, cancel := l.c.reqCtx(ctx)
	resp, err := l.c.cli.Get(rctx, l.genKey(base))
	cancel()
	if err := l.c.note(l.commitOp(), err); err != nil {
		return nil, err
	}
	var r record
	if len(resp.Kvs) == 0 || json.Unmarshal(resp.Kvs[0].Value, &r) != nil {
		return nil, nil
	}
	return r.Files, nil
}

// dropReplaced removes the stored files old names that files does not:
// only the newest generation's files are kept [M].
func (l *Log) dropReplaced(ctx context.Context, old, files []File) {
	for _, o := range old {
		if !slices.ContainsFunc(files, func(f File) bool { return f.SHA256 == o.SHA256 }) {
			l.dropFile(ctx, o.SHA256)
		}
	}
}
