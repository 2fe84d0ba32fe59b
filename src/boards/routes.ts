import { Type } from 'typebox';
import type { AppContext, App } from '../context.js';
import { errorResponses } from '../http/errors.js';
import { BoardSchema, BoardSummarySchema, ELEMENT_TYPES, ElementSchema } from './types.js';

const BoardParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
const ElementParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }), eid: Type.String({ minLength: 1, maxLength: 64 }) });
const ElementTypeSchema = Type.Enum(ELEMENT_TYPES);
const Data = Type.Record(Type.String(), Type.Unknown());
const Coord = Type.Number({ minimum: -1e7, maximum: 1e7 });
const Size = Type.Union([Type.Number({ minimum: 0, maximum: 1e7 }), Type.Null()]);

/** Fields a client may set on an element, shared by POST (plus type and url) and PATCH. */
const EditableElementFields = {
  name: Type.Optional(Type.Union([Type.String({ maxLength: 500 }), Type.Null()])),
  data: Type.Optional(Data),
  x: Type.Optional(Coord),
  y: Type.Optional(Coord),
  width: Type.Optional(Size),
  height: Type.Optional(Size),
};

const BoardRecord = Type.Object({
  id: Type.String(),
  name: Type.String(),
  created_at: Type.String(),
  updated_at: Type.String(),
  connected_folder: Type.Union([Type.String(), Type.Null()]),
});

export function registerBoardRoutes(app: App, ctx: AppContext): void {
  const { boards } = ctx;
  const tags = ['boards'];

  app.get('/api/moodboards', { schema: { tags, summary: 'List boards', response: { 200: Type.Array(BoardSummarySchema) } } }, async () =>
    boards.listBoards(),
  );

  app.post(
    '/api/moodboards',
    {
      schema: {
        tags,
        summary: 'Create a board',
        body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false }),
        response: { 201: BoardRecord, ...errorResponses },
      },
    },
    async (req, reply) => reply.status(201).send(await boards.createBoard(req.body.name)),
  );

  app.get(
    '/api/moodboards/:id',
    { schema: { tags, summary: 'A board with its elements', params: BoardParams, response: { 200: BoardSchema, ...errorResponses } } },
    async (req) => boards.getBoardWithElements(req.params.id),
  );

  app.patch(
    '/api/moodboards/:id',
    {
      schema: {
        tags,
        summary: 'Rename a board or connect it to a folder on disk',
        params: BoardParams,
        body: Type.Object(
          {
            name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
            connected_folder: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 4096 }), Type.Null()])),
          },
          { additionalProperties: false },
        ),
        response: { 200: BoardRecord, ...errorResponses },
      },
    },
    async (req) => boards.updateBoard(req.params.id, req.body),
  );

  app.delete(
    '/api/moodboards/:id',
    { schema: { tags, summary: 'Delete a board; its media folder moves to the trash', params: BoardParams, response: { 204: Type.Null(), ...errorResponses } } },
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
        querystring: Type.Object({ type: Type.Optional(ElementTypeSchema) }),
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
        description: 'url must name an existing /media file (html cards without url get a new backing file; text elements need none).',
        params: BoardParams,
        body: Type.Object(
          {
            type: ElementTypeSchema,
            url: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 4096 }), Type.Null()])),
            ...EditableElementFields,
          },
          { additionalProperties: false },
        ),
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
    { schema: { tags, summary: 'One element', params: ElementParams, response: { 200: ElementSchema, ...errorResponses } } },
    async (req) => boards.requireElement(req.params.id, req.params.eid),
  );

  app.patch(
    '/api/moodboards/:id/elements/:eid',
    {
      schema: {
        tags,
        summary: 'Move, resize, rename an element or merge keys into its data (a key set to null is removed)',
        params: ElementParams,
        body: Type.Object(EditableElementFields, { additionalProperties: false }),
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
