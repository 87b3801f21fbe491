package daemon

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/openltm/openltm/grammar"
	"github.com/openltm/openltm/objects"
)

// transaction is a session's open `cli transaction`: the statements queued
// so far and the running configuration with them applied, against which
// each new one is checked as it is queued.
type transaction struct {
	queued []string
	cfg    *objects.Config
}

func isCliTx(words []string) bool {
	return len(words) == 3 && words[1] == "cli" && words[2] == "transaction"
}

// queue checks a create, modify or delete against the changes queued so
// far, so a typo is caught at the prompt, and queues it; submit applies
// the queue again to the running configuration.
func (tx *transaction) queue(s *Session, st *grammar.Statement, verb string, args []grammar.Node) error {
	cfg := tx.cfg.Clone()
	if err := s.change(st, verb, args, cfg); err != nil {
		return err
	}
	tx.cfg = cfg
	tx.queued = append(tx.queued, st.Source)
	return nil
}

// cliTx handles create / submit / delete / list cli transaction.
func (s *Session) cliTx(ctx context.Context, verb string, w io.Writer) error {
	switch verb {
	case "create":
		if s.tx != nil {
			return objects.Invalid("a cli transaction is already open: submit or delete it first")
		}
		s.tx = &transaction{cfg: s.e.Config().Clone()}
		return nil
	case "delete":
		if s.tx == nil {
			return objects.Invalid("no cli transaction is open")
		}
		s.tx = nil
		return nil
	case "list":
		if s.tx == nil {
			return objects.Invalid("no cli transaction is open")
		}
		for i, c := range s.tx.queued {
			fmt.Fprintf(w, "%d: %s\n", i+1, c)
		}
		return nil
	case "submit":
		if s.tx == nil {
			return objects.Invalid("no cli transaction is open")
		}
		queued := s.tx.queued
		s.tx = nil
		if len(queued) == 0 {
			return nil
		}
		// The queued commands run, in order, against the configuration
		// running when the transaction's turn comes.
		failedAt := 0
		gen, err := s.e.Change(ctx, s.user, strings.Join(queued, "\n"), CommitOptions{}, func(cfg *objects.Config) error {
			for i, src := range queued {
				failedAt = i + 1
				st, err := parse(src, s.module)
				if err != nil {
					return err
				}
				verb := st.Items[0].(*grammar.Word).Text
				if err := s.change(st, verb, st.Items[1:], cfg); err != nil {
					return err
				}
			}
			failedAt = 0
			return nil
		})
		s.committed = gen
		switch {
		case err != nil && failedAt > 0:
			return fmt.Errorf("transaction failed at command %d (%s): %w; nothing was changed", failedAt, queued[failedAt-1], err)
		case err != nil:
			return fmt.Errorf("transaction failed: %w; nothing was changed", err)
		}
		return nil
	}
	return nil
}
