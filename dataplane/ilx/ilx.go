// Package ilx runs iRules LX: the Node.js processes of each ilx plugin's
// extensions, which rules reach with ILX::call and ILX::notify.
//
// Each extension runs `node index.js` in the plugin's staged directory,
// once (concurrency-mode single) or once per processor (dedicated, as
// BIG-IP runs one per TMM), with openltm's own f5-nodejs module on its
// module path. The module and ltmd speak over a Unix socket pair (the
// child's file descriptor 3) in length-framed JSON: a 4-byte big-endian
// length, then one JSON object (f5-nodejs/index.js describes the
// messages). A process that exits is started again, up to max-restarts
// times within restart-interval seconds, as BIG-IP's sdmd does; past
// that the extension is left failed until the plugin changes.
package ilx

import (
	"bufio"
	"context"
	_ "embed"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

//go:embed f5-nodejs/index.js
var f5NodeJS []byte

// maxFrame bounds one message either way, so that a runaway reply cannot
// exhaust ltmd's memory.
const maxFrame = 16 << 20

// Errors a call returns; the rules' ILX::call turns them into Tcl
// errors in BIG-IP's words where BIG-IP has them [M: BIG-IP logs "ILX
// timeout." for a call that gets no answer in time; the others are
// openltm's].
var (
	ErrTimeout    = errors.New("ILX timeout.")
	ErrNoPlugin   = errors.New("ILX failure: no such ilx plugin")
	ErrNoExt      = errors.New("ILX failure: no such extension")
	ErrDisabled   = errors.New("ILX failure: the plugin is disabled")
	ErrNotRunning = errors.New("ILX failure: the extension is not running")
)

// Mode is an extension's concurrency-mode.
type Mode string

// The concurrency modes BIG-IP offers.
const (
	Single    Mode = "single"
	Dedicated Mode = "dedicated"
)

// Extension is one extension of a plugin, as the configuration runs it.
type Extension struct {
	Name string
	// Dir holds the extension's index.js (and its package.json and
	// node_modules).
	Dir  string
	Mode Mode
	// MaxRestarts and RestartInterval bound the restarts of a process
	// that exits (MaxRestarts within RestartInterval).
	MaxRestarts     int
	RestartInterval time.Duration
	// Options go to node before the script, Args after it.
	Options, Args []string
	// DataGroups are the data groups the extension reads through
	// ILXPlugin.getDataGroup (its data-groups); a change is sent to the
	// running processes without starting them again.
	DataGroups []DataGroup
}

// DataGroup is an ltm data group as an extension reads it.
type DataGroup struct {
	Name string `json:"name"` // full path, /Common/NAME
	// Type is ip, string or integer.
	Type    string   `json:"type"`
	Records []Record `json:"records"`
}

// Record is one record of a data group; Value is "" when it has none.
type Record struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Plugin is one ilx plugin: its extensions run unless Disabled.
type Plugin struct {
	Name       string // full path, /Common/NAME
	Disabled   bool
	Extensions []Extension
}

func (e Extension) same(o Extension) bool {
	return e.Name == o.Name && e.Dir == o.Dir && e.Mode == o.Mode && e.MaxRestarts == o.MaxRestarts &&
		e.RestartInterval == o.RestartInterval && slices.Equal(e.Options, o.Options) && slices.Equal(e.Args, o.Args)
}

// Options configure a Manager.
type Options struct {
	// Node is the node program ("": node, found on PATH).
	Node string
	// ModuleDir is where the f5-nodejs module is written, as
	// ModuleDir/f5-nodejs/index.js, and put on NODE_PATH (required).
	ModuleDir string
	// Procs is the number of processes of a dedicated extension (0: the
	// number of processors).
	Procs int
	// Logger receives the extensions' output and their exits.
	Logger *slog.Logger
	// RestartDelay is the pause before a process that exited is started
	// again (0: 200 ms).
	RestartDelay time.Duration
}

// Manager runs the plugins of the running configuration.
type Manager struct {
	o        Options
	mu       sync.Mutex
	plugins  map[string]*plugin
	closed   bool
	modReady bool
}

// New makes a Manager; nothing runs until Apply.
func New(o Options) *Manager {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Procs <= 0 {
		o.Procs = runtime.NumCPU()
	}
	if o.RestartDelay <= 0 {
		o.RestartDelay = 200 * time.Millisecond
	}
	return &Manager{o: o, plugins: map[string]*plugin{}}
}

// NodeAvailable reports whether the node program can be found.
func (m *Manager) NodeAvailable() bool {
	_, err := exec.LookPath(m.node())
	return err == nil
}

func (m *Manager) node() string {
	if m.o.Node != "" {
		return m.o.Node
	}
	return "node"
}

// writeModule puts f5-nodejs where NODE_PATH points.
func (m *Manager) writeModule() error {
	if m.modReady {
		return nil
	}
	dir := filepath.Join(m.o.ModuleDir, "f5-nodejs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "index.js"), f5NodeJS, 0o644); err != nil {
		return err
	}
	pkg := `{"name": "f5-nodejs", "version": "1.0.0", "main": "index.js"}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(pkg), 0o644); err != nil {
		return err
	}
	m.modReady = true
	return nil
}

// Apply brings the running plugins to ps: new extensions start, removed
// ones stop, changed ones start again; the others keep their processes.
func (m *Manager) Apply(ps []Plugin) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	if err := m.writeModule(); err != nil {
		m.o.Logger.Error("ilx: cannot write the f5-nodejs module", "dir", m.o.ModuleDir, "error", err)
	}
	seen := map[string]bool{}
	for _, p := range ps {
		seen[p.Name] = true
		cur := m.plugins[p.Name]
		if cur == nil {
			cur = &plugin{name: p.Name, exts: map[string]*ext{}}
			m.plugins[p.Name] = cur
		}
		cur.disabled.Store(p.Disabled)
		want := map[string]bool{}
		for _, e := range p.Extensions {
			want[e.Name] = true
			old := cur.exts[e.Name]
			if old != nil && old.cfg.same(e) && !p.Disabled {
				if !slices.EqualFunc(old.dataGroups(), e.DataGroups, sameDataGroup) {
					old.setDataGroups(e.DataGroups)
				}
				continue
			}
			if old != nil {
				old.stop()
				delete(cur.exts, e.Name)
			}
			if p.Disabled {
				continue
			}
			x := m.newExt(p.Name, e)
			cur.exts[e.Name] = x
			x.start()
		}
		for name, x := range cur.exts {
			if !want[name] {
				x.stop()
				delete(cur.exts, name)
			}
		}
		cur.names = nil
		for _, e := range p.Extensions {
			cur.names = append(cur.names, e.Name)
		}
	}
	for name, p := range m.plugins {
		if !seen[name] {
			for _, x := range p.exts {
				x.stop()
			}
			delete(m.plugins, name)
		}
	}
}

// Close stops every process.
func (m *Manager) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	for name, p := range m.plugins {
		for _, x := range p.exts {
			x.stop()
		}
		delete(m.plugins, name)
	}
}

// Restart starts a plugin's processes again (restart ilx plugin), and
// gives a failed extension its restarts back.
func (m *Manager) Restart(pluginName string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.plugins[pluginName]
	if p == nil {
		return fmt.Errorf("%w: %s", ErrNoPlugin, pluginName)
	}
	for name, x := range p.exts {
		x.stop()
		n := m.newExt(pluginName, x.cfg)
		n.stats.restarts.Store(x.stats.restarts.Load())
		p.exts[name] = n
		n.start()
	}
	return nil
}

// plugin is a running plugin.
type plugin struct {
	name     string
	disabled atomic.Bool
	exts     map[string]*ext
	names    []string // configured extensions, in order
	rr       atomic.Uint64
}

// Handle finds a plugin's extension, for ILX::init: the plugin must be
// configured, enabled, and have the extension.
func (m *Manager) Handle(pluginName, extName string) (*Ext, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.plugins[pluginName]
	if p == nil {
		return nil, fmt.Errorf("%w: %s", ErrNoPlugin, pluginName)
	}
	if p.disabled.Load() {
		return nil, fmt.Errorf("%w: %s", ErrDisabled, pluginName)
	}
	x := p.exts[extName]
	if x == nil {
		return nil, fmt.Errorf("%w %s in plugin %s", ErrNoExt, extName, pluginName)
	}
	return &Ext{m: m, plugin: pluginName, name: extName}, nil
}

// Ext is a handle on an extension: calls go to its processes in turn,
// whichever processes run when the call is made (a restart does not
// invalidate a handle).
type Ext struct {
	m      *Manager
	plugin string
	name   string
}

func (h *Ext) current() (*ext, error) {
	h.m.mu.Lock()
	defer h.m.mu.Unlock()
	p := h.m.plugins[h.plugin]
	if p == nil {
		return nil, fmt.Errorf("%w: %s", ErrNoPlugin, h.plugin)
	}
	if p.disabled.Load() {
		return nil, fmt.Errorf("%w: %s", ErrDisabled, h.plugin)
	}
	x := p.exts[h.name]
	if x == nil {
		return nil, fmt.Errorf("%w %s in plugin %s", ErrNoExt, h.name, h.plugin)
	}
	return x, nil
}

// Call asks the extension's method with args and waits for its reply
// (the JSON value the method passed to res.reply), no longer than ctx
// allows (ErrTimeout).
func (h *Ext) Call(ctx context.Context, method string, args []string) (json.RawMessage, error) {
	x, err := h.current()
	if err != nil {
		return nil, err
	}
	return x.call(ctx, method, args)
}

// Notify sends the method its args without waiting for an answer.
func (h *Ext) Notify(method string, args []string) error {
	x, err := h.current()
	if err != nil {
		return err
	}
	return x.notify(method, args)
}

// message is one frame either way: a call, its reply, or a streaming
// message (stream.go).
type message struct {
	ID     uint64          `json:"id"`
	Kind   string          `json:"kind,omitempty"`
	Method string          `json:"method,omitempty"`
	Params []string        `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *string         `json:"error,omitempty"`

	Flow       uint64         `json:"flow,omitempty"`
	Side       string         `json:"side,omitempty"`
	Data       []byte         `json:"data,omitempty"` // base64
	N          int            `json:"n,omitempty"`
	Text       string         `json:"text,omitempty"`
	Options    *PluginOptions `json:"options,omitempty"`
	Pool       string         `json:"pool,omitempty"`
	Member     string         `json:"member,omitempty"`
	Client     *Endpoint      `json:"client,omitempty"`
	Local      *Endpoint      `json:"local,omitempty"`
	Server     *Endpoint      `json:"server,omitempty"`
	Virtual    *VirtualInfo   `json:"virtual,omitempty"`
	DataGroups []DataGroup    `json:"datagroups,omitempty"`
}

// reply is what a pending call receives.
type reply struct {
	result json.RawMessage
	err    error
}

// ext is one extension's processes.
type ext struct {
	m      *Manager
	plugin string
	cfg    Extension
	procs  []*proc
	next   atomic.Uint64
	stopCh chan struct{}
	once   sync.Once
	mu     sync.Mutex
	// restartsAt are the times of the restarts within the interval.
	restartsAt []time.Time
	failed     atomic.Bool
	stats      extStats
	// dgs are the data groups the processes are sent (DataGroups, kept
	// up to date by Apply).
	dgs atomic.Pointer[[]DataGroup]
}

// extStats are an extension's counters (show ilx plugin).
type extStats struct {
	calls, notifies, timeouts, errors atomic.Int64
	octetsIn, octetsOut               atomic.Int64
	restarts, failures                atomic.Int64
	latencyTotal, latencyMax          atomic.Int64 // microseconds
	flows                             atomic.Int64 // streamed flows (ltm profile ilx)
}

func (m *Manager) newExt(pluginName string, e Extension) *ext {
	n := 1
	if e.Mode != Single {
		n = m.o.Procs
	}
	x := &ext{m: m, plugin: pluginName, cfg: e, stopCh: make(chan struct{})}
	dgs := e.DataGroups
	x.dgs.Store(&dgs)
	for i := range n {
		x.procs = append(x.procs, &proc{x: x, index: i, pending: map[uint64]chan reply{}})
	}
	return x
}

func (x *ext) start() {
	for _, p := range x.procs {
		go p.run()
	}
}

func (x *ext) stop() {
	x.once.Do(func() { close(x.stopCh) })
	for _, p := range x.procs {
		p.kill()
	}
}

func (x *ext) stopped() bool {
	select {
	case <-x.stopCh:
		return true
	default:
		return false
	}
}

// mayRestart records a restart, or reports that the extension has
// exhausted max-restarts within restart-interval.
func (x *ext) mayRestart() bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	now := time.Now()
	keep := x.restartsAt[:0]
	for _, t := range x.restartsAt {
		if now.Sub(t) < x.cfg.RestartInterval {
			keep = append(keep, t)
		}
	}
	x.restartsAt = keep
	if len(keep) >= x.cfg.MaxRestarts {
		return false
	}
	x.restartsAt = append(x.restartsAt, now)
	return true
}

