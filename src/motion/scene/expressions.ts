import {
  newQuickJSWASMModuleFromVariant,
  type QuickJSContext,
  type QuickJSHandle,
  type QuickJSRuntime,
  type QuickJSWASMModule,
} from 'quickjs-emscripten-core';
import {
  easeFraction,
  hashString,
  LOOP_TYPES,
  loopValue,
  noiseAt,
  randomGenerator,
  randomSeed,
  timeToFrames,
  wiggleOffset,
  type EaseKind,
  type LoopType,
} from './expressions/functions.js';
import { withVectorOperators } from './expressions/operators.js';
import { PRELUDE } from './expressions/prelude.js';

/**
 * After Effects expressions evaluated for the preview in a real sandbox: QuickJS compiled to WebAssembly
 * (quickjs-emscripten), whose code reaches nothing of the host but the one function this module gives it (values of
 * the property, of the composition's layers' transforms, noise and eases: numbers in, JSON numbers out). No require,
 * no process, no file, no network, no clock: an expression that asks for more (`$.evalFile`, `app`, `system`,
 * `footage()`, text) fails with a reason, as one that throws, runs out of its time
 * (`timeLimitMs`, an interrupt) or memory (`memoryLimitBytes`), or gives something other than numbers does. On failure
 * the caller draws the property's own value and lists the reason in `approximations`.
 */

/** The transform properties `thisComp.layer(...).transform.*` reads. */
export type TransformName = 'anchorPoint' | 'position' | 'scale' | 'rotation' | 'opacity';
const TRANSFORM_NAMES: readonly TransformName[] = ['anchorPoint', 'position', 'scale', 'rotation', 'opacity'];

/** A layer of the expression's composition, as the expression sees it. */
export interface ExpressionLayer {
  /** 1-based. */
  index: number;
  name: string;
  /** Composition seconds. */
  inPoint: number;
  outPoint: number;
  startTime: number;
  /** The layer's source size in pixels (`width`, `height`), when it has one (footage, solid, precomp). */
  width?: number;
  height?: number;
  /**
   * A transform property's value at a composition time, in After Effects' units (position [x, y] or [x, y, z], scale
   * percent, rotation degrees, opacity 0..100), as After Effects shows it: after that property's own expression when
   * the caller evaluates expressions there too (calling `evaluate` again from here is allowed; nesting deeper than
   * `maxDepth` fails, which stops expressions that read each other).
   */
  transform(name: TransformName, time: number): number[];
  /**
   * An effect parameter's value at a composition time: the effect by name (or match name) or 1-based index, the
   * parameter by name or 1-based index, as `effect("Slider Control")("Slider")` reads it; undefined when there is none
   * (or it is not a number: layer parameters).
   */
  effect?(effect: string | number, param: string | number, time: number): number[] | undefined;
  /**
   * `sourceRectAtTime(time, extents)`: the layer's content rectangle in its own coordinates at a composition time;
   * undefined when the preview cannot know it (text: its glyphs are measured only when drawn).
   */
  sourceRect?(time: number, extents: boolean): { top: number; left: number; width: number; height: number } | undefined;
  /** A text layer's text at a composition time (`text.sourceText`), after its Source Text expression; else none. */
  sourceText?(time: number): string | undefined;
  /** Layer markers in composition seconds, ascending, with their comments (`marker.key(i).time`). */
  markers?: { time: number; comment: string }[];
}

export interface ExpressionComp {
  name: string;
  width: number;
  height: number;
  pixelAspect: number;
  /** Seconds. */
  duration: number;
  frameDuration: number;
  displayStartTime: number;
  numLayers: number;
}

