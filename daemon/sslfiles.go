package daemon

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/openltm/openltm/dataplane/gslb"
	"github.com/openltm/openltm/dataplane/tlsprof"
	"github.com/openltm/openltm/grammar"
	"github.com/openltm/openltm/objects"
)

// Certificates and keys are kept as BIG-IP keeps them: creating a
// `sys file ssl-cert` or `ssl-key` from a source-path reads the file once,
// checks it is what the kind holds, and stores a copy in the state
// directory's file store (cache-path), named by its content, so that the
// configuration keeps working when the source goes away, after a restart
// and after a rollback to a generation that used an older copy.

// importSSLFile reads the source-path of a new or changed ssl-cert or
// ssl-key object into the file store and points cache-path at the copy.
// at is where the statement gave the path, for errors.
func (s *Session) importSSLFile(o *objects.Object, rest []grammar.Node) error {
	if o.Kind != sysSSLCert && o.Kind != sysSSLKey && o.Kind != sysSSLCRL && o.Kind != sysExternalMonitor {
		return nil
	}
	src := noneEmpty(sslSourcePath.Str(o))
	at := nodeAfter(rest, sslSourcePath.Name)
	if src == "" {
		if at == nil && noneEmpty(sslCachePath.Str(o)) != "" {
			return nil // modify of another setting: the stored copy stays
		}
		return synErr(at, []string{"source-path file:PATH"}, "%s %s needs a source-path (file:/path/to/file.pem)", o.Kind.Key(), objects.RelPath(s.folder, o.Name))
	}
	if at == nil && noneEmpty(sslCachePath.Str(o)) != "" {
		return nil
	}
	path := strings.TrimPrefix(src, "file:")
	if !filepath.IsAbs(path) {
		path = s.absPath(path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return synErr(at, []string{"a readable PEM file"}, "%s %s: cannot read %s: %v", o.Kind.Key(), objects.RelPath(s.folder, o.Name), path, unwrapPathErr(err))
	}
	switch o.Kind {
	case sysExternalMonitor:
		if fi, serr := os.Stat(path); serr == nil && fi.Mode()&0o111 == 0 {
			err = fmt.Errorf("the file is not executable (chmod +x it)")
		}
	case sysSSLCert:
		_, err = tlsprof.ParseCert(o.Name, data)
	case sysSSLCRL:
		_, err = tlsprof.ParseCRL(o.Name, data)
	default:
		_, err = tlsprof.ParseKey(o.Name, data, noneEmpty(s.e.openSecret(sslKeyPassphrase.Str(o))))
		if _, herr := gslb.ParseHPKEKey(data); err != nil && herr == nil {
			// An X25519 key signs nothing: it serves a gtm SVCB or HTTPS
			// member's hpke-key only [M].
			err = nil
		}
	}
	if err != nil {
		return synErr(at, []string{"a PEM file"}, "%s: %v", path, err)
	}
	stored, sum, err := storeSSLFile(filepath.Join(s.e.StateDir(), filestoreDir), o.Name, data, o.Kind == sysExternalMonitor)
	if err != nil {
		return objects.Invalid("%s %s: cannot store a copy: %v", o.Kind.Key(), o.Name, err)
	}
	o.Props[sslSourcePath.Name] = &objects.Value{Str: "file:" + path}
	o.Props[sslCachePath.Name] = &objects.Value{Str: stored}
	o.Props[sslChecksum.Name] = &objects.Value{Str: sum}
	rev := 1
	if r := sslRevision.Str(o); r != "" {
		rev = atoi(r) + 1
	}
	o.Props[sslRevision.Name] = &objects.Value{Str: strconv.Itoa(rev)}
	return nil
}

// nodeAfter is the node following the word name among rest (a property's
// value), nil when name is not there.
func nodeAfter(rest []grammar.Node, name string) grammar.Node {
	for i, n := range rest {
		if w, ok := n.(*grammar.Word); ok && w.Text == name && i+1 < len(rest) {
			return rest[i+1]
		}
	}
	return nil
}

// storeSSLFile writes data into dir under a name made of the object's
// name and the data's hash (BIG-IP's :Common:name_<id> form), readable by
// the daemon's user only; it returns the path and BIG-IP's checksum
// (SHA1:size:hex).
func storeSSLFile(dir, name string, data []byte, exe bool) (string, string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", err
	}
	sum := sha1.Sum(data)
	h := hex.EncodeToString(sum[:])
	file := filepath.Join(dir, strings.ReplaceAll(name, "/", ":")+"_"+h[:16])
	if _, err := os.Stat(file); err != nil {
		if err := writeFileAtomic(file, data); err != nil {
			return "", "", err
		}
		mode := os.FileMode(0o600)
		if exe {
			mode = 0o700
		}
		if err := os.Chmod(file, mode); err != nil {
			return "", "", err
		}
	}
	return file, fmt.Sprintf("SHA1:%d:%s", len(data), h), nil
}