// pick is the process the next call goes to: the running ones in turn.
func (x *ext) pick() *proc {
	n := uint64(len(x.procs))
	start := x.next.Add(1)
	for i := range n {
		p := x.procs[(start+i)%n]
		if p.live() {
			return p
		}
	}
	return nil
}

func (x *ext) call(ctx context.Context, method string, args []string) (json.RawMessage, error) {
	x.stats.calls.Add(1)
	p := x.pick()
	if p == nil {
		x.stats.errors.Add(1)
		if x.failed.Load() {
			return nil, fmt.Errorf("%w: %s failed after %d restarts", ErrNotRunning, x.cfg.Name, x.cfg.MaxRestarts)
		}
		return nil, fmt.Errorf("%w: %s", ErrNotRunning, x.cfg.Name)
	}
	start := time.Now()
	res, err := p.call(ctx, method, args)
	us := time.Since(start).Microseconds()
	x.stats.latencyTotal.Add(us)
	for {
		m := x.stats.latencyMax.Load()
		if us <= m || x.stats.latencyMax.CompareAndSwap(m, us) {
			break
		}
	}
	switch {
	case errors.Is(err, ErrTimeout):
		x.stats.timeouts.Add(1)
	case err != nil:
		x.stats.errors.Add(1)
	}
	return res, err
}

