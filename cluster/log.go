package cluster

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/openltm/openltm/objects/store"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// keyPrefix is the root of everything openltm keeps in etcd.
const keyPrefix = "/openltm/"

// ChunkSize is the largest piece of configuration text one etcd request
// carries. etcd refuses requests over 1.5 MiB by default
// (--max-request-bytes); 1 MiB leaves room for keys and the generation's
// record.
const ChunkSize = 1 << 20

// Generation is one committed group configuration: the local store's
// generation plus the device that committed it.
type Generation struct {
	store.Generation
	Device string
	// Files are the group's files at this generation (files.go).
	Files []File
}

// Info is a Generation without its configuration text.
type Info struct {
	store.Info
	Device string
	// Size is the length of the configuration text in bytes, Stored what
	// it takes in etcd when compressed (0 when stored as is).
	Size, Stored int
}

// record is what the generation key holds; the text is in chunks under
// Blob.
type record struct {
	ID      uint64    `json:"id"`
	Time    time.Time `json:"time"`
	User    string    `json:"user"`
	Summary string    `json:"summary"`
	Device  string    `json:"device"`
	Blob    string    `json:"blob"`
	Chunks  int       `json:"chunks"`
	Size    int       `json:"size"`             // of the text
	Stored  int       `json:"stored,omitempty"` // of the chunks, when compressed
	// Encoding is "gzip" when the chunks hold the text compressed.
	Encoding string `json:"encoding,omitempty"`
	SHA256   string `json:"sha256"`
	// MasterKey is the key the text's secrets are sealed with.
	MasterKey []byte `json:"master-key,omitempty"`
	// Files are the group's files at this generation (files.go).
	Files []File `json:"files,omitempty"`
}

// CompressAbove is the text size from which a generation is stored
// gzip-compressed: configuration text shrinks several times, which is that
// much less for etcd to store and for every device to read.
const CompressAbove = 64 << 10

