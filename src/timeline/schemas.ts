import type { JobRecord } from '../jobs/store.js';
import { Type, type Static } from 'typebox';
import { Id, JOB_STATUSES } from '../http/schemas.js';
import { CODECS, FORMATS, SIZE_PRESETS } from './render-options.js';

export const BoardParams = Type.Object({ id: Id });
export const ProjectParams = Type.Object({ id: Id, pid: Id });
export const JobParams = Type.Object({
  id: Id,
  pid: Id,
  job_id: Id,
});

export const ProjectSummarySchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  last_modified: Type.String({ description: 'ISO 8601, changes on every save' }),
  duration: Type.Number({ description: 'seconds: end of the last item of a visible channel' }),
});
export const ProjectSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  last_modified: Type.String(),
  duration: Type.Number(),
  data: Type.Record(Type.String(), Type.Unknown(), {
    description: 'the project state in the current layout (see docs/timeline.md)',
  }),
});
export const RenderStatus = Type.Object({
  job_id: Type.String(),
  status: Type.Enum(JOB_STATUSES),
  progress: Type.Number({ description: 'fraction 0..1' }),
  eta_seconds: Type.Union([Type.Number(), Type.Null()]),
  output_url: Type.Union([Type.String(), Type.Null()], { description: '/media/<board_id>/<file> once complete' }),
  error: Type.Optional(Type.String()),
  error_code: Type.Optional(Type.String({ description: "the failure's stable code, beside `error`" })),
  element_id: Type.Optional(Type.String({ description: 'the board element the finished video was added as' })),
});

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
export function toRenderStatus(job: JobRecord): Static<typeof RenderStatus> {
  const result = job.result as { element_id?: string } | null;
  return {
    job_id: job.id,
    status: job.status,
    progress: job.progress,
    eta_seconds: job.eta_seconds,
    output_url: job.output_url,
    ...(job.error ? { error: job.error } : {}),
    ...(job.error_code ? { error_code: job.error_code } : {}),
    ...(result?.element_id ? { element_id: result.element_id } : {}),
  };
}
