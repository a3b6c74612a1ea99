// The boundary between a JavaScript program and its assert tests (node, no packages).
//
// The same file runs on both sides (`verifiers.code.boundary`, the Python twin is
// codec.py + server.py + tester.py):
// - serve(exports): the program's side. Answers the tests' requests on the channel
//   (REFEREE_CHANNEL_IN / REFEREE_CHANNEL_OUT name the fds): call a name or a held object,
//   or read a property. Results cross as plain values only; anything else stays here and
//   the tests get a handle they can call but never compare.
// - test(): the tests' side. Reads {"names": [...], "key": ...} and the test code on stdin,
//   binds each name to a synchronous proxy, runs the test with the real `require`, and
//   prints the verdict as the last line once nothing is left to run (an async test's
//   promises and callbacks included): VERDICT_MARK, the key (the host's, per item: a
//   line the program made the test print never carries it), and {"passed", "message",
//   "flags", "harness_error", "called"} (called: whether the test asked the program
//   anything). A test that ends the process (process.exit) gets a verdict
//   too: it passes on status 0, as a Python test's sys.exit(0) does.
//
// Plain values: null, booleans, strings, numbers ({"f": "NaN"|"Infinity"|"-Infinity"|
// "-0"} for the ones JSON lacks), {"u": 0} undefined, {"n": "123"} BigInt, {"l": [...]}
// arrays, {"o": [[key, value], ...]} plain objects (prototype Object.prototype or null,
// data properties only), {"m": [[k, v], ...]} Maps, {"s": [...]} Sets.
"use strict";

const fs = require("fs");
const path = require("path");

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
    for (const [k, v] of body) setOwn(out, k, inner(v));
    return out;
  }
  throw new Error("malformed value");
}

// A data property, even one named "__proto__" (an assignment would set the prototype).
function setOwn(object, key, value) {
  Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
}

function kindOf(value) {
  if (value === null || typeof value !== "object") return null;
  const proto = Object.getPrototypeOf(value);
  if (Array.isArray(value) && proto === Array.prototype) return "l";
  if (proto === Map.prototype) return "m";
  if (proto === Set.prototype) return "s";
  if (proto === Object.prototype || proto === null) return "o";
  return null;
}

// Make `old` (an array, plain object, Map or Set) hold what `next` holds, keeping the identity
// of `old` and of the containers inside it where their kind is unchanged (a test may hold a
// row of a matrix). False when the two are not containers of one kind.
function updateInPlace(old, next) {
  const kind = kindOf(old);
  if (kind === null || kind !== kindOf(next)) return false;
  if (kind === "l") {
    const common = Math.min(old.length, next.length);
    for (let i = 0; i < common; i++) if (!updateInPlace(old[i], next[i])) old[i] = next[i];
    for (let i = common; i < next.length; i++) old.push(next[i]);
    old.length = next.length;
  } else if (kind === "s") {
    old.clear();
    for (const v of next) old.add(v);
  } else if (kind === "m") {
    for (const k of Array.from(old.keys())) if (!next.has(k)) old.delete(k);
    for (const [k, v] of next) if (!old.has(k) || !updateInPlace(old.get(k), v)) old.set(k, v);
  } else {
    for (const k of Object.keys(old)) if (!Object.prototype.hasOwnProperty.call(next, k)) delete old[k];
    for (const k of Object.keys(next)) {
      const has = Object.prototype.hasOwnProperty.call(old, k);
      if (!has || !updateInPlace(old[k], next[k])) setOwn(old, k, next[k]);
    }
  }
  return true;
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
  let args = null;
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
      args = request.args.map((arg) => decode(arg, resolve));
      value = target(...args);
    }
  } catch (error) {
    const name = error && error.constructor ? String(error.constructor.name) : "Error";
    return { raise: [name, String(error && error.message).slice(0, 300)] };
  }
  const changed = args ? mutated(request.args, args) : [];
  return Object.assign(reply(value, objects), changed.length ? { mutated: changed } : {});
}

function reply(value, objects) {
  try {
    return { ok: encode(value) };
  } catch (error) {
    if (!(error instanceof Unsupported)) throw error;
    const handle = objects.size + 1;
    objects.set(handle, value);
    return { ref: handle, type: error.message };
  }
}

