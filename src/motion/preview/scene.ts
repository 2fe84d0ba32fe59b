import type { DisplayList } from '../scene/display.js';
import type { SceneProject } from '../scene/model.js';
import { Unavailable } from '../../errors.js';

// Placeholder until src/motion/scene lands its decoder and sampler.
export async function decodeScene(_file: string, _signal: AbortSignal): Promise<SceneProject> {
  throw new Unavailable('not_ready', 'scene decoder not ready');
}
export function evaluate(_scene: SceneProject, _comp: number, _time: number): DisplayList {
  throw new Unavailable('not_ready', 'scene sampler not ready');
}
