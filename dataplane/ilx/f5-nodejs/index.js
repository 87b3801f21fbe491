'use strict';
// f5-nodejs: the module iRules LX extensions require, as BIG-IP ships it
// (var f5 = require('f5-nodejs'); var ilx = new f5.ILXServer(); ...).
//
// ltmd starts the extension with one end of a Unix socket pair as file
// descriptor 3 and speaks to it in frames: a 4-byte big-endian length,
// then a JSON object.
//   ltmd -> extension: {"id":N,"kind":"call"|"notify","method":M,"params":[...]}
//   extension -> ltmd: {"id":N,"result":V} or {"id":N,"error":"text"}
// A notify gets no answer.
//
// Streaming (ltm profile ilx; ILXPlugin, ILXFlow, ILXStream) uses the same
// socket; each message has a kind and a flow:
//   extension -> ltmd: start {options}; allow {flow, pool, member};
//     write {flow, side, data (base64)}; end {flow, side}; destroy {flow};
//     ack {flow, side, n}
//   ltmd -> extension: initialized {datagroups}; datagroups {datagroups};
//     open {flow, client, local, virtual}; connected {flow, server, local};
//     data {flow, side, data}; end {flow, side}; ack {flow, side, n};
//     error {flow, side, text}; close {flow}
// Each direction of a flow has WINDOW bytes of credit: what one end sent
// and the other has not acknowledged yet.

var net = require('net');
var Duplex = require('stream').Duplex;
var EventEmitter = require('events').EventEmitter;
var util = require('util');

var WINDOW = 64 * 1024;

var MAX_FRAME = 16 * 1024 * 1024;

// ILXRequest is what a method handler reads: the arguments the rule
// passed after the method's name.
function ILXRequest(msg) {
  this._msg = msg;
}
ILXRequest.prototype.params = function () {
  return this._msg.params || [];
};
ILXRequest.prototype.method = function () {
  return this._msg.method;
};
ILXRequest.prototype.isNotify = function () {
  return this._msg.kind === 'notify';
};

// ILXResponse answers one ILX::call: reply(value) once; a string, a
// number, an array or an object (which the rule gets as a Tcl list).
function ILXResponse(server, msg) {
  this._server = server;
  this._msg = msg;
  this._done = false;
}
ILXResponse.prototype.reply = function (value) {
  if (this._done || this._msg.kind !== 'call') {
    this._done = true;
    return;
  }
  this._done = true;
  this._server._send({ id: this._msg.id, result: value === undefined ? null : value });
};
// replyError fails the rule's ILX::call with a Tcl error carrying text.
ILXResponse.prototype.replyError = function (text) {
  if (this._done || this._msg.kind !== 'call') {
    this._done = true;
    return;
  }
  this._done = true;
  this._server._send({ id: this._msg.id, error: String(text) });
};

// ILXPluginOptions are the options an ILXServer or an ILXPlugin is
// started with. handleClientData and handleServerData (default true)
// send that side's bytes to the extension (false: straight across);
// handleClientOpen (default false) makes the extension call
// flow.client.allow() before the server side connects (false: it
// connects as soon as the connect handler returns).
function ILXPluginOptions(opts) {
  opts = opts || {};
  this.debug = !!opts.debug;
  this.timeout = opts.timeout || 5000;
  this.handleClientData = opts.handleClientData === undefined ? true : !!opts.handleClientData;
  this.handleServerData = opts.handleServerData === undefined ? true : !!opts.handleServerData;
  this.handleClientOpen = !!opts.handleClientOpen;
}

// ILXServer takes the rules' ILX::call and ILX::notify.
function ILXServer(methods, options) {
  this._methods = {};
  this._default = null;
  this._sock = null;
  this._buf = Buffer.alloc(0);
  this.options = options instanceof ILXPluginOptions ? options : new ILXPluginOptions(options);
  if (Array.isArray(methods)) {
    for (var i = 0; i < methods.length; i++) {
      for (var name in methods[i]) {
        this.addMethod(name, methods[i][name]);
      }
    }
  } else if (methods && typeof methods === 'object') {
    for (var n in methods) {
      this.addMethod(n, methods[n]);
    }
  }
}