/** Everything one evaluation may read: the expression's `time`, `value`, its property and composition. */
export interface ExpressionContext {
  /** Composition seconds from the first frame: the expression's `time` (and every time it reads or passes). */
  time: number;
  /** The property's own value at `time` (keyframed or static, before the expression): its `value`. */
  value: number[];
  /** The property's own value at any composition time (valueAtTime, key(), loopOut, wiggle's t, velocity). */
  sampleOwn(time: number): number[];
  /** Composition times of the property's keyframes, ascending; empty when it is static. */
  keyframeTimes: readonly number[];
  /** The property's match-name path: it seeds wiggle and random, so each property has its own noise. */
  propertyPath: string;
  /** 1-based index of the layer holding the property (`index`, `thisLayer`). */
  layerIndex: number;
  /** A layer of the same composition by name (the first of that name) or 1-based index; undefined when none. */
  layer(ref: string | number): ExpressionLayer | undefined;
  comp: ExpressionComp;
  /**
   * An expression selector's character (text animators): `textIndex` (1-based) of `textTotal` units, and
   * `selectorValue`, the selectors above it combined (percent per dimension). Absent elsewhere: those names then fail.
   */
  text?: { index: number; total: number; selectorValue: number[] };
  /** `comp("name")`: another composition of the project (the first of that name) and its layers; none when missing. */
  compNamed?(
    name: string,
  ): { comp: ExpressionComp; layer(ref: string | number): ExpressionLayer | undefined } | undefined;
}

export type ExpressionResult = { ok: true; value: number[] } | { ok: false; reason: string };
export type TextExpressionResult = { ok: true; text: string } | { ok: false; reason: string };

export interface ExpressionEvaluator {
  /**
   * The value of `expression` for a property in `ctx`: `ok` with as many numbers as `ctx.value` has (a shorter
   * array is completed from the property's own value, a longer one cut), or a reason. Synchronous; each distinct
   * expression text is compiled once per evaluator. Never throws for anything in the expression.
   */
  evaluate(expression: string, ctx: ExpressionContext): ExpressionResult;
  /**
   * A Source Text expression: its `value` (and `text.sourceText`) is the document's text `sourceText`; `ok` with the
   * text it gives (a number or array as After Effects shows it: String(x)), or a reason. Optional for other evaluators.
   */
  evaluateText?(expression: string, ctx: ExpressionContext, sourceText: string): TextExpressionResult;
  /** Frees the sandbox; evaluate must not be called after. */
  dispose(): void;
}

export interface ExpressionEvaluatorOptions {
  /** Wall-clock time one evaluation (with everything it calls) may run; default 100 ms. */
  timeLimitMs?: number;
  /** Memory of the sandbox's heap; default 16 MiB. */
  memoryLimitBytes?: number;
  /**
   * QuickJS's stack (its C stack in WebAssembly memory); default 32 KiB: recursion 100 calls deep works and 300 fails
   * with "stack overflow"; a parse 300 brackets deep works and 1,000 fails. It must stay small: the interpreter's WebAssembly frames also use
   * V8's own stack, and at 64 KiB a 1,000-bracket parse overflows V8 first, which kills the whole instance.
   */
  maxStackBytes?: number;
  /** Evaluations nested through ExpressionLayer.transform; default 8. */
  maxDepth?: number;
}

/** Expressions longer than this are not compiled (no real expression comes near). */
const MAX_EXPRESSION_CHARS = 64 * 1024;

/**
 * A sandbox for one preview: create it once per project (it loads its own WebAssembly instance, a few milliseconds)
 * and call `evaluate` per property per frame. Evaluations share one QuickJS runtime; each runs in a fresh scope
 * (its `var`s do not outlive it). An expression that ran out of time or memory twice is not run again by this
 * evaluator, so an endless loop costs twice its time limit (not once per frame), while one stalled once by a busy
 * machine is still drawn. The runtime goes on after such a stop (QuickJS unwinds it as an exception); it is not
 * rebuilt, because freeing a QuickJS runtime that ran out of memory mid-parse can abort the whole WebAssembly
 * instance (a leaked object trips JS_FreeRuntime's assertion).
 */
export async function createExpressionEvaluator(
  options: ExpressionEvaluatorOptions = {},
): Promise<ExpressionEvaluator> {
  // the variant with a separate .wasm file, release build, synchronous calls (no asyncify): the smallest and fastest
  const module = await newQuickJSWASMModuleFromVariant(import('@jitl/quickjs-wasmfile-release-sync'));
  return new Sandbox(module, {
    timeLimitMs: options.timeLimitMs ?? 100,
    memoryLimitBytes: options.memoryLimitBytes ?? 16 * 1024 * 1024,
    maxStackBytes: options.maxStackBytes ?? 32 * 1024,
    maxDepth: options.maxDepth ?? 8,
  });
}