func (x *ext) notify(method string, args []string) error {
	x.stats.notifies.Add(1)
	p := x.pick()
	if p == nil {
		x.stats.errors.Add(1)
		return fmt.Errorf("%w: %s", ErrNotRunning, x.cfg.Name)
	}
	err := p.send(&message{Kind: "notify", Method: method, Params: args})
	if err != nil {
		x.stats.errors.Add(1)
	}
	return err
}

// proc is one node process of an extension.
type proc struct {
	x     *ext
	index int

	mu      sync.Mutex
	conn    net.Conn
	cmd     *exec.Cmd
	pid     int
	seq     uint64
	pending map[uint64]chan reply
	wmu     sync.Mutex
	running atomic.Bool
	// streaming holds the options of the ILXPlugin the process started;
	// nil: none (its flows, stream.go, are in flows).
	streaming atomic.Pointer[PluginOptions]
	flows     map[uint64]*sflow
}

func (p *proc) live() bool { return p.running.Load() }

// run starts the process and starts it again when it exits, within the
// extension's restart budget.
func (p *proc) run() {
	x := p.x
	log := x.m.o.Logger.With("plugin", x.plugin, "extension", x.cfg.Name, "process", p.index)
	for first := true; ; first = false {
		if x.stopped() {
			return
		}
		if !first {
			if !x.mayRestart() {
				x.failed.Store(true)
				x.stats.failures.Add(1)
				log.Error("ilx: extension failed: it exited more than max-restarts times within restart-interval",
					"max-restarts", x.cfg.MaxRestarts, "restart-interval", x.cfg.RestartInterval)
				return
			}
			select {
			case <-x.stopCh:
				return
			case <-time.After(x.m.o.RestartDelay):
			}
			x.stats.restarts.Add(1)
			log.Info("ilx: restarting extension")
		}
		err := p.once(log)
		if x.stopped() {
			return
		}
		log.Warn("ilx: extension exited", "error", err)
	}
}

