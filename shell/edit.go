package shell

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/openltm/openltm/grammar"
)

// editHeader opens the text `edit` hands to the editor; the daemon's
// reader skips it as comments.
const editHeader = "#TMSH-VERSION: 15.1.0\n# Change the object(s) below, then save and quit to apply them;\n# quit without saving to change nothing.\n\n"

// editTarget reports whether a statement is `edit <what>` and returns what.
func editTarget(text string) (string, bool) {
	f := strings.Fields(text)
	if len(f) < 2 || f[0] != "edit" {
		return "", false
	}
	return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(text), "edit")), true
}

// editorCommand is the command `edit` runs: $VISUAL, else $EDITOR, else vi.
func editorCommand() string {
	for _, v := range []string{"VISUAL", "EDITOR"} {
		if e := os.Getenv(v); e != "" {
			return e
		}
	}
	return "vi"
}

// edit lists the objects as tmsh list does, opens them in the editor and,
// when the text changed, loads it back merged into the configuration, as
// tmsh's edit does. A failed load keeps the edited file and says where.
func (r *runner) edit(ctx context.Context, what string) error {
	var listed bytes.Buffer
	if err := r.sess.Exec(ctx, "list "+what, &listed); err != nil {
		return err
	}
	if listed.Len() == 0 {
		return fmt.Errorf("edit %s: nothing to edit", what)
	}
	f, err := os.CreateTemp("", "tmsh-edit-*.conf")
	if err != nil {
		return err
	}
	name := f.Name()
	before := editHeader + listed.String()
	if _, err := io.WriteString(f, before); err != nil {
		f.Close()
		os.Remove(name)
		return err
	}
	f.Close()
	cmd := exec.CommandContext(ctx, "sh", "-c", editorCommand()+` "$1"`, "sh", name)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		os.Remove(name)
		return fmt.Errorf("edit: the editor failed (%v); nothing was changed", err)
	}
	after, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	if string(after) == before {
		os.Remove(name)
		fmt.Fprintln(r.out, "No changes.")
		return nil
	}
	// The daemon records the change as this edit, and refuses it if the
	// objects changed since they were listed.
	sum := sha256.Sum256(listed.Bytes())
	load := fmt.Sprintf("load sys config merge file %s edit-of %s listed-sha256 %s", grammar.Quote(name), grammar.Quote(what), hex.EncodeToString(sum[:]))
	if err := r.sess.Exec(ctx, load, r.out); err != nil {
		return fmt.Errorf("%w; nothing was changed, and the edited text is kept in %s", err, name)
	}
	os.Remove(name)
	return nil
}