interface Frame {
  ctx: ExpressionContext;
  seed: number;
  random?: () => number;
}

interface Vm {
  runtime: QuickJSRuntime;
  context: QuickJSContext;
  compile: QuickJSHandle;
  run: QuickJSHandle;
  /** Expression text -> compiled id in this runtime. */
  ids: Map<string, number>;
}

class Sandbox implements ExpressionEvaluator {
  private vm: Vm | undefined;
  private readonly stack: Frame[] = [];
  private deadline = 0;
  /** Set when the evaluation under way ran out of time or memory. */
  private stopped = false;
  /** Why the WebAssembly instance is unusable (it aborted): every later evaluation fails with it. */
  private dead: string | undefined;
  /** Failures that do not depend on the context (syntax, time or memory twice): not tried again. */
  private readonly failed = new Map<string, string>();
  /** Expressions that ran out of time or memory once. */
  private readonly strikes = new Set<string>();
  private disposed = false;

  constructor(
    private readonly module: QuickJSWASMModule,
    private readonly limits: Required<ExpressionEvaluatorOptions>,
  ) {}

  evaluate(expression: string, ctx: ExpressionContext): ExpressionResult {
    const r = this.run(expression, ctx);
    return r.ok ? shape(r.value as unknown[], ctx.value, !!ctx.text) : r;
  }

  evaluateText(expression: string, ctx: ExpressionContext, sourceText: string): TextExpressionResult {
    const r = this.run(expression, ctx, sourceText);
    if (!r.ok) return r;
    const text = (r.value as { text?: unknown }).text;
    return typeof text === 'string' ? { ok: true, text } : { ok: false, reason: 'the expression gave no text' };
  }

  /** The expression's result as the prelude gives it (JSON), or why it failed. */
  private run(
    expression: string,
    ctx: ExpressionContext,
    sourceText?: string,
  ): { ok: true; value: unknown } | { ok: false; reason: string } {
    if (this.disposed) throw new Error('expression evaluator disposed');
    if (this.dead !== undefined) return { ok: false, reason: this.dead };
    const known = this.failed.get(expression);
    if (known !== undefined) return { ok: false, reason: known };
    if (expression.length > MAX_EXPRESSION_CHARS) return this.fail(expression, 'the expression is too long');
    if (this.stack.length >= this.limits.maxDepth)
      return { ok: false, reason: `expressions refer to each other more than ${this.limits.maxDepth} deep` };
    const top = this.stack.length === 0;
    this.stack.push({ ctx, seed: hashString(`${ctx.layerIndex}|${ctx.propertyPath}`) });
    try {
      const vm = (this.vm ??= this.build());
      if (top) {
        this.deadline = Date.now() + this.limits.timeLimitMs;
        this.stopped = false;
      }
      const id = this.compile(vm, expression);
      if (typeof id === 'string') return this.fail(expression, id);
      const c = vm.context;
      const facts = {
        value: ctx.value,
        index: ctx.layerIndex,
        keys: ctx.keyframeTimes,
        comp: ctx.comp,
        text: ctx.text,
        sourceText,
      };
      const args = [c.newNumber(id), c.newNumber(ctx.time), c.newString(JSON.stringify(facts))];
      const r = c.callFunction(vm.run, c.undefined, ...args);
      for (const a of args) a.dispose();
      if (r.error) {
        const reason = this.reason(r.error);
        r.error.dispose();
        if (!this.stopped) return { ok: false, reason };
        if (this.strikes.has(expression)) return this.fail(expression, reason);
        this.strikes.add(expression);
        return { ok: false, reason };
      }
      const text = c.getString(r.value);
      r.value.dispose();
      return { ok: true, value: JSON.parse(text) as unknown };
    } catch (err) {
      // the WebAssembly instance aborted (it should not): nothing more can run in it
      this.dead = `the expression sandbox failed: ${(err as Error).message}`;
      return { ok: false, reason: this.dead };
    } finally {
      this.stack.pop();
    }
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    const vm = this.vm;
    this.vm = undefined;
    if (!vm || this.dead !== undefined) return;
    try {
      vm.compile.dispose();
      vm.run.dispose();
      vm.context.dispose();
      vm.runtime.dispose();
    } catch {
      // a runtime that leaked objects when it ran out of memory trips JS_FreeRuntime's assertion: the instance is
      // dropped with it either way
    }
  }