// install runs `install sys crypto cert|key|crl NAME from-local-file
// PATH`: tmsh's way to add a certificate, key or revocation list, the
// same as creating the ssl-cert, ssl-key or ssl-crl object with that
// source-path (or replacing its file when it exists).
func (s *Session) install(st *grammar.Statement, args []grammar.Node) (string, error) {
	ws := grammar.Texts(args)
	usage := []string{"install sys crypto cert NAME from-local-file PATH", "install sys crypto key NAME from-local-file PATH", "install sys crypto crl NAME from-local-file PATH"}
	// The words after sys crypto, whatever module the shell is in.
	rel := ws
	if len(rel) > 0 && rel[0] != "sys" && rel[0] != "/sys" {
		rel = append(append([]string{}, s.module...), ws...)
	}
	if len(rel) > 0 {
		rel[0] = strings.TrimPrefix(rel[0], "/")
	}
	if len(rel) >= 2 && rel[0] == "sys" && rel[1] == "crypto" {
		rel = rel[2:]
	} else {
		return "", synErr(st, usage, "install: only sys crypto cert, key and crl can be installed")
	}
	if len(rel) != 4 || (rel[0] != "cert" && rel[0] != "key" && rel[0] != "crl") || rel[2] != "from-local-file" {
		return "", synErr(st, usage, "install sys crypto: expected cert|key|crl NAME from-local-file PATH")
	}
	kind := "ssl-" + rel[0]
	name := objects.FullPath(s.folder, rel[1])
	verb := "create"
	if s.e.Config().Get(schema.Kind("sys file "+kind), name) != nil {
		verb = "modify"
	}
	return fmt.Sprintf("%s sys file %s %s source-path %s", verb, kind, grammar.Quote(name), grammar.Quote("file:"+s.absPath(rel[3]))), nil
}

// defaultPairs makes each file store's default.crt and default.key once.
var defaultPairs sync.Map // dir → *defaultPairOnce

type defaultPairOnce struct {
	once     sync.Once
	crt, key string
	err      error
}

// defaultPair returns the paths of the engine's own self-signed
// certificate and key, the files of the built-in /Common/default.crt and
// /Common/default.key, making them the first time (RSA 2048, CN
// localhost.localdomain, ten years, as a BIG-IP makes its own at
// install).
func defaultPair(dir string) (string, string, error) {
	v, _ := defaultPairs.LoadOrStore(dir, &defaultPairOnce{})
	d := v.(*defaultPairOnce)
	d.once.Do(func() {
		d.crt, d.key = filepath.Join(dir, "default.crt"), filepath.Join(dir, "default.key")
		if _, err := os.Stat(d.crt); err == nil {
			if _, err := os.Stat(d.key); err == nil {
				return
			}
		}
		d.err = makeDefaultPair(dir, d.crt, d.key)
	})
	return d.crt, d.key, d.err
}

func makeDefaultPair(dir, crt, key string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 63))
	if err != nil {
		return err
	}
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: serial,
		Subject:   pkix.Name{CommonName: "localhost.localdomain", Organization: []string{"openltm"}},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(10, 0, 0),
		DNSNames: []string{"localhost.localdomain", "localhost"}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		return err
	}
	if err := writeFileAtomic(key, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})); err != nil {
		return err
	}
	if err := os.Chmod(key, 0o600); err != nil {
		return err
	}
	return writeFileAtomic(crt, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// storeLoadedFile gives a certificate, key or external-monitor program
// read from a configuration file its stored copy, when its source-path can
// be read here and its cache-path cannot (a BIG-IP's /config/filestore, or
// none): the configuration then survives the source file, as one made with
// tmsh does. A file that cannot be read is left for the translation to
// report.
func (s *Session) storeLoadedFile(o *objects.Object) {
	if o.Kind != sysSSLCert && o.Kind != sysSSLKey && o.Kind != sysSSLCRL && o.Kind != sysExternalMonitor {
		return
	}
	if c := noneEmpty(sslCachePath.Str(o)); c != "" {
		if _, err := os.Stat(c); err == nil {
			return
		}
	}
	src := noneEmpty(sslSourcePath.Str(o))
	if src == "" {
		return
	}
	path := strings.TrimPrefix(src, "file:")
	if !filepath.IsAbs(path) {
		path = s.absPath(path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return
	}
	stored, sum, err := storeSSLFile(filepath.Join(s.e.StateDir(), filestoreDir), o.Name, data, o.Kind == sysExternalMonitor)
	if err != nil {
		return
	}
	o.Props[sslCachePath.Name] = &objects.Value{Str: stored}
	o.Props[sslChecksum.Name] = &objects.Value{Str: sum}
}
