// Kept only for src/html/render.ts, which is being rewritten on another branch; point it at ./schemas.js and delete.
export type { Element } from './schemas.js';
