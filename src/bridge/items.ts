import { Type, type Static } from 'typebox';
import { newId, nowIso } from '../ids.js';

export const ItemSchema = Type.Object(
  {
    id: Type.String({ description: 'unique item id, `bi_...`' }),
    kind: Type.Enum(['text', 'media', 'path']),
    text: Type.Optional(Type.String({ description: 'kind text: plain text (to-messenger text has no escape sequences)' })),
    url: Type.Optional(Type.String({ description: 'kind media and path: the `/media/...` url of the file' })),
    caption: Type.Optional(Type.String({ description: 'kind media: optional caption' })),
    path: Type.Optional(Type.String({ description: 'kind path: absolute local path of the file' })),
    created_at: Type.String({ description: 'ISO 8601 UTC time the item was queued' }),
  },
  { description: 'One queued bridge item. Fields that do not apply to the kind are absent.' },
);
export type BridgeItem = Static<typeof ItemSchema>;

export const textItem = (text: string): BridgeItem => ({ id: newId('bi_'), kind: 'text', text, created_at: nowIso() });

export const mediaItem = (url: string, caption?: string): BridgeItem => ({
  id: newId('bi_'),
  kind: 'media',
  url,
  ...(caption !== undefined && caption !== '' ? { caption } : {}),
  created_at: nowIso(),
});

export const pathItem = (url: string, path: string): BridgeItem => ({ id: newId('bi_'), kind: 'path', url, path, created_at: nowIso() });
