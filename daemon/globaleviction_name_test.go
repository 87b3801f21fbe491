package daemon

import (
	"testing"
)

// TestGlobalEvictionPolicyName: the global context's policy is a
// reference: a name relative to the folder is taken (it was refused as
// not found, only a full path worked), a missing one refused, one in use
// not deleted, and none lets it go.
func TestGlobalEvictionPolicyName(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	runSteps(t, s, []step{
		{cmd: "create ltm eviction-policy g-pol { high-water 90 low-water 80 }"},
		{cmd: "modify ltm global-settings connection global-flow-eviction-policy g-pol"},
		{cmd: "list ltm global-settings connection global-flow-eviction-policy", out: "global-flow-eviction-policy g-pol\n"},
		{cmd: "delete ltm eviction-policy g-pol", err: "01070265:3: The Eviction Policy (/Common/g-pol) cannot be deleted because it is in use by a Connection Settings (ltm global-settings connection)."},
		{cmd: "modify ltm global-settings connection global-flow-eviction-policy nosuch", err: "01020036:3: The requested eviction policy (/Common/nosuch) was not found."},
		{cmd: "modify ltm global-settings connection global-flow-eviction-policy none"},
		{cmd: "delete ltm eviction-policy g-pol"},
		{cmd: "modify ltm global-settings connection global-flow-eviction-policy /Common/default-eviction-policy"},
		{cmd: "list ltm global-settings connection global-flow-eviction-policy", out: "global-flow-eviction-policy default-eviction-policy\n"},
	})
}
