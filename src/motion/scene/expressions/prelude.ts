/**
 * The JavaScript run once in each sandbox before any expression: After Effects' expression globals (time, value,
 * thisComp, thisLayer, thisProperty, wiggle, loopOut, linear, ease, the vector helpers, random...) over the one host
 * function `__host(op, ...)` (expressions.ts), which answers with JSON. It hides `__host` and `__exec` from user code
 * by keeping them in this closure and deleting the globals; the host gets `compile` and `run` as the script's value. `__exec` is made by the Function constructor so that the
 * expression's direct eval sees only the globals (and gets a fresh var scope on every run); eval gives the completion
 * value of the last statement, which is how both of After Effects' engines take an expression's result (an if/else as
 * the last statement included).
 *
 * Each run gets `facts`: JSON of {value, index, keys, comp} (the property's own value now, its layer's index, its key
 * times, the composition), so the common reads cost no call out of the sandbox, which is the expensive part.
 * Ops of the host: v(t) own value; V(t) own velocity; L(ref) a layer's facts; s(index, name, t) a layer's transform
 * value; E(index, effect, param, t) an effect parameter's value; M(index) a layer's markers; C(name) another composition's facts (L, s and E
 * take that name last for its layers); e(kind, x) an ease; lo(dir, type, n, duration, t) a loop; f(t, fps, isDuration) timeToFrames; w(freq, amp, octaves,
 * ampMult, t) wiggle; r() a random number; S(seed, timeless) seedRandom; n(point) noise.
 */
