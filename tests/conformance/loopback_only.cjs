// Preloaded into the conformance runner (node --require): its scenario servers call
// listen(0), which binds every interface. This binds them to 127.0.0.1 instead, so that
// the test servers are reachable from this machine only. The runner reads the port right
// after listen(), so the bind must stay synchronous: listen(port, host) would first resolve
// the host asynchronously, so the handle is set up directly, as listen does for an IP.
"use strict";
const net = require("net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const portOnly =
    typeof args[0] === "number" && (args.length === 1 || typeof args[1] === "function");
  if (!portOnly || typeof this._listen2 !== "function") {
    return listen.apply(this, args);
  }
  if (typeof args[1] === "function") {
    this.once("listening", args[1]);
  }
  this._listen2("127.0.0.1", args[0], 4, 511, undefined, 0);
  return this;
};