func compress(text []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(text); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Log is a device group's configuration history in etcd, the same shape as
// the local store: numbered generations of whole configuration texts, the
// last store.Keep kept.
//
// Keys under /openltm/groups/GROUP/:
//
//	head                      the newest generation number (decimal)
//	gen/%020d                 the generation's record (JSON)
//	blob/%020d/NONCE/%06d     its text in chunks of at most ChunkSize
type Log struct {
	c      *Conn
	group  string
	prefix string
	chunk  int
}

// Log opens the configuration log of a device group.
func (c *Conn) Log(group string) *Log {
	return &Log{c: c, group: group, prefix: groupPrefix(group), chunk: ChunkSize}
}

func groupPrefix(group string) string { return keyPrefix + "groups/" + group + "/" }

func (l *Log) headKey() string           { return l.prefix + "head" }
func (l *Log) genKey(id uint64) string   { return fmt.Sprintf("%sgen/%020d", l.prefix, id) }
func (l *Log) blobBase(id uint64) string { return fmt.Sprintf("%sblob/%020d", l.prefix, id) }
func chunkKey(blob string, n int) string { return fmt.Sprintf("%s%06d", blob, n) }
func parseHead(v []byte) (uint64, error) { return strconv.ParseUint(string(v), 10, 64) }
func formatHead(id uint64) string        { return strconv.FormatUint(id, 10) }
func (l *Log) op(what string) string     { return what + " device group " + l.group }
func (l *Log) commitOp() string          { return l.op("commit to") }
func (l *Log) readOp() string            { return l.op("read") }
func nonce() string                      { var b [6]byte; _, _ = rand.Read(b[:]); return hex.EncodeToString(b[:]) }
func split(text []byte, size int) [][]byte {
	var out [][]byte
	for len(text) > size {
		out = append(out, text[:size])
		text = text[size:]
	}
	return append(out, text)
}

// Commit makes g the group's next generation, provided the group's newest
// generation is still base (0 for an empty group). Whatever its size, the
// change becomes visible in one conditioned etcd transaction, so two devices
// committing at once are put in order: the second gets a ConflictError with
// the new head and commits nothing. A text larger than one chunk is first
// written under a key no reader looks at (blob/ID/NONCE/) and published by
// the transaction; a losing commit deletes its chunks, and chunks left by a
// device that died mid-commit are removed with their generation number's
// history. Generations older than the last store.Keep are pruned in the
// same transaction.
func (l *Log) Commit(ctx context.Context, base uint64, g store.Generation) (uint64, error) {
	return l.commit(ctx, base, g, nil)
}

// commit is Commit; files nil carries base's files forward.
func (l *Log) commit(ctx context.Context, base uint64, g store.Generation, files []File) (uint64, error) {
	old, err := l.filesOf(ctx, base)
	if err != nil {
		return 0, err
	}
	if files == nil {
		files = old
	}
	id := base + 1
	if g.Time.IsZero() {
		g.Time = time.Now()
	}
	text := []byte(g.Config)
	sum := sha256.Sum256(text)
	blob := fmt.Sprintf("%s/%s/", l.blobBase(id), nonce())
	rec := record{ID: id, Time: g.Time, User: g.User, Summary: g.Summary, Device: l.c.Device(),
		Blob: blob, Size: len(text), SHA256: hex.EncodeToString(sum[:]), MasterKey: g.MasterKey, Files: files}
	stored := text
	if len(text) > CompressAbove {
		z, err := compress(text)
		if err != nil {
			return 0, err
		}
		stored, rec.Stored, rec.Encoding = z, len(z), "gzip"
	}
	chunks := split(stored, l.chunk)
	rec.Chunks = len(chunks)
	data, err := json.Marshal(rec)
	if err != nil {
		return 0, err
	}
	var ops []clientv3.Op
	staged := len(chunks) > 1
	if staged {
		for i, ch := range chunks {
			rctx, cancel := l.c.bulkCtx(ctx, len(ch))
			_, err := l.c.cli.Put(rctx, chunkKey(blob, i), string(ch))
			cancel()
			if err != nil {
				l.dropBlob(ctx, blob)
				return 0, l.c.note(l.commitOp(), err)
			}
		}
	} else {
		ops = append(ops, clientv3.OpPut(chunkKey(blob, 0), string(chunks[0])))
	}
	ops = append(ops,
		clientv3.OpPut(l.genKey(id), string(data)),
		clientv3.OpPut(l.headKey(), formatHead(id)))
	if id > store.Keep {
		// Everything at or below id-Keep goes, records and chunks alike.
		keepFrom := id - store.Keep + 1
		ops = append(ops,
			clientv3.OpDelete(l.prefix+"gen/", clientv3.WithRange(l.genKey(keepFrom))),
			clientv3.OpDelete(l.prefix+"blob/", clientv3.WithRange(l.blobBase(keepFrom))))
	}
	var cmp clientv3.Cmp
	if base == 0 {
		cmp = clientv3.Compare(clientv3.CreateRevision(l.headKey()), "=", 0)
	} else {
		cmp = clientv3.Compare(clientv3.Value(l.headKey()), "=", formatHead(base))
	}
	inline := 0
	if !staged {
		inline = len(chunks[0])
	}
	rctx, cancel := l.c.bulkCtx(ctx, inline)
	resp, err := l.c.cli.Txn(rctx).If(cmp).Then(ops...).Else(clientv3.OpGet(l.headKey())).Commit()
	cancel()
	if err != nil {
		if staged {
			l.dropBlob(ctx, blob)
		}
		return 0, l.c.note(l.commitOp(), err)
	}
	_ = l.c.note(l.commitOp(), nil)
	if resp.Succeeded {
		l.dropReplaced(ctx, old, files)
		return id, nil
	}
	if staged {
		l.dropBlob(ctx, blob)
	}
	ce := &ConflictError{Group: l.group, Base: base}
	if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) == 1 {
		ce.Head, _ = parseHead(kvs[0].Value)
		if r, err := l.record(ctx, ce.Head); err == nil {
			ce.By = r.Device
		}
	}
	return 0, ce
}

// dropBlob removes the chunks of a commit that did not happen; failure
// leaves them for pruning.
func (l *Log) dropBlob(ctx context.Context, blob string) {
	rctx, cancel := l.c.reqCtx(context.WithoutCancel(ctx))
	defer cancel()
	_, _ = l.c.cli.Delete(rctx, blob, clientv3.WithPrefix())
}

// Head returns the newest generation number, 0 for an empty group.
func (l *Log) Head(ctx context.Context) (uint64, error) {
	id, _, err := l.head(ctx)
	return id, err
}

func (l *Log) head(ctx context.Context) (uint64, int64, error) {
	rctx, cancel := l.c.reqCtx(ctx)
	resp, err := l.c.cli.Get(rctx, l.headKey())
	cancel()
	if err := l.c.note(l.readOp(), err); err != nil {
		return 0, 0, err
	}
	if len(resp.Kvs) == 0 {
		return 0, resp.Header.Revision, nil
	}
	id, err := parseHead(resp.Kvs[0].Value)
	if err != nil {
		return 0, 0, fmt.Errorf("device group %s: head %q is not a generation number", l.group, resp.Kvs[0].Value)
	}
	return id, resp.Header.Revision, nil
}

