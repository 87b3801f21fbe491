package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestUsageAndHelp(t *testing.T) {
	tests := []struct {
		args []string
		code int
		out  string // on stdout or stderr
	}{
		{nil, 2, "usage: tcpkit COMMAND"},
		{[]string{"--help"}, 0, "an SSL-gateway-like client"},
		{[]string{"client", "-h"}, 0, "-window"},
		{[]string{"server", "--help"}, 0, "-crash-after"},
		{[]string{"nosuch"}, 2, `unknown command "nosuch"`},
		{[]string{"client", "-nosuch"}, 1, "flag provided but not defined"},
	}
	for _, tt := range tests {
		var out, errb bytes.Buffer
		code := run(context.Background(), tt.args, strings.NewReader(""), &out, &errb)
		if code != tt.code || !strings.Contains(out.String()+errb.String(), tt.out) {
			t.Errorf("tcpkit %q: status %d, want %d; output %q, want it to hold %q", tt.args, code, tt.code, out.String()+errb.String(), tt.out)
		}
	}
	var out bytes.Buffer
	run(context.Background(), []string{"--help"}, nil, &out, &out)
	for _, c := range subcommands {
		if !strings.Contains(out.String(), "tcpkit "+c.name+" ") {
			t.Errorf("--help does not show %s", c.name)
		}
	}
}
