package daemon

import (
	"github.com/openltm/openltm/grammar"
	"github.com/openltm/openltm/objects"
)

// topologyName reads a gtm topology record's name from the start of a
// command's arguments into name, canonical as a loaded file has it (so
// `datacenter dc1` and `datacenter /Common/dc1` name one record), and
// returns how many arguments it took: properties may follow, as tmsh
// takes `create gtm topology ldns: ... server: ... score 100`.
func (s *Session) topologyName(args []grammar.Node, name *string) (int, error) {
	var ws []string
	for _, n := range args {
		w, ok := n.(*grammar.Word)
		if !ok {
			break
		}
		ws = append(ws, w.Text)
	}
	if len(ws) == 0 {
		return 0, synErr(args[0], []string{"ldns:"}, "a topology record is named ldns: [not] KIND VALUE server: [not] KIND VALUE")
	}
	v, used, bad, err := objects.TopologyName(s.folder, ws)
	if err != nil {
		return 0, synErr(args[bad], []string{"ldns: [not] KIND VALUE server: [not] KIND VALUE"}, "%v", err)
	}
	*name = v
	return used, nil
}

// firstWord is the text of the first argument when it is a word.
func firstWord(args []grammar.Node) (string, bool) {
	if len(args) == 0 {
		return "", false
	}
	w, ok := args[0].(*grammar.Word)
	if !ok {
		return "", false
	}
	return w.Text, true
}
