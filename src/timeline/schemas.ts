import type { JobRecord } from '../jobs/store.js';
import { Type, type Static, type TSchema } from 'typebox';
import { Id, jobOf, OutputResult } from '../http/schemas.js';
import { jobViewAs } from '../jobs/routes.js';
import { RENDER_JOB } from './render.js';
import { CODECS, FORMATS, SIZE_PRESETS } from './render-options.js';

export const BoardParams = Type.Object({ id: Id });
export const ProjectParams = Type.Object({ id: Id, pid: Id });
export const JobParams = Type.Object({
  id: Id,
  pid: Id,
  job_id: Id,
});

export const ProjectSummarySchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    last_modified: Type.String({ description: 'ISO 8601, changes on every save' }),
    duration: Type.Number({ description: 'seconds: end of the last item of a visible channel' }),
  },
  { title: 'VideoProjectSummary' },
);
export const ProjectSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    last_modified: Type.String(),
    duration: Type.Number(),
    data: Type.Record(Type.String(), Type.Unknown(), {
      description: 'the project state in the current layout (see docs/timeline.md)',
    }),
  },
  { title: 'VideoProject' },
);
/** The result of a timeline render job: the runner's output result and the ffmpeg graph it ran. */
export const TimelineRenderResult = Type.Object(
  {
    ...OutputResult.properties,
    filter_complex: Type.String({ description: 'the ffmpeg filter graph of the render' }),
  },
  { title: 'TimelineRenderResult' },
);

/**
 * The spec's render poll (timeline and mockup renders: `{status, progress, eta_seconds, output_url}`) as one job
 * model: the fields of GET /api/jobs/{job_id} for a job of `kind`, plus the spec's `job_id` and `element_id`.
 */
export const renderStatusOf = <K extends string, R extends TSchema>(kind: K, result: R, title: string) =>
  Type.Object(
    {
      ...jobOf(kind, result).properties,
      job_id: Type.String({ description: 'the same as `id`' }),
      element_id: Type.Optional(Type.String({ description: 'the board element the finished video was added as' })),
    },
    { title },
  );
export const RenderStatus = renderStatusOf(RENDER_JOB, TimelineRenderResult, 'TimelineRenderStatus');

export type ProjectSummary = Static<typeof ProjectSummarySchema>;

export const NewProjectBody = Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }) });

export const ProjectReplaceBody = Type.Object({
  id: Type.Optional(Type.String({ maxLength: 64, description: 'must match the path when given' })),
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'kept when left out' })),
  data: Type.Unknown({ description: 'the full project data; unknown fields are kept' }),
});

export const RenderBody = Type.Object(
  {
    format: Type.Optional(Type.Enum(FORMATS)),
    codec: Type.Optional(Type.Enum(CODECS)),
    crf: Type.Optional(Type.Integer({ minimum: 0, maximum: 51 })),
    size_preset: Type.Optional(Type.Enum(SIZE_PRESETS)),
    fps: Type.Optional(Type.Integer({ minimum: 1, maximum: 120 })),
  },
  { additionalProperties: false },
);

/** A job as the render poll answers it (the video-project render, and the mockup render that follows its pattern). */
export function toRenderStatus<S extends TSchema>(schema: S, job: JobRecord): Static<S> {
  const result = job.result as { element_id?: string } | null;
  return {
    ...jobViewAs(schema, job),
    job_id: job.id,
    ...(result?.element_id ? { element_id: result.element_id } : {}),
  };
}
