// Wraps wasm-bindgen's glue so that no failure escapes without a LogitmaskError code, and a
// trap cannot leave the module half-working (docs/reliability.md).
//
// * A trap (WebAssembly.RuntimeError: `unreachable`, out-of-bounds access) or a stack
//   overflow inside wasm unwinds past Rust without restoring its stack pointer or its
//   allocator's state: later calls may fail with `memory access out of bounds` or corrupt
//   memory. The first one marks this module instance broken; it and every later call throw
//   a LogitmaskError with code "ModuleBroken" that says to reload the module.
// * Errors the glue throws itself before reaching Rust (`expected instance of Vocabulary`,
//   a BigInt where a number goes, a string passed where wasm-bindgen marshals bytes) are
//   argument errors: they become LogitmaskError "InvalidArgument", the original as `cause`.
// * A freed object (`free()`, `Symbol.dispose`) used again, as `this` or as an argument, is
//   refused before the call ("InvalidArgument"), instead of wasm-bindgen's uncoded `null
//   pointer passed to rust`, which unwinds through wasm. A second `free()` is a no-op.
//
// Shared by the ES module entries (js/web.mjs, js/node.mjs) and, as a CommonJS copy made by
// scripts/build-wasm.sh (pkg/node/harden.cjs), by `require("logitmask")`: keep it free of
// imports other than ./error.mjs.
import { logitmaskError } from "./error.mjs";

const CLASSES = ["Vocabulary", "Index", "Guide", "LogitsBuffer", "MaskBuffer"];

/**
 * Returns the glue's exports, hardened: classes behind proxies (constructor and static
 * methods wrapped; instance methods and getters wrapped once, on the prototype) and
 * functions wrapped. `beforeCall(name)` runs first on entry points (constructors, static
 * methods, functions): js/web.mjs uses it to refuse calls before `init()`.
 */
export function harden(glue, beforeCall = () => {}) {
  let broken = null; // the trap that broke this module instance

  const classes = new Set(CLASSES.map((name) => glue[name]).filter(Boolean));
  const isFreed = (x) => x !== null && typeof x === "object" && classes.has(x.constructor) && x.__wbg_ptr === 0;

  function moduleBroken(what) {
    return logitmaskError(
      "ModuleBroken",
      `${what}: logitmask's WebAssembly module is broken by an earlier trap (${broken.message}) and must be reloaded (a new page, worker or process); please report the input that caused it`,
      broken,
    );
  }

  function call(what, fn, thisArg, args, construct) {
    if (broken) throw moduleBroken(what);
    if (isFreed(thisArg)) {
      throw logitmaskError("InvalidArgument", `${what} on a ${thisArg.constructor.name} that was freed (free() or Symbol.dispose)`);
    }
    for (let i = 0; i < args.length; i++) {
      if (isFreed(args[i])) {
        throw logitmaskError("InvalidArgument", `${what}: argument ${i + 1} is a ${args[i].constructor.name} that was freed`);
      }
    }
    try {
      return construct ? Reflect.construct(fn, args, construct) : Reflect.apply(fn, thisArg, args);
    } catch (e) {
      throw translate(what, e);
    }
  }

  function translate(what, e) {
    if (e instanceof Error && e.name === "LogitmaskError") return e;
    // A trap, or V8's stack overflow inside wasm (a RangeError, not a RuntimeError).
    if (e instanceof WebAssembly.RuntimeError || (e instanceof RangeError && /call stack/i.test(e.message))) {
      broken = e;
      return moduleBroken(what);
    }
    const message = e instanceof Error ? e.message : String(e);
    return logitmaskError("InvalidArgument", `${what}: invalid argument (${message})`, e);
  }

  function wrapFunction(what, fn) {
    return function (...args) {
      beforeCall(what);
      return call(what, fn, this, args, undefined);
    };
  }

  // Instance methods and getters: patched once on the prototype, so instances the glue
  // creates itself (`Index.__wrap`) are covered too.
  for (const cls of classes) {
    const proto = cls.prototype;
    for (const key of Reflect.ownKeys(proto)) {
      if (key === "constructor" || key === "__destroy_into_raw") continue;
      const d = Object.getOwnPropertyDescriptor(proto, key);
      const what = `${cls.name}.${String(key)}`;
      if (key === Symbol.dispose) {
        continue; // the same function as free(), set below
      } else if (key === "free") {
        const free = d.value;
        // A second free() is a no-op, like closing a closed file.
        d.value = function () {
          if (this.__wbg_ptr === 0) return;
          return call(what, free, this, [], undefined);
        };
        if (Symbol.dispose && proto[Symbol.dispose] === free) proto[Symbol.dispose] = d.value;
      } else if (typeof d.value === "function") {
        const method = d.value;
        d.value = function (...args) {
          return call(`${what}()`, method, this, args, undefined);
        };
      } else if (d.get) {
        const get = d.get;
        d.get = function () {
          return call(what, get, this, [], undefined);
        };
      } else {
        continue;
      }
      Object.defineProperty(proto, key, d);
    }
  }

  const wrapClass = (name, cls) => {
    const statics = new Map(); // one wrapper per static method, so that identity holds
    return new Proxy(cls, {
      construct(target, args, newTarget) {
        beforeCall(`new ${name}()`);
        return call(`new ${name}()`, target, undefined, args, newTarget === wrapped.get(name) ? target : newTarget);
      },
      apply() {
        throw logitmaskError("InvalidArgument", `${name} is a class: call it with \`new\``);
      },
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver);
        if (typeof value !== "function" || !Object.hasOwn(target, key) || String(key).startsWith("__")) return value;
        if (!statics.has(key)) {
          const what = `${name}.${String(key)}()`;
          statics.set(key, function (...args) {
            beforeCall(what);
            return call(what, value, target, args, undefined);
          });
        }
        return statics.get(key);
      },
    });
  };

  const wrapped = new Map();
  const out = {};
  for (const [key, value] of Object.entries(glue)) {
    if (classes.has(value)) {
      const proxy = wrapClass(key, value);
      wrapped.set(key, proxy);
      out[key] = proxy;
    } else if (typeof value === "function" && key !== "default" && key !== "initSync" && key !== "start") {
      out[key] = wrapFunction(`${key}()`, value);
    } else {
      out[key] = value;
    }
  }
  return out;
}