ILXServer.prototype.addMethod = function (name, callback) {
  if (typeof callback !== 'function') {
    throw new TypeError('ILXServer.addMethod: the callback of ' + name + ' is not a function');
  }
  this._methods[String(name)] = callback;
};

ILXServer.prototype.removeMethod = function (name) {
  delete this._methods[String(name)];
};

ILXServer.prototype.setDefaultMethod = function (callback) {
  this._default = callback;
};

// listen starts taking calls; methods may be added before or after.
ILXServer.prototype.listen = function () {
  if (this._sock) {
    return;
  }
  this._sock = channel();
  this._sock.server = this;
};

ILXServer.prototype._dispatch = function (msg) {
  var fn = this._methods[msg.method] || this._default;
  var res = new ILXResponse(this, msg);
  if (!fn) {
    res.replyError('ERR_NOT_FOUND: no method ' + msg.method);
    return;
  }
  try {
    fn(new ILXRequest(msg), res);
  } catch (e) {
    res.replyError(e && e.message ? e.message : String(e));
  }
};

ILXServer.prototype._send = function (obj) {
  this._sock.send(obj);
};

// Channel is the process's one socket to ltmd, shared by its ILXServer
// and its ILXPlugin.
function Channel() {
  var self = this;
  this.server = null;
  this.plugin = null;
  this._buf = Buffer.alloc(0);
  this._sock = new net.Socket({ fd: 3, readable: true, writable: true });
  this._sock.on('data', function (chunk) {
    self._read(chunk);
  });
  this._sock.on('error', function () {
    process.exit(0);
  });
  this._sock.on('end', function () {
    process.exit(0);
  });
}

var theChannel = null;

function channel() {
  if (!theChannel) {
    theChannel = new Channel();
  }
  return theChannel;
}

Channel.prototype._read = function (chunk) {
  this._buf = this._buf.length ? Buffer.concat([this._buf, chunk]) : chunk;
  while (this._buf.length >= 4) {
    var n = this._buf.readUInt32BE(0);
    if (n > MAX_FRAME) {
      process.exit(2);
    }
    if (this._buf.length < 4 + n) {
      return;
    }
    var body = this._buf.subarray(4, 4 + n);
    this._buf = this._buf.subarray(4 + n);
    var msg;
    try {
      msg = JSON.parse(body.toString('utf8'));
    } catch (e) {
      continue;
    }
    if (msg.kind === 'call' || msg.kind === 'notify') {
      if (this.server) {
        this.server._dispatch(msg);
      } else if (msg.kind === 'call') {
        this.send({ id: msg.id, error: 'ERR_NOT_FOUND: the extension has no ILXServer listening' });
      }
    } else if (this.plugin) {
      this.plugin._message(msg);
    }
  }
};

Channel.prototype.send = function (obj) {
  var text;
  try {
    text = JSON.stringify(obj);
  } catch (e) {
    text = JSON.stringify({ id: obj.id, error: 'reply is not JSON: ' + e.message });
  }
  var body = Buffer.from(text, 'utf8');
  var head = Buffer.alloc(4);
  head.writeUInt32BE(body.length, 0);
  this._sock.write(Buffer.concat([head, body]));
};

// ILXStream is one side of a flow (flow.client, flow.server): a duplex
// stream, as BIG-IP's extends net.Socket. Reading gives what that side's
// peer sent; writing sends to it; end() half-closes it.
function ILXStream(flow, side) {
  Duplex.call(this, { allowHalfOpen: true, autoDestroy: false });
  this._flow = flow;
  this._side = side;
  this._unacked = 0; // written to ltmd, not acknowledged
  this._wcb = null; // a write's callback waiting for credit
  this._held = []; // writes before the server side is connected
  this._owed = 0; // read and taken, not acknowledged yet
  this._want = true; // the reader takes more
  this._ended = false;
  this.remoteAddress = undefined;
  this.remotePort = undefined;
  this.remoteFamily = undefined;
  this.localAddress = undefined;
  this.localPort = undefined;
  // When nobody else handles a side's end, it passes on to the other
  // side, as pipe() would [M].
  this.on('end', function () {
    if (this.listenerCount('end') === 1 && !flow._closed) {
      (side === 'client' ? flow.server : flow.client).end();
    }
  });
}
util.inherits(ILXStream, Duplex);