  private fail(expression: string, reason: string): { ok: false; reason: string } {
    this.failed.set(expression, reason);
    return { ok: false, reason };
  }

  /** The compiled id of an expression, or the reason it does not compile. */
  private compile(vm: Vm, expression: string): number | string {
    const known = vm.ids.get(expression);
    if (known !== undefined) return known;
    const c = vm.context;
    const src = c.newString(withVectorOperators(expression));
    const r = c.callFunction(vm.compile, c.undefined, src);
    src.dispose();
    if (r.error) {
      const reason = this.reason(r.error);
      r.error.dispose();
      return reason;
    }
    const id = c.getNumber(r.value);
    r.value.dispose();
    vm.ids.set(expression, id);
    return id;
  }

  /** The text of an error thrown in the sandbox; running out of time or memory is remembered (strikes). */
  private reason(error: QuickJSHandle): string {
    const e = this.vm!.context.dump(error) as { name?: string; message?: string } | string;
    const name = typeof e === 'object' && e ? (e.name ?? 'Error') : 'Error';
    const message = typeof e === 'object' && e ? (e.message ?? '') : String(e);
    if (name === 'InternalError' && message === 'interrupted') {
      this.stopped = true;
      return `the expression ran longer than ${this.limits.timeLimitMs} ms and was stopped`;
    }
    if (name === 'InternalError' && /out of memory/.test(message)) {
      this.stopped = true;
      return `the expression used more than ${Math.round(this.limits.memoryLimitBytes / 1048576)} MiB and was stopped`;
    }
    return `${name}: ${message}`;
  }

  private build(): Vm {
    const runtime = this.module.newRuntime();
    runtime.setMemoryLimit(this.limits.memoryLimitBytes);
    runtime.setMaxStackSize(this.limits.maxStackBytes);
    runtime.setInterruptHandler(() => Date.now() > this.deadline);
    const context = runtime.newContext();
    const host = context.newFunction('__host', (...args) => {
      const values = args.map((h) => context.dump(h) as unknown);
      return context.newString(JSON.stringify(this.host(values)));
    });
    context.setProp(context.global, '__host', host);
    host.dispose();
    // the prelude is our own code and ends; on a loaded machine (load 40 on 2 cores) it took 0.7 to 1.3 s
    this.deadline = Date.now() + 10_000;
    const init = context.evalCode(PRELUDE, 'prelude.js');
    if (init.error) {
      const e: unknown = context.dump(init.error);
      init.error.dispose();
      throw new Error(`expression prelude failed: ${JSON.stringify(e)}`);
    }
    const compile = context.getProp(init.value, 'compile');
    const run = context.getProp(init.value, 'run');
    init.value.dispose();
    return { runtime, context, compile, run, ids: new Map() };
  }

