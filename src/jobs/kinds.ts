/**
 * Every job kind and the params its jobs carry, named `<feature>.<verb>`. Each feature adds its own kinds next to its
 * handler by declaration merging, one line per kind:
 *
 *     declare module '../jobs/kinds.js' {
 *       interface JobKinds {
 *         'timeline.render': RenderParams;
 *       }
 *     }
 *
 * so `define`, `enqueue` and `require` are checked against it and no poll route casts `job.params`.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface JobKinds {}

export type JobKind = keyof JobKinds & string;

/**
 * What a job's result holds, for the kinds a request may also run now (`JobRunner.runNow` through
 * `answerNowOrQueued`, whose synchronous answer is that result), declared beside `JobKinds` the same way:
 * `interface JobResults { 'html.render': VideoResult }`. Unknown for the others.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface JobResults {}

export type JobResult<K extends JobKind> = K extends keyof JobResults ? JobResults[K] : unknown;

/** Narrows a job seen in an `update` event (whose params are untyped) to one kind. */
export const isJobOf = <K extends JobKind>(
  job: { kind: string; params: unknown },
  kind: K,
): job is { kind: K; params: JobKinds[K] } => job.kind === kind;
