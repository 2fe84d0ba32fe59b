import { EventEmitter } from 'node:events';
import type { Board, Element } from './schemas.js';

/**
 * Events that cross features (the bridge's media hook, the similarity index) go through this emitter, so that
 * `boards` never imports a feature above it. Listeners must not throw; they run synchronously after the write.
 */
export class BoardEvents extends EventEmitter<{
  'element-added': [Element, Board];
  /** Media facts (size, duration, thumbnail) were stored in the element's data. */
  'element-probed': [Element, { path: string }];
  'element-deleted': [Element];
  'board-deleted': [Board];
}> {}