ILXStream.prototype._setEnds = function (remote, local) {
  if (remote) {
    this.remoteAddress = remote.address;
    this.remotePort = remote.port;
    this.remoteFamily = remote.family;
  }
  if (local) {
    this.localAddress = local.address;
    this.localPort = local.port;
  }
};

ILXStream.prototype._connected = function () {
  return this._side === 'client' || this._flow._connected;
};

ILXStream.prototype._write = function (chunk, encoding, cb) {
  if (this._flow._closed) {
    cb(new Error('ILXStream: the flow is closed'));
    return;
  }
  if (!this._connected()) {
    this._held.push([chunk, cb]);
    return;
  }
  this._flow._send({ kind: 'write', side: this._side, data: chunk.toString('base64') });
  this._unacked += chunk.length;
  if (this._unacked < WINDOW) {
    cb();
  } else {
    this._wcb = cb;
  }
};

ILXStream.prototype._final = function (cb) {
  if (!this._connected()) {
    this._held.push([null, cb]);
    return;
  }
  if (!this._flow._closed) {
    this._flow._send({ kind: 'end', side: this._side });
  }
  cb();
};

// _flush sends the writes held until the server side connected.
ILXStream.prototype._flush = function () {
  var held = this._held;
  this._held = [];
  for (var i = 0; i < held.length; i++) {
    if (held[i][0] === null) {
      this._final(held[i][1]);
    } else {
      this._write(held[i][0], null, held[i][1]);
    }
  }
};

ILXStream.prototype._acked = function (n) {
  this._unacked -= n;
  if (this._wcb && this._unacked < WINDOW) {
    var cb = this._wcb;
    this._wcb = null;
    cb();
  }
  this._flow._giveCredit();
};

// _pending is what this side has written that ltmd has not taken yet.
ILXStream.prototype._pending = function () {
  return this._unacked + this.writableLength;
};

ILXStream.prototype._read = function () {
  this._want = true;
  this._credit();
};

ILXStream.prototype._data = function (buf) {
  this._owed += buf.length;
  this._want = this.push(buf);
  var self = this;
  setImmediate(function () {
    self._credit();
  });
};

// _credit acknowledges what was read once the reader takes more and the
// flow's own writes are below their window, so that a handler that
// writes what it reads to a slower side slows its source down.
ILXStream.prototype._credit = function () {
  if (this._owed > 0 && this._want && !this._flow._closed && this._flow._writesBelow()) {
    this._flow._send({ kind: 'ack', side: this._side, n: this._owed });
    this._owed = 0;
  }
};

// allow lets the client's connection go on to the server (flow.client
// only; with ILXPluginOptions.handleClientOpen, before any server write
// is sent). The server is the one flow.lbSelect chose, else the
// virtual's pool's balancing.
ILXStream.prototype.allow = function () {
  if (this._side !== 'client') {
    throw new Error('ILXStream.allow: only flow.client can allow a flow');
  }
  this._flow._allow();
};

// destroy ends the whole flow at once (both sides are reset).
ILXStream.prototype._destroy = function (err, cb) {
  this._flow._destroyFlow();
  cb(err);
};

// ILXFlow is one client connection through an ilx-profile virtual:
// client and server streams, the virtual, the server choice.
function ILXFlow(plugin, msg) {
  EventEmitter.call(this);
  this._plugin = plugin;
  this._id = msg.flow;
  this._connected = false;
  this._allowed = false;
  this._closed = false;
  this._lb = null;
  this.client = new ILXStream(this, 'client');
  this.server = new ILXStream(this, 'server');
  this.client._setEnds(msg.client, msg.local);
  var v = msg.virtual || {};
  this.virtual = { name: v.name, address: v.address, port: v.port, routeDomain: 0 };
}
util.inherits(ILXFlow, EventEmitter);

ILXFlow.prototype._send = function (obj) {
  obj.flow = this._id;
  this._plugin._chan.send(obj);
};

ILXFlow.prototype._writesBelow = function () {
  return this.client._pending() < WINDOW && this.server._pending() < WINDOW;
};