// once runs the process until it exits.
func (p *proc) once(log *slog.Logger) error {
	x := p.x
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	mine := os.NewFile(uintptr(fds[0]), "ilx-ltmd")
	theirs := os.NewFile(uintptr(fds[1]), "ilx-extension")
	conn, err := net.FileConn(mine)
	mine.Close()
	if err != nil {
		theirs.Close()
		return err
	}
	args := append(append(append([]string{}, x.cfg.Options...), "index.js"), x.cfg.Args...)
	cmd := exec.Command(x.m.node(), args...)
	cmd.Dir = x.cfg.Dir
	cmd.ExtraFiles = []*os.File{theirs}
	cmd.Env = append(os.Environ(), "NODE_PATH="+x.m.o.ModuleDir)
	// Its own process group, killed whole when the extension stops. No
	// parent-death signal: Linux sends it when the forking thread ends,
	// and Go ends threads a locked goroutine leaves; an extension whose
	// ltmd is gone ends itself when its socket closes (f5-nodejs).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		theirs.Close()
		conn.Close()
		return err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		theirs.Close()
		conn.Close()
		return err
	}
	theirs.Close()
	p.mu.Lock()
	p.conn, p.cmd, p.pid = conn, cmd, cmd.Process.Pid
	p.mu.Unlock()
	p.running.Store(true)
	if x.stopped() { // stopped while starting
		p.kill()
	}
	go logOutput(log, out)
	readErr := p.read(conn)
	p.running.Store(false)
	conn.Close()
	p.failFlows() // stream.go
	werr := cmd.Wait()
	p.failPending(fmt.Errorf("%w: %s exited", ErrNotRunning, x.cfg.Name))
	if werr != nil {
		return werr
	}
	return readErr
}