  /** The one function the sandbox may call (prelude.ts lists its ops). Throws become errors in the sandbox. */
  private host(args: unknown[]): unknown {
    const frame = this.stack[this.stack.length - 1];
    if (!frame) throw new Error('no expression is being evaluated');
    const { ctx } = frame;
    const [op] = args;
    const n = (i: number): number => {
      const v = args[i];
      if (typeof v !== 'number' || !Number.isFinite(v)) throw new TypeError(`argument ${i} must be a finite number`);
      return v;
    };
    const own = (t: number) => (t === ctx.time ? ctx.value : ctx.sampleOwn(t));
    // a layer of the expression's composition, or of comp(name) when the call names one
    const layerIn = (comp: unknown, ref: string | number) =>
      typeof comp === 'string' ? ctx.compNamed?.(comp)?.layer(ref) : ctx.layer(ref);
    switch (op) {
      case 'v':
        return own(n(1));
      case 'V': {
        const t = n(1);
        const h = 1e-3;
        const a = ctx.sampleOwn(t - h);
        const b = ctx.sampleOwn(t + h);
        return a.map((x, i) => ((b[i] ?? x) - x) / (2 * h));
      }
      case 'C': {
        const c = ctx.compNamed?.(String(args[1]));
        if (!c) throw new Error(`comp("${String(args[1])}"): there is no composition of that name`);
        return c.comp;
      }
      case 'L': {
        const ref = args[1];
        const l = typeof ref === 'string' || typeof ref === 'number' ? layerIn(args[2], ref) : undefined;
        if (!l)
          throw new Error(typeof ref === 'string' ? `layer "${ref}" is missing` : `layer ${String(ref)} is missing`);
        const { index, name, inPoint, outPoint, startTime, width, height } = l;
        return { index, name, inPoint, outPoint, startTime, width, height };
      }
      case 's': {
        const l = layerIn(args[4], n(1));
        if (!l) throw new Error(`layer ${n(1)} is missing`);
        const name = args[2];
        if (!TRANSFORM_NAMES.includes(name as TransformName)) throw new Error(`no transform property ${String(name)}`);
        return l.transform(name as TransformName, n(3));
      }
      case 'M': {
        const l = layerIn(args[2], n(1));
        if (!l) throw new Error(`layer ${n(1)} is missing`);
        return l.markers ?? [];
      }
      case 'E': {
        const l = layerIn(args[5], n(1));
        const [e, p] = [args[2], args[3]];
        const ok = (v: unknown): v is string | number => typeof v === 'string' || typeof v === 'number';
        const v = l && ok(e) && ok(p) ? l.effect?.(e, p, n(4)) : undefined;
        if (!v) throw new Error(`effect(${JSON.stringify(e)})(${JSON.stringify(p)}) is not on layer ${n(1)}`);
        return v;
      }
      case 'R': {
        const l = layerIn(args[4], n(1));
        const r = l?.sourceRect?.(n(2), args[3] === true);
        if (!r) throw new Error(`sourceRectAtTime() of layer ${n(1)} is not known to the preview`);
        return r;
      }
      case 'T': {
        const l = layerIn(args[3], n(1));
        const text = l?.sourceText?.(n(2));
        if (text === undefined) throw new Error(`layer ${n(1)} is not a text layer: it has no text.sourceText`);
        return text;
      }
      case 'e':
        return easeFraction(args[1] as EaseKind, n(2));
      case 'lo': {
        const type = String(args[2]);
        if (!LOOP_TYPES.includes(type)) throw new Error(`loop type "${type}" is not one of ${LOOP_TYPES.join(', ')}`);
        return loopValue(args[1] === 'in' ? 'in' : 'out', type as LoopType, ctx.keyframeTimes, own, n(5), n(3), n(4));
      }
      case 'w': {
        const t = n(5);
        const base = own(t);
        const offset = wiggleOffset(frame.seed, base.length, n(1), n(2), n(3), n(4), t);
        return base.map((v, i) => v + offset[i]);
      }
      case 'r':
        frame.random ??= randomGenerator(randomSeed(frame.seed, 0, false, ctx.time));
        return frame.random();
      case 'S':
        frame.random = randomGenerator(randomSeed(frame.seed, n(1), args[2] === true, ctx.time));
        return null;
      case 'n':
        return noiseAt(frame.seed, JSON.parse(String(args[1])) as number[]);
      case 'f':
        return timeToFrames(n(1), n(2), args[3] === true);
      default:
        throw new Error(`unknown host call ${String(op)}`);
    }
  }
}

/** The expression's numbers fitted to the property's dimensions (see ExpressionEvaluator.evaluate). */
function shape(result: unknown[], own: number[], broadcast = false): ExpressionResult {
  // JSON has no NaN or Infinity: the sandbox's JSON.stringify wrote them as null
  const bad = result.findIndex((x) => typeof x !== 'number' || !Number.isFinite(x));
  if (bad >= 0)
    return {
      ok: false,
      reason: `the expression gave ${String(result[bad] ?? 'NaN or Infinity')}, not a finite number`,
    };
  const nums = result as number[];
  // an expression selector's one number is its amount in every dimension, as After Effects takes it
  if (broadcast && nums.length === 1) return { ok: true, value: own.map(() => nums[0]) };
  if (own.length > 1 && nums.length === 1)
    return { ok: false, reason: `the expression gave 1 number; the property has ${own.length} dimensions` };
  return { ok: true, value: own.map((v, i) => (i < nums.length ? nums[i] : v)) };
}