export const PRELUDE = String.raw`
globalThis.__exec = Function('__source', 'return eval(__source)');
// the completion value of this script is the pair of functions the host calls
(function (g) {
  'use strict';
  var host = g.__host;
  var exec = g.__exec;
  delete g.__host;
  delete g.__exec;
  var H = function () { return JSON.parse(host.apply(undefined, arguments)); };
  var cur = null;
  var sources = [];

  function frame() {
    if (!cur) throw new Error('no expression is being evaluated');
    return cur;
  }
  function plain(v) { return v.length === 1 ? v[0] : v; }
  function num(x, what) {
    if (x instanceof Number) x = +x;
    if (typeof x !== 'number' || !isFinite(x)) throw new TypeError(what + ' must be a number');
    return x;
  }
  function define(name, get) { Object.defineProperty(g, name, { get: get, configurable: false }); }
  function refuse(name, why) {
    define(name, function () { throw new Error(name + ' is not available in the preview: ' + why); });
  }
  function vec(a) { return Array.isArray(a) ? a : [a]; }
  function each(a, b, f) {
    if (!Array.isArray(a) && !Array.isArray(b)) return f(+a, +b);
    var x = vec(a), y = vec(b), n = Math.max(x.length, y.length), out = [];
    for (var i = 0; i < n; i++) out.push(f(+(x[i] || 0), +(y[i] || 0)));
    return out;
  }

  // a property's value with After Effects' property methods on it (a Number object for a scalar, as lottie-web does)
  function decorate(v, at) {
    var o = v.length === 1 ? new Number(v[0]) : v.slice();
    Object.defineProperty(o, 'value', { get: function () { return plain(v); } });
    Object.defineProperty(o, 'valueAtTime', { value: function (t) { return plain(at(num(t, 'valueAtTime(t)'))); } });
    return o;
  }

  var TRANSFORMS = ['anchorPoint', 'position', 'scale', 'rotation', 'opacity'];
  // a layer of this composition, or of comp(cn) when cn is given (every host call about it then names cn)
  function layer(ref, cn) {
    if (ref instanceof Number || ref instanceof String) ref = ref.valueOf();
    if (typeof ref !== 'number' && typeof ref !== 'string') throw new TypeError('layer() takes a name or an index');
    var c = frame(), key = (cn === undefined ? '' : cn + '>') + typeof ref + ':' + ref;
    if (c.layers[key]) return c.layers[key];
    var info = H('L', ref, cn);
    var L = { index: info.index, name: info.name, inPoint: info.inPoint, outPoint: info.outPoint,
      startTime: info.startTime, transform: {} };
    ['width', 'height'].forEach(function (k) {
      Object.defineProperty(L, k, { enumerable: true, get: function () {
        if (typeof info[k] !== 'number') throw new Error('the size of layer "' + info.name + '" is not known to the preview');
        return info[k];
      } });
    });
    TRANSFORMS.forEach(function (p) {
      var at = function (t) { return H('s', info.index, p, t, cn); };
      var get = function () { return decorate(at(frame().t), at); };
      Object.defineProperty(L.transform, p, { get: get, enumerable: true });
      Object.defineProperty(L, p, { get: get, enumerable: true });
    });
    // effect("name")("param"): a function of the parameter, as After Effects' effect group is
    L.effect = function (e) {
      if (e instanceof Number || e instanceof String) e = e.valueOf();
      return function (pr) {
        if (pr instanceof Number || pr instanceof String) pr = pr.valueOf();
        var at = function (t) { return H('E', info.index, e, pr, t, cn); };
        return decorate(at(frame().t), at);
      };
    };
    // marker: its keys are the layer's markers (time in composition seconds, comment), 1-based as After Effects'
    var marks;
    Object.defineProperty(L, 'marker', { enumerable: true, get: function () {
      marks = marks || H('M', info.index, cn);
      var key = function (i) {
        var k = num(i, 'marker.key(index)');
        if (k < 1 || k > marks.length || k !== Math.floor(k)) throw new RangeError('marker.key(' + k + '): the layer has ' + marks.length + ' markers');
        return { index: k, time: marks[k - 1].time, comment: marks[k - 1].comment, duration: 0 };
      };
      return { numKeys: marks.length, key: key, nearestKey: function (t) {
        if (!marks.length) throw new RangeError('marker.nearestKey(): the layer has no markers');
        var best = 0;
        for (var i = 1; i < marks.length; i++) if (Math.abs(marks[i].time - t) < Math.abs(marks[best].time - t)) best = i;
        return key(best + 1);
      } };
    } });
    // sourceRectAtTime(t = time, includeExtents = false): { top, left, width, height } in the layer's coordinates
    L.sourceRectAtTime = function (t, extents) {
      var at = t === undefined ? frame().t : num(t, 'sourceRectAtTime(t)');
      return H('R', info.index, at, extents === true, cn);
    };
    // text.sourceText: a text layer's text at the expression's time (after its own Source Text expression)
    Object.defineProperty(L, 'text', { enumerable: true, get: function () {
      return { sourceText: H('T', info.index, frame().t, cn) };
    } });
    ['mask', 'toComp', 'fromComp', 'toWorld', 'fromWorld'].forEach(function (m) {
      L[m] = function () { throw new Error('layer.' + m + '() is not available in the preview'); };
    });
    c.layers[key] = L;
    return L;
  }
  // the facts every evaluation may need come with it as one JSON text, parsed when first read
  function facts() {
    var c = frame();
    if (typeof c.facts === 'string') c.facts = JSON.parse(c.facts);
    return c.facts;
  }
  function comp() {
    var c = frame();
    if (!c.comp) {
      var i = facts().comp;
      c.comp = { name: i.name, width: i.width, height: i.height, duration: i.duration,
        frameDuration: i.frameDuration, displayStartTime: i.displayStartTime, pixelAspect: i.pixelAspect,
        numLayers: i.numLayers, layer: layer };
    }
    return c.comp;
  }
  function keys() { return facts().keys; }
  function here() { return facts().index; }
  function own(t) { return plain(H('v', num(t, 'the time'))); }
  function ownValue() {
    var c = frame();
    if (c.value === undefined && facts().sourceText !== undefined) c.value = facts().sourceText;
    if (c.value === undefined) c.value = c.t === c.t0 ? plain(facts().value) : own(c.t);
    return c.value;
  }
  function velocityAtTime(t) { return plain(H('V', num(t, 'velocityAtTime(t)'))); }
  function speedAtTime(t) { return length(velocityAtTime(t)); }
  function key(i) {
    var k = keys(), n = num(i, 'key(index)');
    if (n < 1 || n > k.length || n !== Math.floor(n)) throw new RangeError('key(' + n + '): the property has ' + k.length + ' keyframes');
    return { index: n, time: k[n - 1], value: own(k[n - 1]) };
  }
  function nearestKey(t) {
    var k = keys(), best = 0;
    if (!k.length) throw new RangeError('nearestKey(): the property has no keyframes');
    for (var i = 1; i < k.length; i++) if (Math.abs(k[i] - t) < Math.abs(k[best] - t)) best = i;
    return key(best + 1);
  }
  function loop(dir, type, n, d) {
    return plain(H('lo', dir, type === undefined ? 'cycle' : String(type), n === undefined ? 0 : num(n, 'numKeyframes'),
      d === undefined ? 0 : num(d, 'duration'), frame().t));
  }
  function wiggle(freq, amp, octaves, ampMult, t) {
    return plain(H('w', num(freq, 'wiggle frequency'), num(amp, 'wiggle amplitude'),
      octaves === undefined ? 1 : num(octaves, 'octaves'), ampMult === undefined ? 0.5 : num(ampMult, 'amp_mult'),
      t === undefined ? frame().t : num(t, 'wiggle time')));
  }
  function ramp(f, t, a, b, c, d) {
    var t0 = 0, t1 = 1, v0 = a, v1 = b;
    if (d !== undefined || c !== undefined) { t0 = num(a, 'tMin'); t1 = num(b, 'tMax'); v0 = c; v1 = d; }
    t = num(t, 't');
    if (t0 > t1) { var s = t0; t0 = t1; t1 = s; s = v0; v0 = v1; v1 = s; }
    var x = t1 === t0 ? (t < t0 ? 0 : 1) : Math.min(1, Math.max(0, (t - t0) / (t1 - t0)));
    var k = f(x);
    return each(v0, v1, function (p, q) { return p + (q - p) * k; });
  }
  var eased = function (kind) { return function (x) { return x <= 0 || x >= 1 ? x : H('e', kind, x); }; };
  function length(a, b) {
    var v = b === undefined ? vec(a) : sub(a, b);
    return Math.sqrt(vec(v).reduce(function (s, x) { return s + x * x; }, 0));
  }
  function add(a, b) { return each(a, b, function (x, y) { return x + y; }); }
  function sub(a, b) { return each(a, b, function (x, y) { return x - y; }); }
  function mul(a, k) { k = num(k, 'mul amount'); return Array.isArray(a) ? a.map(function (x) { return x * k; }) : a * k; }
  function div(a, k) { k = num(k, 'div amount'); return Array.isArray(a) ? a.map(function (x) { return x / k; }) : a / k; }
  function clamp(v, lo, hi) {
    if (!Array.isArray(v)) return Math.min(Math.max(+v, +plain(vec(lo))), +plain(vec(hi)));
    return v.map(function (x, i) {
      var l = Array.isArray(lo) ? lo[i] : lo, h = Array.isArray(hi) ? hi[i] : hi;
      return Math.min(Math.max(x, l), h);
    });
  }
  function normalize(v) { var l = length(v); return l ? div(v, l) : v; }
  function dot(a, b) { var x = vec(a), y = vec(b), s = 0; for (var i = 0; i < x.length; i++) s += x[i] * (y[i] || 0); return s; }
  function cross(a, b) { return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]; }
  function rnd() { return H('r'); }
  function random(a, b) {
    if (a === undefined) return rnd();
    if (b === undefined) return Array.isArray(a) ? a.map(function (x) { return rnd() * x; }) : rnd() * a;
    return each(a, b, function (x, y) { return x + rnd() * (y - x); });
  }
  // a normal variate with about 90 % of the results between the bounds, as After Effects describes gaussRandom
  function gauss() {
    var u = rnd() || 1e-12, w = rnd();
    return 0.5 + Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * w) / (2 * 1.6449);
  }
  function gaussRandom(a, b) {
    if (a === undefined) return gauss();
    if (b === undefined) return Array.isArray(a) ? a.map(function (x) { return gauss() * x; }) : gauss() * a;
    return each(a, b, function (x, y) { return x + gauss() * (y - x); });
  }
  // colours as After Effects gives them: arrays of 0..1 with alpha last; hue as a fraction of a turn
  function rgbToHsl(c) {
    var r = +c[0], gr = +c[1], b = +c[2], a = c.length > 3 ? +c[3] : 1;
    var max = Math.max(r, gr, b), min = Math.min(r, gr, b), l = (max + min) / 2, d = max - min, h = 0, s = 0;
    if (d > 0) {
      s = l > 0.5 ? d / (2 - max - min) : d / (max + min);
      h = max === r ? (gr - b) / d + (gr < b ? 6 : 0) : max === gr ? (b - r) / d + 2 : (r - gr) / d + 4;
      h /= 6;
    }
    return [h, s, l, a];
  }
  function hslToRgb(c) {
    var h = +c[0], s = +c[1], l = +c[2], a = c.length > 3 ? +c[3] : 1;
    if (s === 0) return [l, l, l, a];
    var q = l < 0.5 ? l * (1 + s) : l + s - l * s, p = 2 * l - q;
    function channel(t) {
      t = t - Math.floor(t);
      if (t < 1 / 6) return p + (q - p) * 6 * t;
      if (t < 1 / 2) return q;
      if (t < 2 / 3) return p + (q - p) * (2 / 3 - t) * 6;
      return p;
    }
    return [channel(h + 1 / 3), channel(h), channel(h - 1 / 3), a];
  }
  function hexToRgb(hex) {
    var m = /^(?:#|0x)?([0-9a-f]{6})$/i.exec(String(hex));
    if (!m) throw new TypeError('hexToRgb("' + hex + '"): a hex triplet (#RRGGBB) is expected');
    var n = parseInt(m[1], 16);
    return [(n >> 16 & 255) / 255, (n >> 8 & 255) / 255, (n & 255) / 255, 1];
  }
  function fps() { return 1 / comp().frameDuration; }

  var prop = {
    get value() { return ownValue(); },
    valueAtTime: own,
    velocityAtTime: velocityAtTime,
    speedAtTime: speedAtTime,
    get velocity() { return velocityAtTime(frame().t); },
    get speed() { return speedAtTime(frame().t); },
    get numKeys() { return keys().length; },
    key: key,
    nearestKey: nearestKey,
    loopOut: function (t, n) { return loop('out', t, n); },
    loopIn: function (t, n) { return loop('in', t, n); },
    loopOutDuration: function (t, d) { return loop('out', t, 0, d === undefined ? 0 : d); },
    loopInDuration: function (t, d) { return loop('in', t, 0, d === undefined ? 0 : d); },
    wiggle: wiggle,
  };
  // After Effects' operators on arrays (operators.ts rewrites + - * / into these): element by element, the shorter
  // array read as zeros; an array and a number: + and - change the first element only, * and / every element
  // (lottie-web's reading of After Effects); numbers and strings as JavaScript does
  function scalar(x) { return !Array.isArray(x); }
  function unbox(x) { return x instanceof Number ? +x : x; }
  var vecOps = {
    add: function (a, b) {
      a = unbox(a); b = unbox(b);
      if (scalar(a) && scalar(b)) return a + b;
      if (scalar(b)) { if (typeof b === 'string') return a + b; var r = a.slice(); r[0] = +r[0] + b; return r; }
      if (scalar(a)) { if (typeof a === 'string') return a + b; var q = b.slice(); q[0] = a + +q[0]; return q; }
      return add(a, b);
    },
    sub: function (a, b) {
      a = unbox(a); b = unbox(b);
      if (scalar(a) && scalar(b)) return a - b;
      if (scalar(b)) { var r = a.slice(); r[0] = r[0] - b; return r; }
      if (scalar(a)) { var q = b.slice(); q[0] = a - q[0]; return q; }
      return sub(a, b);
    },
    mul: function (a, b) {
      a = unbox(a); b = unbox(b);
      if (scalar(a) && scalar(b)) return a * b;
      if (scalar(b)) return a.map(function (x) { return x * b; });
      if (scalar(a)) return b.map(function (x) { return a * x; });
      throw new TypeError('an array times an array is not defined (use dot() or a loop)');
    },
    div: function (a, b) {
      a = unbox(a); b = unbox(b);
      if (scalar(a) && scalar(b)) return a / b;
      if (scalar(b)) return a.map(function (x) { return x / b; });
      if (scalar(a)) return b.map(function (x) { return a / x; });
      throw new TypeError('an array divided by an array is not defined');
    },
    neg: function (a) { a = unbox(a); return scalar(a) ? -a : a.map(function (x) { return -x; }); },
  };

  var functions = {
    __vec: vecOps,
    valueAtTime: own, velocityAtTime: velocityAtTime, speedAtTime: speedAtTime, key: key, nearestKey: nearestKey,
    loopOut: prop.loopOut, loopIn: prop.loopIn, loopOutDuration: prop.loopOutDuration,
    loopInDuration: prop.loopInDuration, wiggle: wiggle,
    linear: function (t, a, b, c, d) { return ramp(function (x) { return x; }, t, a, b, c, d); },
    ease: function (t, a, b, c, d) { return ramp(eased('ease'), t, a, b, c, d); },
    easeIn: function (t, a, b, c, d) { return ramp(eased('easeIn'), t, a, b, c, d); },
    easeOut: function (t, a, b, c, d) { return ramp(eased('easeOut'), t, a, b, c, d); },
    add: add, sub: sub, mul: mul, div: div, clamp: clamp, length: length, normalize: normalize, dot: dot,
    cross: cross,
    rgbToHsl: rgbToHsl,
    hslToRgb: hslToRgb,
    hexToRgb: hexToRgb,
    degreesToRadians: function (d) { return d * Math.PI / 180; },
    radiansToDegrees: function (r) { return r * 180 / Math.PI; },
    framesToTime: function (frames, rate) { return num(frames, 'frames') / (rate === undefined ? fps() : num(rate, 'fps')); },
    timeToFrames: function (t, rate, isDuration) {
      var r = rate === undefined ? fps() : num(rate, 'fps');
      var s = t === undefined ? frame().t + comp().displayStartTime : num(t, 'the time');
      return H('f', s, r, !!isDuration);
    },
    posterizeTime: function (rate) {
      var c = frame(), r = num(rate, 'posterizeTime(fps)');
      if (r > 0) { var q = Math.floor(c.t * r + 1e-9) / r; if (q !== c.t) { c.t = q; c.value = undefined; } }
    },
    seedRandom: function (seed, timeless) { H('S', num(seed, 'seedRandom(seed)'), !!timeless); },
    random: random,
    gaussRandom: gaussRandom,
    noise: function (p) { return H('n', JSON.stringify(vec(p).map(function (x) { return num(x, 'noise()'); }))); },
    comp: function (name) {
      var c = frame(), cn = String(name);
      c.comps = c.comps || {};
      if (!c.comps[cn]) {
        var i = H('C', cn);
        c.comps[cn] = { name: i.name, width: i.width, height: i.height, duration: i.duration,
          frameDuration: i.frameDuration, displayStartTime: i.displayStartTime, pixelAspect: i.pixelAspect,
          numLayers: i.numLayers, layer: function (r) { return layer(r, cn); } };
      }
      return c.comps[cn];
    },
    footage: function () { throw new Error('footage() is not available in the preview'); },
    effect: function (e) { return layer(here()).effect(e); },
    sourceRectAtTime: function (t, extents) { return layer(here()).sourceRectAtTime(t, extents); },
    mask: function () { throw new Error('mask() is not available in the preview'); },
  };
  Object.keys(functions).forEach(function (k) {
    Object.defineProperty(g, k, { value: functions[k], writable: false, configurable: false });
  });
  define('time', function () { return frame().t; });
  define('value', ownValue);
  define('thisComp', comp);
  define('thisLayer', function () { return layer(here()); });
  define('thisProperty', function () { return prop; });
  define('numKeys', function () { return keys().length; });
  define('velocity', function () { return velocityAtTime(frame().t); });
  define('speed', function () { return speedAtTime(frame().t); });
  define('index', here);
  ['inPoint', 'outPoint', 'startTime', 'width', 'height', 'transform'].concat(TRANSFORMS).forEach(function (k) {
    define(k, function () { return layer(here())[k]; });
  });
  // the legacy engine's snake_case names of the common globals
  define('this_comp', comp);
  define('this_layer', function () { return layer(here()); });
  define('this_property', function () { return prop; });
  refuse('$', 'ExtendScript host objects ($.evalFile, $.fileName...) reach outside the expression');
  refuse('app', 'the After Effects application object reaches outside the expression');
  refuse('system', 'system.callSystem and system.osName reach outside the expression');
  refuse('thisProject', 'project items are not read by the preview');
  // a Source Text expression: its value is the text, and text.sourceText too
  // a Source Text expression reads its own text before the expression; other properties the layer's text
  define('text', function () {
    var f = facts();
    return f.sourceText === undefined ? layer(here()).text : { sourceText: f.sourceText };
  });
  // an expression selector's character (the host passes it only there): textIndex, textTotal, selectorValue
  ['textIndex', 'textTotal', 'selectorValue'].forEach(function (k, i) {
    define(k, function () {
      var t = facts().text;
      if (!t) throw new ReferenceError(k + ' is only defined in the expression selector of a text animator');
      return [t.index, t.total, t.selectorValue][i];
    });
  });
  define('marker', function () { return layer(here()).marker; });

  function result(r) {
    // a Source Text expression gives text: a string, or anything that reads as one (a number, an array)
    if (facts().sourceText !== undefined) {
      if (r === undefined || r === null || (typeof r === 'object' && !Array.isArray(r) && !(r instanceof String) && !(r instanceof Number)))
        throw new TypeError('the Source Text expression gave ' + (r === null ? 'null' : typeof r) + ', not text');
      return JSON.stringify({ text: String(r) });
    }
    if (r instanceof Number) r = +r;
    if (typeof r === 'number') return JSON.stringify([r]);
    if (Array.isArray(r) && r.length >= 1 && r.length <= 4) {
      return JSON.stringify(r.map(function (x) { return x instanceof Number ? +x : typeof x === 'number' ? x : String(x); }));
    }
    var what = Array.isArray(r) ? 'an array of ' + r.length : r === null ? 'null' : typeof r;
    throw new TypeError('the expression gave ' + what + ', not a number or an array of 1 to 4 numbers');
  }
  function compile(source) {
    Function(source);
    sources.push(source);
    return sources.length - 1;
  }
  function run(id, t, facts) {
    var saved = cur;
    cur = { t: t, t0: t, facts: facts, layers: {}, comp: undefined, value: undefined };
    try {
      return result(exec(sources[id]));
    } finally {
      cur = saved;
      // globals the expression made by assigning undeclared names (legacy style, "x = time * 2") end with it
      // (such globals are enumerable and no built-in one is, so the usual check is an empty list)
      Object.keys(g).forEach(function (k) { if (!(k in builtin)) delete g[k]; });
    }
  }

  // random numbers are the property's seeded ones; nothing an expression does is seen by another (no new or changed
  // globals, no changed built-ins): the same frame gives the same picture whatever was evaluated before it
  Math.random = function () { return rnd(); };
  var builtin = Object.create(null);
  Object.getOwnPropertyNames(g).forEach(function (k) {
    builtin[k] = true;
    var d = Object.getOwnPropertyDescriptor(g, k);
    var v = d.value;
    if ((typeof v === 'function' || typeof v === 'object') && v !== null && v !== g) {
      Object.freeze(v);
      // errors' prototypes stay open: a frozen message or name could not be set on a new error (the override mistake)
      if (v.prototype && !/Error$/.test(k)) Object.freeze(v.prototype);
    }
    if ('value' in d) Object.defineProperty(g, k, { writable: false, configurable: false });
    else Object.defineProperty(g, k, { configurable: false });
  });
  return { compile: compile, run: run };
})(globalThis);
`;
