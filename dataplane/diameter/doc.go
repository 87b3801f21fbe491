// Package diameter holds what a virtual's diameter profile is to the
// dataplane: its settings as the L4 engine applies them, the messages
// counted for show ltm profile diameter, and the persistence table
// that keeps a persist-avp value on one member. The messages themselves
// are read and written by dataplane/diammsg; the flows run in
// dataplane/internal/l4/diameter.go.
package diameter
