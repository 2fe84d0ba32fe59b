import type { ExpressionContext, ExpressionLayer } from '../../src/motion/scene/expressions.js';
import type { Interpolation, Keyframe, NumProperty } from '../../src/motion/scene/model.js';
import { sampleNum } from '../../src/motion/scene/sample.js';

/** Expression contexts made from scene properties as the scene's evaluate makes them (tests and the benchmark). */

/** A property with keys [time, value], linear unless said (layer time = comp time: the layers here start at 0). */
export function keyed(path: string, keys: [number, number[]][], interpolation: Interpolation = 'linear'): NumProperty {
  const frames: Keyframe<number[]>[] = keys.map(([time, value]) => ({
    time,
    value,
    inInterpolation: interpolation,
    outInterpolation: interpolation,
  }));
  return { path, value: keys[0][1], keyframes: frames };
}

export const staticProp = (path: string, value: number[]): NumProperty => ({ path, value });

export interface TestLayer {
  name: string;
  size?: [number, number];
  transform: Partial<Record<'anchorPoint' | 'position' | 'scale' | 'rotation' | 'opacity', NumProperty>>;
}

export const COMP = {
  name: 'Main',
  width: 1920,
  height: 1080,
  pixelAspect: 1,
  duration: 10,
  frameDuration: 1 / 30,
  displayStartTime: 0,
  numLayers: 2,
};

/** The context of property `prop` of layer `index` (1-based) among `layers`, at `time`, as the scene would make it. */
export function context(layers: TestLayer[], index: number, prop: NumProperty, time: number): ExpressionContext {
  const asLayer = (i: number): ExpressionLayer | undefined => {
    const l = layers[i - 1];
    if (!l) return undefined;
    return {
      index: i,
      name: l.name,
      inPoint: 0,
      outPoint: 10,
      startTime: 0,
      ...(l.size ? { width: l.size[0], height: l.size[1] } : {}),
      transform: (name, t) => sampleNum(l.transform[name] ?? staticProp(name, [0]), t),
    };
  };
  return {
    time,
    value: sampleNum(prop, time),
    sampleOwn: (t) => sampleNum(prop, t),
    keyframeTimes: (prop.keyframes ?? []).map((k) => k.time),
    propertyPath: prop.path,
    layerIndex: index,
    layer: (ref) =>
      typeof ref === 'number' ? asLayer(ref) : asLayer(layers.findIndex((l) => l.name === ref) + 1 || -1),
    comp: { ...COMP, numLayers: layers.length },
  };
}
