package control

// ProtocolVersion is bumped when a request or response changes meaning, so
// a tmsh and an ltmd from different builds can refuse each other clearly
// instead of misreading a field.
const ProtocolVersion = 1

// Op names one request type. Each verb of the protocol is its own op so that
// a transcript of the socket (socat -v) reads like the session it carries.
type Op string

// The requests a client may send. Every request except OpCancel is answered
// by responses ending with one whose Done is true; OpExec may send any number
// of Out chunks before it.
const (
	// OpHello opens the conversation: the server answers with its protocol
	// version and the session's prompt, or with the reason it refuses the
	// peer. It lets a client learn about a refusal at connect time.
	OpHello Op = "hello"
	// OpExec runs one tmsh statement (Line) and streams its output.
	OpExec Op = "exec"
	// OpComplete asks what may follow Line (completion and `?` help).
	OpComplete Op = "complete"
	// OpPrompt asks for the session's prompt state.
	OpPrompt Op = "prompt"
	// OpCancel interrupts the OpExec in progress (Ctrl-C in the shell). It
	// has no response of its own: the exec ends with its Done response.
	OpCancel Op = "cancel"
)

// Request is one line a client writes: a JSON object followed by a newline.
type Request struct {
	Op   Op     `json:"op"`
	Line string `json:"line,omitempty"`
	// Dir, on a hello, is the client's working directory: relative file
	// names in its commands (`load sys config file x.conf`) are taken from
	// where the user runs tmsh, not from where the daemon runs.
	Dir string `json:"dir,omitempty"`
}

// Response is one line the server writes. Output of a long command arrives
// as many responses carrying Out, so neither side holds it whole; the last
// response of a request has Done set and carries the request's result.
type Response struct {
	Out         string       `json:"out,omitempty"`
	Err         string       `json:"err,omitempty"`
	Done        bool         `json:"done,omitempty"`
	Prompt      *PromptState `json:"prompt,omitempty"`
	Suggestions []Suggestion `json:"suggestions,omitempty"`
	Version     int          `json:"version,omitempty"`
	// Committed, on a Done response, is the configuration generation the
	// command committed (0: none). A client that interrupted the command
	// learns from it that the change was applied all the same.
	Committed uint64 `json:"committed,omitempty"`
}
