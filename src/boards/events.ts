import { EventEmitter } from 'node:events';
import type { Board, Element } from './schemas.js';

/**
 * What the emitter carries, event name -> listener arguments. Features add their own events by declaration merging
 * next to the code that emits them (`declare module '../boards/events.js' { interface BoardEventMap {...} }`), the
 * way job kinds extend `JobKinds`, so `boards` never imports a feature above it.
 */
export interface BoardEventMap {
  'board-created': [Board];
  /** Its name or connected folder changed (an element's write moves `updated_at` without this event). */
  'board-updated': [Board];
  'board-deleted': [Board];
  'element-added': [Element, Board];
  /** Any write to an existing element: a patch, data a feature merged, probe facts (the element as stored now). */
  'element-updated': [Element];
  /** Media facts (size, duration, thumbnail) were stored in the element's data (after its `element-updated`). */
  'element-probed': [Element, { path: string }];
  'element-deleted': [Element];
}

/**
 * Events that cross features (the bridge's media hook, the similarity index, the live event stream) go through this
 * emitter. Every write is announced here once it is committed, from the one place that makes it. Listeners must not
 * throw; they run synchronously after the write.
 */
export class BoardEvents extends EventEmitter<BoardEventMap> {}
