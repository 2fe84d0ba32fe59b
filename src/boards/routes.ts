import { Type } from 'typebox';
import type { AppContext, App } from '../context.js';
import { ErrorBody, errorResponses } from '../http/schemas.js';
import {
  BoardParams,
  BoardPatchBody,
  BoardRecord,
  BoardSchema,
  BoardSummarySchema,
  ElementParams,
  ElementPatchBody,
  ElementSchema,
  ElementTypeQuery,
  NewBoardBody,
  NewElementBody,
} from './schemas.js';

export function registerBoards(app: App, ctx: AppContext): void {
  const { boards } = ctx;
  const tags = ['boards'];

  app.get(
    '/api/moodboards',
    { schema: { tags, summary: 'List boards', response: { 200: Type.Array(BoardSummarySchema) } } },
    async () => boards.listBoards(),
  );

  app.post(
    '/api/moodboards',
    {
      schema: {
        tags,
        summary: 'Create a board',
        body: NewBoardBody,
        response: { 201: BoardRecord, ...errorResponses },
      },
    },
    async (req, reply) => reply.status(201).send(await boards.createBoard(req.body.name)),
  );

  app.get(
    '/api/moodboards/:id',
    {
      schema: {
        tags,
        summary: 'A board with its elements',
        params: BoardParams,
        response: { 200: BoardSchema, ...errorResponses },
      },
    },
    async (req) => boards.getBoardWithElements(req.params.id),
  );

  app.patch(
    '/api/moodboards/:id',
    {
      schema: {
        tags,
        summary: 'Rename a board or connect it to a folder on disk',
        params: BoardParams,
        body: BoardPatchBody,
        response: { 200: BoardRecord, ...errorResponses },
      },
    },
    async (req) => boards.updateBoard(req.params.id, req.body),
  );

  app.delete(
    '/api/moodboards/:id',
    {
      schema: {
        tags,
        summary: 'Delete a board; its media folder moves to the trash',
        description:
          'The folder moves first: one that another program still holds after a few retries (Windows) answers 409 `folder_busy` and the board stays.',
        params: BoardParams,
        response: { 204: Type.Null(), ...errorResponses, 409: ErrorBody },
      },
    },
    async (req, reply) => {
      await boards.deleteBoard(req.params.id);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/api/moodboards/:id/elements',
    {
      schema: {
        tags,
        summary: "List a board's elements",
        params: BoardParams,
        querystring: ElementTypeQuery,
        response: { 200: Type.Array(ElementSchema), ...errorResponses },
      },
    },
    async (req) => boards.listElements(req.params.id, req.query.type),
  );

  app.post(
    '/api/moodboards/:id/elements',
    {
      schema: {
        tags,
        summary: 'Add an element',
        description:
          'url must name an existing /media file (html cards without url get a new backing file; text elements need none).',
        params: BoardParams,
        body: NewElementBody,
        response: { 201: ElementSchema, ...errorResponses },
      },
    },
    async (req, reply) => {
      boards.checkClientData(req.body.data);
      return reply.status(201).send(await boards.addElement(req.params.id, req.body));
    },
  );

  app.get(
    '/api/moodboards/:id/elements/:eid',
    {
      schema: {
        tags,
        summary: 'One element',
        params: ElementParams,
        response: { 200: ElementSchema, ...errorResponses },
      },
    },
    async (req) => boards.requireElement(req.params.id, req.params.eid),
  );

  app.patch(
    '/api/moodboards/:id/elements/:eid',
    {
      schema: {
        tags,
        summary: 'Move, resize, rename an element or merge keys into its data (a key set to null is removed)',
        params: ElementParams,
        body: ElementPatchBody,
        response: { 200: ElementSchema, ...errorResponses },
      },
    },
    async (req) => {
      boards.checkClientData(req.body.data);
      return boards.updateElement(req.params.id, req.params.eid, req.body);
    },
  );

  app.delete(
    '/api/moodboards/:id/elements/:eid',
    {
      schema: {
        tags,
        summary: 'Remove an element from the board (its file stays in the board folder)',
        params: ElementParams,
        response: { 204: Type.Null(), ...errorResponses },
      },
    },
    async (req, reply) => {
      boards.deleteElement(req.params.id, req.params.eid);
      return reply.status(204).send(null);
    },
  );
}
