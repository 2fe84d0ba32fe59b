import type { App, AppContext } from '../context.js';
import { Health } from './schemas.js';

export function registerHealth(app: App, ctx: AppContext, version: string): void {
  app.get(
    '/api/health',
    {
      schema: {
        tags: ['service'],
        summary: 'Liveness, version and the external programs that were found',
        response: { 200: Health },
      },
    },
    async () => ({ ok: true, version, tools: await ctx.tools.all() }),
  );
}
