package transcripts

import (
	"github.com/openltm/openltm/dataplane/mqtt/mqtttest"
	"github.com/rogpeppe/go-internal/testscript"
)

// mqttbroker ADDR NAME: run a small MQTT broker (dataplane/mqtt/
// mqtttest) as a member until the script ends. It answers a subscriber
// of the topic "$member" with its NAME, so a script sees which member
// a client reached.
func cmdMQTTBroker(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: mqttbroker ADDR NAME")
	}
	b, err := mqtttest.StartBroker(args[0], args[1])
	if err != nil {
		ts.Fatalf("mqttbroker: %v", err)
	}
	ts.Defer(b.Close)
}