ILXFlow.prototype._giveCredit = function () {
  this.client._credit();
  this.server._credit();
};

// lbSelect chooses the server before the flow is allowed: options (an
// ILXLbOptions or a plain object) name a pool, a member (ADDRESS:PORT,
// or address and port) of it, or both; a member alone is one of the
// virtual's pool. It returns the choice.
ILXFlow.prototype.lbSelect = function (options) {
  if (this._allowed) {
    throw new Error('ILXFlow.lbSelect: the server side is already chosen');
  }
  var o = options instanceof ILXLbOptions ? options : new ILXLbOptions(options);
  this._lb = o;
  return o;
};

ILXFlow.prototype._allow = function () {
  if (this._allowed || this._closed) {
    return;
  }
  this._allowed = true;
  var m = { kind: 'allow' };
  if (this._lb) {
    if (this._lb.pool) {
      m.pool = String(this._lb.pool);
    }
    var member = this._lb.member;
    if (!member && this._lb.address) {
      member = this._lb.address.indexOf(':') >= 0 ? '[' + this._lb.address + ']:' + this._lb.port : this._lb.address + ':' + this._lb.port;
    }
    if (member) {
      m.member = String(member);
    }
  }
  this._send(m);
};

// destroy resets both sides at once; the flow is no longer usable.
ILXFlow.prototype.destroy = function () {
  this._destroyFlow();
};

ILXFlow.prototype._destroyFlow = function () {
  if (this._closed) {
    return;
  }
  this._send({ kind: 'destroy' });
  this._close();
};

ILXFlow.prototype._close = function () {
  if (this._closed) {
    return;
  }
  this._closed = true;
  delete this._plugin._flows[this._id];
  var streams = [this.client, this.server];
  for (var i = 0; i < streams.length; i++) {
    var st = streams[i];
    if (!st._ended) {
      st._ended = true;
      st.push(null);
    }
    if (!st.destroyed) {
      Duplex.prototype.destroy.call(st);
    }
  }
  this.emit('close');
};

// _error reports an error of a side: on the stream when someone listens,
// else on the flow, else the log (an unheard 'error' would end the
// process).
ILXFlow.prototype._error = function (side, text) {
  var st = side === 'server' ? this.server : this.client;
  if (st.listenerCount('error') > 0) {
    st.emit('error', text);
  } else if (this.listenerCount('error') > 0) {
    this.emit('error', text);
  } else {
    console.log('ILXFlow ' + side + ' error: ' + text);
  }
};

// ILXLbOptions name the server of a flow (ILXFlow.lbSelect).
function ILXLbOptions(opts) {
  opts = opts || {};
  this.pool = opts.pool;
  this.member = opts.member;
  this.address = opts.address;
  this.port = opts.port;
}

// ILXPlugin takes the client connections of the virtual servers whose
// ilx profile names this plugin; a process has at most one.
function ILXPlugin() {
  if (ILXPlugin._made) {
    throw new Error('ILXPlugin: a process has at most one ILXPlugin');
  }
  ILXPlugin._made = true;
  EventEmitter.call(this);
  this._flows = {};
  this._dgs = null;
  this._chan = null;
  this._opts = null;
}
util.inherits(ILXPlugin, EventEmitter);

// start starts taking flows with options (an ILXPluginOptions or a plain
// object); 'initialized' follows once ltmd answers.
ILXPlugin.prototype.start = function (options) {
  if (this._chan) {
    return;
  }
  this._opts = options instanceof ILXPluginOptions ? options : new ILXPluginOptions(options);
  this._chan = channel();
  this._chan.plugin = this;
  this._chan.send({
    id: 0,
    kind: 'start',
    options: { handleClientData: this._opts.handleClientData, handleServerData: this._opts.handleServerData },
  });
};

// getDataGroup returns the data group of the extension's data-groups
// named (its full path, /Common/NAME), after 'initialized'.
ILXPlugin.prototype.getDataGroup = function (name) {
  if (!this._dgs) {
    throw new Error('ILXPlugin.getDataGroup: called before the initialized event');
  }
  var dg = this._dgs[name] || (name.charAt(0) !== '/' && this._dgs['/Common/' + name]);
  if (!dg) {
    throw new Error('ILXPlugin.getDataGroup: ' + name + ' is not among the extension\'s data-groups');
  }
  return dg;
};

