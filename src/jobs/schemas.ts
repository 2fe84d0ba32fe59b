import { Type } from 'typebox';
import { Id, JobSchema } from '../http/schemas.js';

export const JobParams = Type.Object({ job_id: Id });

export const JobListQuery = Type.Object({
  board_id: Type.Optional(Type.String()),
  kind: Type.Optional(Type.String()),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500 })),
});

export const JobList = Type.Object({ jobs: Type.Array(JobSchema) });
