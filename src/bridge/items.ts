import type { Static } from 'typebox';
import { newId, nowIso } from '../ids.js';
import type { ItemSchema } from './schemas.js';

export type BridgeItem = Static<typeof ItemSchema>;

export const textItem = (text: string): BridgeItem => ({ id: newId('bi_'), kind: 'text', text, created_at: nowIso() });

export const mediaItem = (url: string, caption?: string): BridgeItem => ({
  id: newId('bi_'),
  kind: 'media',
  url,
  ...(caption !== undefined && caption !== '' ? { caption } : {}),
  created_at: nowIso(),
});

export const pathItem = (url: string, path: string): BridgeItem => ({
  id: newId('bi_'),
  kind: 'path',
  url,
  path,
  created_at: nowIso(),
});