func (l *Log) record(ctx context.Context, id uint64) (record, error) {
	var r record
	rctx, cancel := l.c.reqCtx(ctx)
	resp, err := l.c.cli.Get(rctx, l.genKey(id))
	cancel()
	if err := l.c.note(l.readOp(), err); err != nil {
		return r, err
	}
	if len(resp.Kvs) == 0 {
		return r, l.notFound(ctx, id)
	}
	if err := json.Unmarshal(resp.Kvs[0].Value, &r); err != nil {
		return r, fmt.Errorf("device group %s generation %d: %w", l.group, id, err)
	}
	return r, nil
}

func (l *Log) notFound(ctx context.Context, id uint64) error {
	list, err := l.List(ctx)
	if err != nil {
		return err
	}
	if len(list) == 0 {
		return fmt.Errorf("generation %d not found: no generation has been committed to device group %s yet", id, l.group)
	}
	return fmt.Errorf("generation %d not found: device group %s keeps generations %d to %d",
		id, l.group, list[0].ID, list[len(list)-1].ID)
}

// Get returns generation id with its text, checked against the digest
// recorded at commit.
func (l *Log) Get(ctx context.Context, id uint64) (Generation, error) {
	r, err := l.record(ctx, id)
	if err != nil {
		return Generation{}, err
	}
	rctx, cancel := l.c.bulkCtx(ctx, r.Size)
	resp, err := l.c.cli.Get(rctx, r.Blob, clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend))
	cancel()
	if err := l.c.note(l.readOp(), err); err != nil {
		return Generation{}, err
	}
	chunks := make([][]byte, len(resp.Kvs))
	for i, kv := range resp.Kvs {
		chunks[i] = kv.Value
	}
	return l.assemble(r, chunks)
}

// assemble checks and decodes a generation from its record and its chunks
// in order.
func (l *Log) assemble(r record, chunks [][]byte) (Generation, error) {
	id := r.ID
	if len(chunks) != r.Chunks {
		return Generation{}, &DamagedError{Group: l.group, ID: id, Reason: fmt.Sprintf("%d of %d chunks present", len(chunks), r.Chunks)}
	}
	var buf bytes.Buffer
	buf.Grow(r.Size)
	switch r.Encoding {
	case "":
		for _, c := range chunks {
			buf.Write(c)
		}
	case "gzip":
		parts := make([]io.Reader, len(chunks))
		for i, c := range chunks {
			parts[i] = bytes.NewReader(c)
		}
		zr, err := gzip.NewReader(io.MultiReader(parts...))
		if err == nil {
			_, err = buf.ReadFrom(zr)
		}
		if err != nil {
			return Generation{}, &DamagedError{Group: l.group, ID: id, Reason: err.Error()}
		}
	default:
		return Generation{}, fmt.Errorf("device group %s generation %d: unknown encoding %q (written by a newer openltm?)", l.group, id, r.Encoding)
	}
	sum := sha256.Sum256(buf.Bytes())
	if hex.EncodeToString(sum[:]) != r.SHA256 {
		return Generation{}, &DamagedError{Group: l.group, ID: id, Reason: "its text does not match the digest recorded at commit"}
	}
	return Generation{Generation: store.Generation{ID: r.ID, Time: r.Time, User: r.User, Summary: r.Summary,
		Config: buf.String(), MasterKey: r.MasterKey}, Device: r.Device, Files: r.Files}, nil
}

// Latest returns the newest generation; ok is false for an empty group.
func (l *Log) Latest(ctx context.Context) (g Generation, ok bool, err error) {
	id, err := l.Head(ctx)
	if err != nil || id == 0 {
		return g, false, err
	}
	g, err = l.Get(ctx, id)
	return g, err == nil, err
}

// List returns the kept generations, oldest first, without their texts.
func (l *Log) List(ctx context.Context) ([]Info, error) {
	rctx, cancel := l.c.reqCtx(ctx)
	resp, err := l.c.cli.Get(rctx, l.prefix+"gen/", clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend))
	cancel()
	if err := l.c.note(l.readOp(), err); err != nil {
		return nil, err
	}
	out := make([]Info, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		var r record
		if err := json.Unmarshal(kv.Value, &r); err != nil {
			return nil, fmt.Errorf("device group %s: %s: %w", l.group, kv.Key, err)
		}
		out = append(out, Info{Info: store.Info{ID: r.ID, Time: r.Time, User: r.User, Summary: r.Summary},
			Device: r.Device, Size: r.Size, Stored: r.Stored})
	}
	return out, nil
}
