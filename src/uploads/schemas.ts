import { Type } from 'typebox';
import { ElementSchema } from '../boards/schemas.js';

export const UploadResponse = Type.Object(
  {
    filename: Type.String(),
    url: Type.String({ description: '/media/<board_id>/<filename>' }),
    element: Type.Optional(ElementSchema),
  },
  { title: 'UploadResult' },
);
