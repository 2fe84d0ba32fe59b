import { Type } from 'typebox';
import type { App, AppContext } from '../context.js';

const ToolSchema = Type.Object({
  name: Type.String(),
  found: Type.Boolean(),
  path: Type.Optional(Type.String()),
  source: Type.Optional(Type.String({ description: 'env, system or npm' })),
  version: Type.Optional(Type.String()),
  hint: Type.Optional(Type.String({ description: 'what to install, when the program was not found' })),
});

export function registerHealthRoutes(app: App, ctx: AppContext, version: string): void {
  app.get(
    '/api/health',
    {
      schema: {
        tags: ['service'],
        summary: 'Liveness, version and the external programs that were found',
        response: { 200: Type.Object({ ok: Type.Boolean(), version: Type.String(), tools: Type.Array(ToolSchema) }) },
      },
    },
    async () => ({ ok: true, version, tools: await ctx.tools.all() }),
  );
}
