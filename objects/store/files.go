package store

import (
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
