// The boundary between a JavaScript program and its assert tests (node, no packages).
//
// The same file runs on both sides (`verifiers.code.boundary`, the Python twin is
// codec.py + server.py + tester.py):
// - serve(exports): the program's side. Answers the tests' requests on the channel
//   (REFEREE_CHANNEL_IN / REFEREE_CHANNEL_OUT name the fds): call a name or a held object,
//   or read a property. Results cross as plain values only; anything else stays here and
//   the tests get a handle they can call but never compare.
// - test(): the tests' side. Reads {"names": [...]} and the test code on stdin, binds each
//   name to a synchronous proxy, runs the test with the real `require`, and prints the
//   verdict as the last line: VERDICT_MARK + {"passed", "message", "flags",
//   "harness_error"}.
//
// Plain values: null, booleans, strings, numbers ({"f": "NaN"|"Infinity"|"-Infinity"|
// "-0"} for the ones JSON lacks), {"u": 0} undefined, {"n": "123"} BigInt, {"l": [...]}
// arrays, {"o": [[key, value], ...]} plain objects (prototype Object.prototype or null,
// data properties only), {"m": [[k, v], ...]} Maps, {"s": [...]} Sets.
"use strict";

const fs = require("fs");

const VERDICT_MARK = "@@referee-verdict@@ ";
const MAX_DEPTH = 64;
const MAX_ITEMS = 1000000;

class Unsupported extends Error {}

// `refer` may name a non-plain value by a handle the other side holds ({"r": n}): the tests
// send the program's own objects back to it that way.
function encode(value, refer) {
  const budget = { left: MAX_ITEMS, refer };
  return encodeValue(value, 0, budget);
}

function take(budget, count) {
  budget.left -= count;
  if (budget.left < 0) throw new Unsupported("a value with more than " + MAX_ITEMS + " items");
}

function encodeNumber(value) {
  if (Number.isNaN(value)) return { f: "NaN" };
  if (value === Infinity) return { f: "Infinity" };
  if (value === -Infinity) return { f: "-Infinity" };
  if (Object.is(value, -0)) return { f: "-0" };
  return value;
}

function encodeValue(value, depth, budget) {
  if (depth > MAX_DEPTH) throw new Unsupported("a value nested deeper than " + MAX_DEPTH);
  if (value === null || typeof value === "boolean" || typeof value === "string") return value;
  if (typeof value === "number") return encodeNumber(value);
  if (value === undefined) return { u: 0 };
  if (typeof value === "bigint") return { n: value.toString() };
  const handle = budget.refer ? budget.refer(value) : undefined;
  if (handle !== undefined) return { r: handle };
  if (typeof value !== "object") throw new Unsupported(typeof value);
  const proto = Object.getPrototypeOf(value);
  if (Array.isArray(value) && proto === Array.prototype) {
    take(budget, value.length);
    return { l: Array.from(value, (v) => encodeValue(v, depth + 1, budget)) };
  }
  if (proto === Map.prototype) {
    take(budget, value.size);
    return { m: Array.from(value, ([k, v]) => [encodeValue(k, depth + 1, budget), encodeValue(v, depth + 1, budget)]) };
  }
  if (proto === Set.prototype) {
    take(budget, value.size);
    return { s: Array.from(value, (v) => encodeValue(v, depth + 1, budget)) };
  }
  if (proto === Object.prototype || proto === null) {
    const pairs = [];
    for (const key of Reflect.ownKeys(value)) {
      const desc = Object.getOwnPropertyDescriptor(value, key);
      if (typeof key !== "string" || !("value" in desc)) throw new Unsupported("an object with accessors");
      if (desc.enumerable) pairs.push([key, encodeValue(desc.value, depth + 1, budget)]);
    }
    take(budget, pairs.length);
    return { o: pairs };
  }
  throw new Unsupported((proto && proto.constructor && proto.constructor.name) || "object");
}

function decode(data, resolve) {
  if (data === null || typeof data !== "object") return data;
  const keys = Object.keys(data);
  if (keys.length !== 1) throw new Error("malformed value");
  const tag = keys[0];
  const body = data[tag];
  if (tag === "r" && resolve && typeof body === "number") return resolve(body);
  if (tag === "f") return body === "-0" ? -0 : Number(body);
  if (tag === "u") return undefined;
  if (tag === "n") return BigInt(body);
  const inner = (v) => decode(v, resolve);
  if (tag === "l") return body.map(inner);
  if (tag === "s") return new Set(body.map(inner));
  if (tag === "m") return new Map(body.map(([k, v]) => [inner(k), inner(v)]));
  if (tag === "o") {
    const out = {};
    for (const [k, v] of body) out[k] = inner(v);
    return out;
  }
  throw new Error("malformed value");
}

// --- the channel: blocking line I/O on two fds ---------------------------------------------

class Channel {
  constructor() {
    this.input = Number(process.env.REFEREE_CHANNEL_IN);
    this.output = Number(process.env.REFEREE_CHANNEL_OUT);
    this.pending = Buffer.alloc(0);
  }

  send(message) {
    const data = Buffer.from(JSON.stringify(message) + "\n", "utf8");
    let offset = 0;
    while (offset < data.length) offset += fs.writeSync(this.output, data, offset);
  }