// logOutput logs what the extension prints (console.log, errors), a
// line at a time [M: BIG-IP writes it to /var/log/ltm through sdmd].
func logOutput(log *slog.Logger, r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for sc.Scan() {
		log.Info("ilx: " + sc.Text())
	}
}

// read takes the process's replies until its socket closes.
func (p *proc) read(conn net.Conn) error {
	br := bufio.NewReader(conn)
	var head [4]byte
	for {
		if _, err := io.ReadFull(br, head[:]); err != nil {
			return err
		}
		n := binary.BigEndian.Uint32(head[:])
		if n > maxFrame {
			return fmt.Errorf("a reply of %d bytes (at most %d)", n, maxFrame)
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(br, body); err != nil {
			return err
		}
		p.x.stats.octetsIn.Add(int64(n) + 4)
		var m message
		if err := json.Unmarshal(body, &m); err != nil {
			continue
		}
		if m.Kind != "" {
			p.stream(&m) // stream.go
			continue
		}
		p.mu.Lock()
		ch := p.pending[m.ID]
		delete(p.pending, m.ID)
		p.mu.Unlock()
		if ch == nil {
			continue // a reply after its call gave up
		}
		if m.Error != nil {
			ch <- reply{err: errors.New(*m.Error)}
		} else {
			res := m.Result
			if res == nil {
				res = json.RawMessage("null")
			}
			ch <- reply{result: res}
		}
	}
}

func (p *proc) failPending(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for id, ch := range p.pending {
		ch <- reply{err: err}
		delete(p.pending, id)
	}
}

func (p *proc) kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil && p.cmd.Process != nil {
		_ = syscall.Kill(-p.pid, syscall.SIGKILL)
	}
	if p.conn != nil {
		p.conn.Close()
	}
}

// send writes one frame.
func (p *proc) send(m *message) error {
	body, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if len(body) > maxFrame {
		return fmt.Errorf("ILX: a call of %d bytes (at most %d)", len(body), maxFrame)
	}
	p.mu.Lock()
	conn := p.conn
	p.mu.Unlock()
	if conn == nil {
		return fmt.Errorf("%w: %s", ErrNotRunning, p.x.cfg.Name)
	}
	frame := make([]byte, 4+len(body))
	binary.BigEndian.PutUint32(frame, uint32(len(body)))
	copy(frame[4:], body)
	p.wmu.Lock()
	defer p.wmu.Unlock()
	_ = conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Write(frame); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrNotRunning, p.x.cfg.Name, err)
	}
	p.x.stats.octetsOut.Add(int64(len(frame)))
	return nil
}

