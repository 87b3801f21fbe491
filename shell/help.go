package shell

import (
	"fmt"
	"io"
	"strings"

	"github.com/openltm/openltm/control"
)

// helpNameWidth is tmsh's name column: names shorter than this line their
// descriptions up; longer ones push the column out for the whole list.
const helpNameWidth = 18

// WriteHelp prints `?` help the way tmsh does: suggestions grouped under
// their headings ("Modules:", "Components:", "Properties:", ...), in the
// order the daemon gave them, each as an indented name and description.
// Only suggestions that start with partial (the word being typed) are
// shown. It returns how many were printed.
func WriteHelp(w io.Writer, suggestions []control.Suggestion, partial string) int {
	var groups []string
	byGroup := map[string][]control.Suggestion{}
	width := helpNameWidth
	n := 0
	for _, s := range suggestions {
		if !strings.HasPrefix(s.Text, partial) {
			continue
		}
		if _, ok := byGroup[s.Group]; !ok {
			groups = append(groups, s.Group)
		}
		byGroup[s.Group] = append(byGroup[s.Group], s)
		width = max(width, len(s.Text)+2)
		n++
	}
	for _, g := range groups {
		if g != "" {
			fmt.Fprintf(w, "%s:\n", g)
		}
		for _, s := range byGroup[g] {
			if s.Description == "" {
				fmt.Fprintf(w, "  %s\n", s.Text)
				continue
			}
			fmt.Fprintf(w, "  %-*s%s\n", width, s.Text, s.Description)
		}
	}
	return n
}

// partialWord is the word being typed at the end of line ("" after a
// space), which help and completion filter on.
func partialWord(line string) string {
	i := strings.LastIndexAny(line, " \t\n{}")
	return line[i+1:]
}
