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

var net = require('net');

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

// ILXPluginOptions are the options an ILXServer is made with; kept for
// the extensions that pass them.
function ILXPluginOptions(opts) {
  opts = opts || {};
  this.debug = !!opts.debug;
  this.timeout = opts.timeout || 5000;
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
  var self = this;
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
};

ILXServer.prototype._read = function (chunk) {
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
    this._dispatch(msg);
  }
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

module.exports = {
  ILXServer: ILXServer,
  ILXPluginOptions: ILXPluginOptions,
  ILXRequest: ILXRequest,
  ILXResponse: ILXResponse,
};
