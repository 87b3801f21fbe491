// Package vault keeps the secrets of a configuration (monitor passwords,
// key and cookie pass phrases) encrypted with the device's master key, as
// BIG-IP's Secure Vault does: the running configuration, `list`, saved
// files and the stored generations hold them as `$M$xx$...`, and only the
// runtimes that use them see them in clear.
//
// A sealed value is "$M$", two salt characters, "$" and the base64 of a
// random 12-byte nonce followed by the AES-256-GCM ciphertext of the
// value, with the salt as additional data: sealing the same value twice
// gives two different texts, and opening one with another device's key
// fails instead of giving garbage.
package vault

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Prefix starts every sealed value; BIG-IP's configuration files use it
// for the same purpose, so a user recognises what is encrypted.
const Prefix = "$M$"

// KeySize is the master key's length: AES-256.
const KeySize = 32

// ErrForeign is what opening a value sealed with another master key (or a
// damaged one) gives; BIG-IP refuses such a configuration rather than run
// it with a wrong secret.
var ErrForeign = errors.New("it was encrypted with another master key, or is damaged")

// Key is a device's master key.
type Key struct {
	raw  []byte
	aead cipher.AEAD
}

// New makes a key of the given bytes (KeySize of them), for a key read
// back from a file or handed over by the device group.
func New(raw []byte) (*Key, error) {
	if len(raw) != KeySize {
		return nil, fmt.Errorf("a master key is %d bytes, not %d", KeySize, len(raw))
	}
	b, err := aes.NewCipher(raw)
	if err != nil {
		return nil, err
	}
	a, err := cipher.NewGCM(b)
	if err != nil {
		return nil, err
	}
	return &Key{raw: append([]byte(nil), raw...), aead: a}, nil
}

// Generate makes a random key: each device starts with its own, as a
// BIG-IP does.
func Generate() *Key {
	raw := make([]byte, KeySize)
	if _, err := rand.Read(raw); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	k, _ := New(raw)
	return k
}

// passwordSalt is fixed so that the same password gives the same key on
// every device: that is what `modify sys crypto master-key
// prompt-for-password` is for (two devices given one password can read
// each other's files).
const passwordSalt = "openltm sys crypto master-key"

// FromPassword derives the key a password gives.
func FromPassword(password string) (*Key, error) {
	if password == "" {
		return nil, errors.New("the master key password is empty")
	}
	raw, err := pbkdf2.Key(sha256.New, password, []byte(passwordSalt), 200_000, KeySize)
	if err != nil {
		return nil, err
	}
	return New(raw)
}

// Bytes is the key itself, for the device group's hand-over.
func (k *Key) Bytes() []byte { return append([]byte(nil), k.raw...) }

// Equal reports whether two keys are the same.
func (k *Key) Equal(o *Key) bool { return o != nil && string(k.raw) == string(o.raw) }

// Checksum identifies the key without revealing it, for `show sys crypto
// master-key` (compare devices of a group as `f5mku -K` lets BIG-IP users
// do).
func (k *Key) Checksum() string {
	s := sha256.Sum256(append([]byte("openltm master key checksum\x00"), k.raw...))
	return hex.EncodeToString(s[:8])
}

// Sealed reports whether v is a sealed value.
func Sealed(v string) bool { return strings.HasPrefix(v, Prefix) }

const saltChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789./"

// Seal encrypts a value. A value already sealed is returned as it is.
func (k *Key) Seal(plain string) string {
	if Sealed(plain) {
		return plain
	}
	var r [2 + 12]byte
	if _, err := rand.Read(r[:]); err != nil {
		panic(err)
	}
	salt := string([]byte{saltChars[r[0]%64], saltChars[r[1]%64]})
	nonce := r[2:]
	out := k.aead.Seal(append([]byte(nil), nonce...), nonce, []byte(plain), []byte(salt))
	return Prefix + salt + "$" + base64.StdEncoding.EncodeToString(out)
}

// Open decrypts a sealed value; a value that is not sealed is returned as
// it is (a secret typed in clear before it was stored).
func (k *Key) Open(v string) (string, error) {
	if !Sealed(v) {
		return v, nil
	}
	rest := v[len(Prefix):]
	salt, body, ok := strings.Cut(rest, "$")
	if !ok || len(salt) != 2 {
		return "", ErrForeign
	}
	data, err := base64.StdEncoding.DecodeString(body)
	if err != nil || len(data) < k.aead.NonceSize()+k.aead.Overhead() {
		return "", ErrForeign
	}
	n := k.aead.NonceSize()
	plain, err := k.aead.Open(nil, data[:n], data[n:], []byte(salt))
	if err != nil {
		return "", ErrForeign
	}
	return string(plain), nil
}

// Load reads the key file at path, or creates it with a new random key
// (mode 0600) when there is none; created says which.
func Load(path string) (k *Key, created bool, err error) {
	raw, err := os.ReadFile(path)
	if err == nil {
		k, err := New(raw)
		if err != nil {
			return nil, false, fmt.Errorf("master key %s: %w", path, err)
		}
		return k, false, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, false, err
	}
	k = Generate()
	if err := k.Save(path); err != nil {
		return nil, false, err
	}
	return k, true, nil
}

// Save writes the key to path through a temporary file and a rename, so a
// crash leaves the old key or the new one, never half of one.
func (k *Key) Save(path string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".master-key-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(k.raw); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