// [[position, new value], ...] for the arrays, plain objects, Maps and Sets the call changed,
// as a JavaScript caller would see them changed; one that now holds something not plain is
// left out (the tests keep their own copy).
function mutated(sent, args) {
  const changed = [];
  args.forEach((arg, index) => {
    if (kindOf(arg) === null) return;
    let after;
    try {
      after = encode(arg);
    } catch (error) {
      if (error instanceof Unsupported) return;
      throw error;
    }
    if (JSON.stringify(after) !== JSON.stringify(sent[index])) changed.push([index, after]);
  });
  return changed;
}

// --- the tests' side ------------------------------------------------------------------------

class ProgramGone extends Error {}
class HarnessError extends Error {}

const ERRORS = { Error, TypeError, RangeError, ReferenceError, SyntaxError, EvalError, URIError };

function makeLink(channel) {
  // called: whether the test asked the program anything (a verdict reached without it is
  // the test's alone, whatever the program is)
  const link = { gone: false, called: false, flags: new Set() };
  link.request = (request) => link.answer(link.exchange(request));
  // A call's result, after the changes the program made to its array, object, Map and Set
  // arguments were made to the tests' own (JavaScript's semantics: sorting the array it was
  // given sorts the one the test holds).
  link.call = (request, args) => {
    const reply = link.exchange(request);
    for (const [index, value] of reply.mutated || []) {
      if (!Number.isInteger(index) || index < 0 || index >= args.length) throw new Error("malformed reply");
      if (!updateInPlace(args[index], decode(value))) throw new Error("malformed reply");
      link.flags.add("mutated_arguments");
    }
    return link.answer(reply);
  };
  link.exchange = (request) => {
    link.called = true;
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
    return JSON.parse(line);
  };
  link.answer = (reply) => {
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
    return link.call({ op: "call", target, args: plainArgs(args) }, args);
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
  const link = makeLink(new Channel());
  const verdict = { passed: false, message: "", harness_error: "" };
  let failed = false;
  // The first failure, now or later: an async test's assertion fails in a promise or a
  // callback after the synchronous part returned
  const failure = (error) => {
    if (failed) return;
    failed = true;
    if (error instanceof HarnessError) verdict.harness_error = error.message;
    else verdict.message = String((error && error.name) || "Error") + ": " + String(error && error.message);
  };
  process.on("uncaughtException", failure);
  process.on("unhandledRejection", failure);
  // The verdict once nothing is left to run (or the test ended the process itself: it
  // passes on status 0, as a Python test's sys.exit(0) does)
  process.on("exit", (status) => {
    verdict.passed = status === 0 && !failed && !link.gone && !verdict.harness_error;
    if (status !== 0 && !failed) verdict.message = "the test exited with status " + status;
    if (link.gone) {
      verdict.passed = false;
      verdict.message = verdict.message || "the program exited before the tests finished";
    }
    verdict.message = verdict.message.slice(0, 300);
    verdict.flags = Array.from(link.flags).sort();
    verdict.called = link.called;
    fs.writeSync(1, "\n" + VERDICT_MARK + spec.key + " " + JSON.stringify(verdict) + "\n");
    process.exitCode = 0; // the verdict says how the test ended: the tester did not fail
  });
  let body;
  try {
    // a TypeScript test comes built, as a file of the tester's box
    const source = spec.file
      ? fs.readFileSync(path.join(__dirname, spec.file), "utf8")
      : input.slice(newline + 1);
    body = new Function("require", "module", "exports", ...spec.names, source);
  } catch (error) {
    verdict.harness_error = "the test does not compile: " + error.message;
    return;
  }
  // the test's own code starts: a process ending after this with no verdict ended in it
  fs.writeSync(1, "\n" + VERDICT_MARK + spec.key + ' {"started": true}\n');
  try {
    body(require, module, exports, ...spec.names.map((name) => remote(link, name)));
  } catch (error) {
    failure(error);
  }
}

module.exports = { encode, decode, serve, test, Unsupported };