ILXPlugin.prototype._setDataGroups = function (list) {
  var old = this._dgs || {};
  var dgs = {};
  list = list || [];
  for (var i = 0; i < list.length; i++) {
    var d = list[i];
    var dg = old[d.name] || new ILXDatagroup();
    dg._set(d);
    dgs[d.name] = dg;
  }
  this._dgs = dgs;
};

ILXPlugin.prototype._message = function (msg) {
  var f;
  switch (msg.kind) {
    case 'initialized':
      this._setDataGroups(msg.datagroups);
      this.emit('initialized');
      return;
    case 'datagroups':
      this._setDataGroups(msg.datagroups);
      return;
    case 'open':
      f = new ILXFlow(this, msg);
      this._flows[msg.flow] = f;
      try {
        this.emit('connect', f);
      } catch (e) {
        console.log('ILXPlugin connect handler: ' + (e && e.stack ? e.stack : e));
        f._destroyFlow();
        return;
      }
      if (!this._opts.handleClientOpen) {
        f._allow();
      }
      return;
  }
  f = this._flows[msg.flow];
  if (!f) {
    return;
  }
  var st = msg.side === 'server' ? f.server : f.client;
  switch (msg.kind) {
    case 'connected':
      f._connected = true;
      f.server._setEnds(msg.server, msg.local);
      f.server.emit('connect');
      f.server._flush();
      break;
    case 'data':
      st._data(Buffer.from(msg.data || '', 'base64'));
      break;
    case 'end':
      st._ended = true;
      st.push(null);
      break;
    case 'ack':
      st._acked(msg.n);
      break;
    case 'error':
      f._error(msg.side, msg.text);
      break;
    case 'close':
      f._close();
      break;
  }
};

// ILXDatagroup reads an ltm data group (internal or external) named in
// the extension's data-groups, as the rules' class command does; ltmd
// sends its records again when they change.
function ILXDatagroup() {
  this.name = undefined;
  this._type = 0;
  this._records = [];
}

ILXDatagroup.prototype.Type = ILXDatagroup.Type = { IP: 1, STRING: 2, INTEGER: 3 };
ILXDatagroup.prototype.Options = ILXDatagroup.Options = { NAME: 1, VALUE: 2, ELEMENT: 3 };

ILXDatagroup.prototype._set = function (d) {
  this.name = d.name;
  this._type = d.type === 'ip' ? 1 : d.type === 'integer' ? 3 : 2;
  var rs = [];
  var recs = d.records || [];
  for (var i = 0; i < recs.length; i++) {
    var r = { name: recs[i].name, value: recs[i].value || '' };
    if (this._type === 1) {
      r._net = parseNet(r.name);
    }
    rs.push(r);
  }
  this._records = rs;
};

ILXDatagroup.prototype.getType = function () {
  return this._type;
};

function pick(r, options, dflt) {
  var ret = options && options.return ? options.return : dflt;
  if (ret === 1) {
    return r.name;
  }
  if (ret === 2) {
    return r.value;
  }
  return { name: r.name, value: r.value };
}

// lookup finds the record whose name is key (for an ip data group, the
// network key is in, longest first) and returns its value, or true when
// it has none (options.return: NAME, VALUE or ELEMENT); undefined when
// none matches.
ILXDatagroup.prototype.lookup = function (key, options) {
  var best = null;
  if (this._type === 1) {
    var a = parseNet(String(key));
    if (!a) {
      return undefined;
    }
    for (var i = 0; i < this._records.length; i++) {
      var n = this._records[i]._net;
      if (n && n.bits === a.bits && (!best || n.len > best._net.len) && inNet(a.addr, n)) {
        best = this._records[i];
      }
    }
  } else {
    var k = String(key);
    for (var j = 0; j < this._records.length; j++) {
      var rn = this._records[j].name;
      if (rn === k || (this._type === 3 && Number(rn) === Number(k))) {
        best = this._records[j];
        break;
      }
    }
  }
  if (!best) {
    return undefined;
  }
  if (options && options.return) {
    return pick(best, options);
  }
  return best.value !== '' ? best.value : true;
};

