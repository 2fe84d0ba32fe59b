import { Type } from 'typebox';

const ToolSchema = Type.Object({
  name: Type.String(),
  found: Type.Boolean(),
  path: Type.Optional(Type.String()),
  source: Type.Optional(Type.String({ description: 'env, system or npm' })),
  version: Type.Optional(Type.String()),
  hint: Type.Optional(Type.String({ description: 'what to install, when the program was not found' })),
});

export const Health = Type.Object({ ok: Type.Boolean(), version: Type.String(), tools: Type.Array(ToolSchema) });
