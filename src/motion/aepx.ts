import { SaxesParser } from 'saxes';
import { ProjectFormatError, type Chunk } from './chunks.js';

const MAX_DEPTH = 200;
/**
 * Chunks whose bytes the project reader uses; the others (colour profiles, keyframes, UI state) stay undecoded unless
 * `allChunks` is asked (the scene decoder reads keyframes, shapes and masks).
 */
const READ_CHUNKS = new Set(['svap', 'head', 'idta', 'cdta', 'ldta', 'opti', 'sspc', 'tdmn', 'btdk', 'expr']);

/**
 * Reads an .aepx (the XML form of a project) into the same chunk tree as an .aep: an element with `bdata` is a chunk
 * with those bytes (hex), `<string>` is a Utf8 chunk, `<fileReference>` is the alas record, any other element is a
 * LIST named by the element. Comments people add to these files are ignored. A streaming parser (saxes) builds only
 * this tree: a DOM of a large project would cost several times the time and memory.
 */
export function readAepx(text: string, opts: { allChunks?: boolean } = {}): Chunk {
  const parser = new SaxesParser({ xmlns: false, position: true });
  const root: Chunk = { id: 'Egg!', children: [] };
  const stack: Chunk[] = [];
  let sawRoot = false;
  let skip = 0; // depth inside <ProjectXMPMetadata>, which is not part of the tree
  let strings: string[] | undefined;
  parser.on('opentag', (tag) => {
    if (skip) return void skip++;
    if (!sawRoot) {
      if (tag.name !== 'AfterEffectsProject')
        throw new ProjectFormatError(
          `not an After Effects project: the XML root element is <${tag.name}>, not <AfterEffectsProject>`,
        );
      sawRoot = true;
      stack.push(root);
      return;
    }
    if (stack.length > MAX_DEPTH)
      throw new ProjectFormatError(`elements nested more than ${MAX_DEPTH} levels deep (line ${parser.line})`);
    if (tag.name === 'ProjectXMPMetadata') return void skip++;
    const attrs = tag.attributes as Record<string, string>;
    let node: Chunk;
    if (tag.name === 'string') {
      node = { id: 'Utf8', text: '' };
      strings = [];
    } else if (tag.name === 'fileReference') node = { id: 'alas', fields: { ...attrs } };
    else if (typeof attrs.bdata === 'string')
      node =
        opts.allChunks || READ_CHUNKS.has(tag.name)
          ? { id: tag.name, data: hexBytes(attrs.bdata, tag.name, parser.line) }
          : { id: tag.name };
    else node = { id: tag.name, children: [] };
    stack[stack.length - 1].children!.push(node);
    stack.push(node);
  });
  parser.on('text', (t) => {
    if (strings && !skip) strings.push(t);
  });
  parser.on('closetag', () => {
    if (skip) return void skip--;
    const node = stack.pop();
    if (node?.id === 'Utf8' && strings) {
      node.text = strings.join('');
      strings = undefined;
    }
  });
  try {
    parser.write(text).close();
  } catch (err) {
    if (err instanceof ProjectFormatError) throw err;
    throw new ProjectFormatError(`not a readable .aepx: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!sawRoot) throw new ProjectFormatError('not an After Effects project: the file has no XML root element');
  return root;
}

function hexBytes(hex: string, tag: string, line: number): Uint8Array {
  // Buffer.from stops at the first character that is not hex: a short result is the check.
  const bytes = Buffer.from(hex, 'hex');
  if (hex.length % 2 !== 0 || bytes.length * 2 !== hex.length)
    throw new ProjectFormatError(`<${tag}> on line ${line} has a bdata attribute that is not hex bytes`);
  return bytes;
}