  receive() {
    const chunk = Buffer.alloc(65536);
    for (;;) {
      const newline = this.pending.indexOf(10);
      if (newline >= 0) {
        const line = this.pending.subarray(0, newline).toString("utf8");
        this.pending = this.pending.subarray(newline + 1);
        return line;
      }
      let read;
      try {
        read = fs.readSync(this.input, chunk, 0, chunk.length, null);
      } catch (error) {
        if (error.code === "EAGAIN") continue;
        return null;
      }
      if (read === 0) return null;
      this.pending = Buffer.concat([this.pending, chunk.subarray(0, read)]);
    }
  }
}

// --- the program's side ---------------------------------------------------------------------

function serve(exports) {
  const channel = new Channel();
  const objects = new Map();
  for (;;) {
    const line = channel.receive();
    if (line === null) return;
    channel.send(answer(JSON.parse(line), exports, objects));
  }
}

function answer(request, exports, objects) {
  let value;
  try {
    const target = typeof request.target === "number" ? objects.get(request.target) : exports[request.target];
    if (target === undefined && typeof request.target === "string" && !(request.target in exports)) {
      return { missing: request.target };
    }
    if (request.op === "get") {
      value = target[request.attr];
      if (typeof value === "function") value = value.bind(target);
    } else {
      const resolve = (handle) => objects.get(handle);
      value = target(...request.args.map((arg) => decode(arg, resolve)));
    }
  } catch (error) {
    const name = error && error.constructor ? String(error.constructor.name) : "Error";
    return { raise: [name, String(error && error.message).slice(0, 300)] };
  }
  try {
    return { ok: encode(value) };
  } catch (error) {
    if (!(error instanceof Unsupported)) throw error;
    const handle = objects.size + 1;
    objects.set(handle, value);
    return { ref: handle, type: error.message };
  }
}

// --- the tests' side ------------------------------------------------------------------------

class ProgramGone extends Error {}
class HarnessError extends Error {}

const ERRORS = { Error, TypeError, RangeError, ReferenceError, SyntaxError, EvalError, URIError };

function makeLink(channel) {
  const link = { gone: false, flags: new Set() };
  link.request = (request) => {
    if (link.gone) throw new ProgramGone("the program is no longer running");
    let line = null;
    try {
      channel.send(request);
      line = channel.receive();
    } catch (error) {
      line = null;
    }
    if (line === null) {
      link.gone = true;
      link.flags.add("early_exit");
      throw new ProgramGone("the program exited before the tests finished");
    }
    const reply = JSON.parse(line);
    if ("ok" in reply) return decode(reply.ok);
    if ("ref" in reply) {
      link.flags.add("custom_type");
      return programObject(link, reply.ref, String(reply.type));
    }
    if ("missing" in reply) throw new ReferenceError(reply.missing + " is not defined by the program");
    const [name, message] = reply.raise;
    const Kind = ERRORS[name] || Error;
    throw new Kind(ERRORS[name] ? message : "the program threw " + name + ": " + message);
  };
  return link;
}

const HANDLES = new WeakMap();

function plainArgs(args) {
  try {
    return args.map((arg) => encode(arg, (value) => HANDLES.get(value)));
  } catch (error) {
    if (error instanceof Unsupported) {
      throw new HarnessError("the test passes a " + error.message + " to the program; only plain values cross");
    }
    throw error;
  }
}

function remote(link, target) {
  return function (...args) {
    return link.request({ op: "call", target, args: plainArgs(args) });
  };
}

function programObject(link, handle, type) {
  const refuse = () => {
    throw new TypeError("the program returned a " + type + ", not plain data: it cannot be compared");
  };
  const call = remote(link, handle);
  const proxy = new Proxy(call, {
    get(_target, key) {
      if (typeof key !== "string") refuse();
      return link.request({ op: "get", target: handle, attr: key });
    },
    apply(_target, _self, args) {
      return call(...args);
    },
    has: refuse, ownKeys: refuse, getPrototypeOf: refuse, set: refuse, defineProperty: refuse,
    getOwnPropertyDescriptor: refuse, deleteProperty: refuse,
  });
  HANDLES.set(proxy, handle);
  return proxy;
}

function test() {
  const input = fs.readFileSync(0, "utf8");
  const newline = input.indexOf("\n");
  const spec = JSON.parse(input.slice(0, newline));
  const source = input.slice(newline + 1);
  const link = makeLink(new Channel());
  const verdict = { passed: false, message: "", harness_error: "" };
  let body;
  try {
    body = new Function("require", "module", "exports", ...spec.names, source);
  } catch (error) {
    verdict.harness_error = "the test does not compile: " + error.message;
  }
  if (body) {
    try {
      body(require, module, exports, ...spec.names.map((name) => remote(link, name)));
      verdict.passed = !link.gone;
    } catch (error) {
      if (error instanceof HarnessError) verdict.harness_error = error.message;
      else verdict.message = String((error && error.name) || "Error") + ": " + String(error && error.message);
    }
  }
  if (link.gone) {
    verdict.passed = false;
    verdict.message = verdict.message || "the program exited before the tests finished";
  }
  verdict.message = verdict.message.slice(0, 300);
  verdict.flags = Array.from(link.flags).sort();
  fs.writeSync(1, "\n" + VERDICT_MARK + JSON.stringify(verdict) + "\n");
}

module.exports = { encode, decode, serve, test, Unsupported };