func (p *proc) call(ctx context.Context, method string, args []string) (json.RawMessage, error) {
	ch := make(chan reply, 1)
	p.mu.Lock()
	p.seq++
	id := p.seq
	p.pending[id] = ch
	p.mu.Unlock()
	if args == nil {
		args = []string{}
	}
	if err := p.send(&message{ID: id, Kind: "call", Method: method, Params: args}); err != nil {
		p.mu.Lock()
		delete(p.pending, id)
		p.mu.Unlock()
		return nil, err
	}
	select {
	case r := <-ch:
		return r.result, r.err
	case <-ctx.Done():
		p.mu.Lock()
		delete(p.pending, id)
		p.mu.Unlock()
		return nil, ErrTimeout
	}
}

// ExtStats is one extension's state and counters, for show ilx plugin.
type ExtStats struct {
	Name     string
	Mode     Mode
	Status   string // running, starting, failed, stopped
	PIDs     []int
	Calls    int64
	Notifies int64
	Timeouts int64
	Errors   int64
	OctetsIn int64
	// OctetsOut are the bytes sent to the extension.
	OctetsOut int64
	Restarts  int64
	Failures  int64
	// AvgLatency and MaxLatency are the calls' round trips.
	AvgLatency, MaxLatency time.Duration
	// Flows are the client connections of ilx-profile virtuals the
	// extension was handed.
	Flows int64
}

// Stats are the plugin's extensions' state and counters, in the order
// configured; ok is false for a plugin not running.
func (m *Manager) Stats(pluginName string) (out []ExtStats, disabled, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.plugins[pluginName]
	if p == nil {
		return nil, false, false
	}
	for _, name := range p.names {
		s := ExtStats{Name: name, Status: "stopped"}
		if x := p.exts[name]; x != nil {
			s.Mode = x.cfg.Mode
			s.Status = "starting"
			for _, pr := range x.procs {
				if pr.live() {
					s.Status = "running"
					pr.mu.Lock()
					s.PIDs = append(s.PIDs, pr.pid)
					pr.mu.Unlock()
				}
			}
			if s.Status != "running" && x.failed.Load() {
				s.Status = "failed"
			}
			st := &x.stats
			s.Calls, s.Notifies, s.Timeouts, s.Errors = st.calls.Load(), st.notifies.Load(), st.timeouts.Load(), st.errors.Load()
			s.OctetsIn, s.OctetsOut = st.octetsIn.Load(), st.octetsOut.Load()
			s.Restarts, s.Failures = st.restarts.Load(), st.failures.Load()
			s.Flows = st.flows.Load()
			if s.Calls > 0 {
				s.AvgLatency = time.Duration(st.latencyTotal.Load()/s.Calls) * time.Microsecond
			}
			s.MaxLatency = time.Duration(st.latencyMax.Load()) * time.Microsecond
		}
		out = append(out, s)
	}
	return out, p.disabled.Load(), true
}

// ResetStats zeroes a plugin's counters (reset-stats ilx plugin).
func (m *Manager) ResetStats(pluginName string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.plugins[pluginName]
	if p == nil {
		return
	}
	for _, x := range p.exts {
		st := &x.stats
		for _, c := range []*atomic.Int64{&st.calls, &st.notifies, &st.timeouts, &st.errors, &st.octetsIn, &st.octetsOut, &st.latencyTotal, &st.latencyMax, &st.flows} {
			c.Store(0)
		}
	}
}

// DefaultIndexJS is the index.js a new extension of a workspace starts
// with (create ilx workspace W extension E) [M: after the shape of
// BIG-IP's own template: the module, a server, a sample method, listen].
const DefaultIndexJS = `/* Import the f5-nodejs module. */
var f5 = require('f5-nodejs');

/* Create a new rpc server for listening to TCL iRule calls. */
var ilx = new f5.ILXServer();

/* Start listening for ILX::call and ILX::notify events. */
ilx.listen();

/* Add a method and expect a simple response. */
ilx.addMethod('<REMOVE_ME>', function(req, res) {
  /* Reply with the arguments the iRule passed, as a Tcl list. */
  res.reply(req.params());
});
`

// DefaultPackageJSON is a new extension's package.json.
func DefaultPackageJSON(ext string) string {
	return fmt.Sprintf(`{
  "name": %q,
  "version": "0.1.0",
  "description": "",
  "main": "index.js",
  "dependencies": {}
}
`, strings.ToLower(ext))
}