ILXDatagroup.prototype._search = function (test, options) {
  var all = options && options.all;
  var out = [];
  for (var i = 0; i < this._records.length; i++) {
    if (test(this._records[i].name)) {
      var v = pick(this._records[i], options, 1);
      if (!all) {
        return v;
      }
      out.push(v);
    }
  }
  return all ? out : undefined;
};

// The searches compare the records' names with key as the rules' class
// match does (starts_with, ends_with, contains, equals): the first match
// (options.all: every match), its name unless options.return says.
ILXDatagroup.prototype.searchStartsWith = function (key, options) {
  key = String(key);
  return this._search(function (n) { return n.startsWith(key); }, options);
};
ILXDatagroup.prototype.searchEndsWith = function (key, options) {
  key = String(key);
  return this._search(function (n) { return n.endsWith(key); }, options);
};
ILXDatagroup.prototype.searchContains = function (key, options) {
  key = String(key);
  return this._search(function (n) { return n.indexOf(key) >= 0; }, options);
};
ILXDatagroup.prototype.searchEquals = function (key, options) {
  key = String(key);
  return this._search(function (n) { return n === key; }, options);
};

// forEach calls callback(index, element) for each record, read only,
// until it returns true; it reports whether it was stopped.
ILXDatagroup.prototype.forEach = function (callback) {
  for (var i = 0; i < this._records.length; i++) {
    var r = this._records[i];
    if (callback(i, Object.freeze({ name: r.name, value: r.value })) === true) {
      return true;
    }
  }
  return false;
};

// parseNet reads an address or network (ADDRESS/LEN, or a host) into
// {bits, addr (BigInt), len}; null when it is neither.
function parseNet(text) {
  var slash = text.indexOf('/');
  var a = slash >= 0 ? text.slice(0, slash) : text;
  var pct = a.indexOf('%');
  if (pct >= 0) {
    a = a.slice(0, pct);
  }
  var kind = net.isIP(a);
  if (kind === 0) {
    return null;
  }
  var bits = kind === 4 ? 32 : 128;
  var v = BigInt(0);
  if (kind === 4) {
    var parts = a.split('.');
    for (var i = 0; i < 4; i++) {
      v = (v << BigInt(8)) | BigInt(Number(parts[i]));
    }
  } else {
    var halves = a.split('::');
    var head = halves[0] ? halves[0].split(':') : [];
    var tail = halves.length > 1 && halves[1] ? halves[1].split(':') : [];
    var words = [];
    var conv = function (list) {
      for (var j = 0; j < list.length; j++) {
        if (list[j].indexOf('.') >= 0) {
          var q = list[j].split('.').map(Number);
          words.push((q[0] << 8) | q[1], (q[2] << 8) | q[3]);
        } else {
          words.push(parseInt(list[j], 16));
        }
      }
    };
    conv(head);
    var headLen = words.length;
    var tw = [];
    var saved = words;
    words = tw;
    conv(tail);
    words = saved;
    var fill = 8 - headLen - tw.length;
    for (var f = 0; f < fill; f++) {
      words.push(0);
    }
    words = words.concat(tw);
    for (var w = 0; w < 8; w++) {
      v = (v << BigInt(16)) | BigInt(words[w] || 0);
    }
  }
  var len = slash >= 0 ? Number(text.slice(slash + 1)) : bits;
  if (!(len >= 0 && len <= bits)) {
    return null;
  }
  return { bits: bits, addr: v, len: len };
}

function inNet(addr, n) {
  var shift = BigInt(n.bits - n.len);
  return addr >> shift === n.addr >> shift;
}

module.exports = {
  ILXServer: ILXServer,
  ILXPluginOptions: ILXPluginOptions,
  ILXRequest: ILXRequest,
  ILXResponse: ILXResponse,
  ILXPlugin: ILXPlugin,
  ILXFlow: ILXFlow,
  ILXStream: ILXStream,
  ILXLbOptions: ILXLbOptions,
  ILXDatagroup: ILXDatagroup,
};
