/** The part of opentype.js (which ships no types) that glyphs.ts uses. */
declare module 'opentype.js' {
  export type PathCommand =
    | { type: 'M'; x: number; y: number }
    | { type: 'L'; x: number; y: number }
    | { type: 'Q'; x1: number; y1: number; x: number; y: number }
    | { type: 'C'; x1: number; y1: number; x2: number; y2: number; x: number; y: number }
    | { type: 'Z' };
  export interface Glyph {
    index: number;
    advanceWidth?: number;
    getPath(x: number, y: number, fontSize: number): { commands: PathCommand[] };
  }
  export interface Font {
    unitsPerEm: number;
    charToGlyph(ch: string): Glyph;
    getEnglishName(name: 'fontFamily' | 'fontSubfamily' | 'postScriptName'): string | undefined;
  }
  const opentype: { parse(buffer: ArrayBuffer): Font };
  export default opentype;
}
