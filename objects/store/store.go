// Package store keeps the running configuration durable in bbolt as a chain
// of generations: every successful commit is one generation holding the whole
// configuration text, who made it, when and with what commands. Keeping whole
// texts (not deltas) makes restart, diff and rollback trivial and safe; the
// last Keep generations are retained.
package store

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// Keep is how many generations are retained; older ones are pruned at commit.
const Keep = 100

var (
	bucketGen  = []byte("generations")
	bucketMeta = []byte("meta")
)

// Generation is one committed configuration.
type Generation struct {
	ID      uint64    `json:"id"`
	Time    time.Time `json:"time"`
	User    string    `json:"user"`
	Summary string    `json:"summary"` // the commands that made it, one per line
	Config  string    `json:"config"`  // the whole configuration as bigip.conf text
	// MasterKey is the master key the text's secrets are sealed with, set
	// only on a device group's generations: the devices of a group share
	// the key, as BIG-IP's do, and a device takes it with the text.
	MasterKey []byte `json:"master-key,omitempty"`
}

// Info is a Generation without its configuration text, for listing history
// without reading every text.
type Info struct {
	ID      uint64
	Time    time.Time
	User    string
	Summary string
}

// Store is the open bbolt file. Only one process may hold it: a second
// ltmd on the same state directory gets a clear error instead of blocking.
type Store struct {
	db *bolt.DB
}

// ErrLocked reports that another process holds the store.
var ErrLocked = errors.New("the configuration store is in use by another ltmd")

// Open opens (creating when absent) the store at path.
func Open(path string) (*Store, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 2 * time.Second})
	if err != nil {
		if errors.Is(err, berrors.ErrTimeout) {
			return nil, fmt.Errorf("%s: %w", path, ErrLocked)
		}
		return nil, err
	}
	err = db.Update(func(tx *bolt.Tx) error {
		if _, err := tx.CreateBucketIfNotExists(bucketGen); err != nil {
			return err
		}
		_, err := tx.CreateBucketIfNotExists(bucketMeta)
		return err
	})
	if err != nil {
		db.Close()
		return nil, err
	}
	return &Store{db: db}, nil
}

// Close releases the file.
func (s *Store) Close() error { return s.db.Close() }

func key(id uint64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], id)
	return b[:]
}

// Commit appends g as the next generation and returns its id. It is durable
// when Commit returns (bbolt syncs before the transaction completes), so a
// kill -9 right after loses nothing. Generations beyond Keep are pruned in
// the same transaction.
func (s *Store) Commit(g Generation) (uint64, error) {
	var id uint64
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketGen)
		n, err := b.NextSequence()
		if err != nil {
			return err
		}
		id = n
		g.ID = n
		if g.Time.IsZero() {
			g.Time = time.Now()
		}
		data, err := json.Marshal(g)
		if err != nil {
			return err
		}
		if err := b.Put(key(n), data); err != nil {
			return err
		}
		if n > Keep {
			// Delete everything at or below n-Keep (normally exactly one).
			c := b.Cursor()
			var old [][]byte
			for k, _ := c.First(); k != nil && binary.BigEndian.Uint64(k) <= n-Keep; k, _ = c.Next() {
				old = append(old, append([]byte(nil), k...))
			}
			for _, k := range old {
				if err := b.Delete(k); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return id, err
}

// Latest returns the newest generation; ok is false on a new store.
func (s *Store) Latest() (g Generation, ok bool, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		k, v := tx.Bucket(bucketGen).Cursor().Last()
		if k == nil {
			return nil
		}
		ok = true
		return json.Unmarshal(v, &g)
	})
	return g, ok, err
}

// Get returns generation id, or an error naming the ids still kept.
func (s *Store) Get(id uint64) (Generation, error) {
	var g Generation
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketGen)
		v := b.Get(key(id))
		if v == nil {
			c := b.Cursor()
			first, _ := c.First()
			last, _ := c.Last()
			if first == nil {
				return fmt.Errorf("generation %d not found: no generation has been committed yet", id)
			}
			return fmt.Errorf("generation %d not found: generations %d to %d are kept", id,
				binary.BigEndian.Uint64(first), binary.BigEndian.Uint64(last))
		}
		return json.Unmarshal(v, &g)
	})
	return g, err
}

// List returns every kept generation, oldest first, without config texts.
func (s *Store) List() ([]Info, error) {
	var out []Info
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketGen).ForEach(func(k, v []byte) error {
			var g Generation
			if err := json.Unmarshal(v, &g); err != nil {
				return err
			}
			out = append(out, Info{ID: g.ID, Time: g.Time, User: g.User, Summary: g.Summary})
			return nil
		})
	})
	return out, err
}
