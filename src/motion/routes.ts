import type { Feature } from '../context.js';
import { errorResponses } from '../http/errors.js';
import { AerenderLocator } from './detect.js';
import { inspectFile, resolveProjectFile } from './inspect.js';
import { DetectAnswer, InspectAnswer, ProjectRef } from './schemas.js';

/** The motion editor (After Effects): detect aerender, inspect projects without it, render them with edits. */
export const registerMotion: Feature = (app, ctx) => {
  const aerender = new AerenderLocator(ctx.tools);
  const tags = ['motion editor'];

  app.get(
    '/api/motion/detect',
    { schema: { tags, summary: 'Whether After Effects (aerender) is installed, where, and its version', response: { 200: DetectAnswer } } },
    async () => aerender.detect(),
  );

  app.post(
    '/api/motion/projects/inspect',
    {
      schema: {
        tags,
        summary: 'Compositions, layers, footage and editable parts of an .aep/.aepx project (read-only; needs no After Effects)',
        body: ProjectRef,
        response: { 200: InspectAnswer, ...errorResponses },
      },
    },
    async (req) => {
      const file = await resolveProjectFile(ctx, req.body);
      const project = await inspectFile(file);
      return { ...project, installed: (await aerender.detect()).installed };
    },
  );
};
