package store

import (
	"bytes"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// bucketFiles holds the content of `sys file` objects by checksum. A
// generation's text names each file by its checksum (as bigip.conf does),
// so every kept generation, and a rollback to it, finds its files; a file
// is stored once however many generations name it.
var bucketFiles = []byte("files")

// PutFile stores a file's content under its checksum. It is durable when
// PutFile returns; storing the same checksum again changes nothing.
func (s *Store) PutFile(checksum string, data []byte) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketFiles)
		if err != nil {
			return err
		}
		if b.Get([]byte(checksum)) != nil {
			return nil
		}
		return b.Put([]byte(checksum), data)
	})
}

// File returns the content stored under checksum; ok is false when no
// file has it.
func (s *Store) File(checksum string) (data []byte, ok bool, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketFiles)
		if b == nil {
			return nil
		}
		if v := b.Get([]byte(checksum)); v != nil {
			data, ok = append([]byte(nil), v...), true
		}
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("reading file %s from the store: %w", checksum, err)
	}
	return data, ok, nil
}

// PruneFiles deletes the stored files no kept generation names (a file's
// checksum appears in the text of each generation that uses it), and
// returns how many it deleted. Call it when no commit is under way: a
// file stored for a commit not yet made would be deleted.
func (s *Store) PruneFiles() (int, error) {
	n := 0
	err := s.db.Update(func(tx *bolt.Tx) error {
		files := tx.Bucket(bucketFiles)
		if files == nil {
			return nil
		}
		var unused [][]byte
		err := files.ForEach(func(k, _ []byte) error {
			used := false
			c := tx.Bucket(bucketGen).Cursor()
			for gk, gv := c.First(); gk != nil && !used; gk, gv = c.Next() {
				used = bytes.Contains(gv, k)
			}
			if !used {
				unused = append(unused, append([]byte(nil), k...))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range unused {
			if err := files.Delete(k); err != nil {
				return err
			}
		}
		n = len(unused)
		return nil
	})
	return n, err
}
