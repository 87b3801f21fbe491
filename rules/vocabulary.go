package rules

import (
	_ "embed"
	"strings"
	"sync"
)

// vocabularyText is F5's list of iRule event and command names, with its
// sources in the file's header.
//
//go:embed vocabulary.txt
var vocabularyText string

// f5Name is what F5's vocabulary says about one name.
type f5Name struct {
	deprecated bool
}

var (
	vocabOnce  sync.Once
	f5Events   map[string]f5Name
	f5Commands map[string]f5Name
)

func loadVocabulary() {
	vocabOnce.Do(func() {
		f5Events = map[string]f5Name{}
		f5Commands = map[string]f5Name{}
		for _, line := range strings.Split(vocabularyText, "\n") {
			f := strings.Fields(line)
			if len(f) < 2 || strings.HasPrefix(f[0], "#") {
				continue
			}
			n := f5Name{deprecated: len(f) > 2 && f[2] == "deprecated"}
			switch f[0] {
			case "event":
				f5Events[f[1]] = n
			case "command":
				f5Commands[f[1]] = n
			}
		}
	})
}

// IsF5Command reports whether BIG-IP has an iRule command of this name
// (implemented by openltm or not).
func IsF5Command(name string) bool {
	loadVocabulary()
	_, ok := f5Commands[strings.TrimPrefix(name, "::")]
	return ok
}

// IsF5Event reports whether BIG-IP has an iRule event of this name.
func IsF5Event(name string) bool {
	loadVocabulary()
	_, ok := f5Events[name]
	return ok
}

// Extensions are the commands openltm registers that F5's vocabulary
// lacks: where BIG-IP parses a protocol but gives rules no command for a
// part of it (MQTT 5.0 properties), openltm adds one in the protocol's
// namespace rather than leave the part unreachable [M]. Each is
// documented as openltm's in rules/README.md.
var Extensions = map[string]bool{"MQTT::property": true}
