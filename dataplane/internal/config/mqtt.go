package config

import "github.com/openltm/openltm/dataplane/mqtt"

// MQTT is a virtual's mqtt profile: its TCP flows are read packet by
// packet both ways (dataplane/mqtt) so that MQTT_ events run over each,
// and the member is chosen at the client's CONNECT. An alias so that the
// daemon, which may not import this package, can build it.
type MQTT = mqtt.Options
