// Package shell is tmsh: the interactive REPL on a terminal, and the batch
// runner for -c, -f and piped scripts. Both send complete statements, one
// at a time, to a control.Session (the daemon, over the socket), print
// output on stdout and failures on stderr, and agree on what a statement is
// through grammar.SplitStatements, so a brace block pasted at the prompt
// and the same block in a file behave alike.
//
// The shell is only a client: it imports no daemon and draws no show
// layout (the daemon sends finished text). When no daemon answers, it
// calls the Options.StartDaemon function its command passes (cmd/tmsh
// starts ltmd's engine in-process).
package shell
