import { parse, type AnyNode } from 'acorn';

/**
 * After Effects' vector arithmetic: in its expressions `value + [10, 0]`, `position - other`, `[x, y] * 2` and
 * `-value` work on arrays, which plain JavaScript would turn into strings or NaN. The source is rewritten once per
 * expression, before it is compiled: each `+ - * /` (and `+= -= *= /=`, unary minus) becomes a call to the sandbox's
 * `__vec` helpers (prelude.ts), which do what the operator does for numbers and strings and the vector operation
 * for arrays. Text that does not parse is returned as it is (the sandbox then reports the syntax error).
 */

const BINARY: Record<string, string> = { '+': 'add', '-': 'sub', '*': 'mul', '/': 'div' };
const ASSIGN: Record<string, string> = { '+=': 'add', '-=': 'sub', '*=': 'mul', '/=': 'div' };

const isNode = (x: unknown): x is AnyNode =>
  typeof x === 'object' && x !== null && typeof (x as { type?: unknown }).type === 'string';

export function withVectorOperators(source: string): string {
  if (!/[-+*/]/.test(source)) return source;
  let root: AnyNode;
  try {
    root = parse(source, { ecmaVersion: 'latest', sourceType: 'script' });
  } catch {
    return source;
  }
  return rewrite(source, root, 0);
}

function children(node: AnyNode): AnyNode[] {
  const out: AnyNode[] = [];
  for (const [key, v] of Object.entries(node)) {
    if (key === 'type' || key === 'start' || key === 'end') continue;
    if (isNode(v)) out.push(v);
    else if (Array.isArray(v)) for (const x of v) if (isNode(x)) out.push(x);
  }
  return out.sort((a, b) => a.start - b.start);
}

/** The node's text with its children rewritten (a depth guard keeps absurd nesting from the stack). */
function rewrite(src: string, node: AnyNode, depth: number): string {
  if (depth > 500) return src.slice(node.start, node.end);
  const sub = (n: AnyNode) => rewrite(src, n, depth + 1);
  if (node.type === 'BinaryExpression' && BINARY[node.operator])
    return `__vec.${BINARY[node.operator]}(${sub(node.left)}, ${sub(node.right)})`;
  if (node.type === 'UnaryExpression' && node.operator === '-' && node.argument.type !== 'Literal')
    return `__vec.neg(${sub(node.argument)})`;
  if (node.type === 'AssignmentExpression' && ASSIGN[node.operator]) {
    // only plain names and member reads, which read the same the second time
    if (node.left.type === 'Identifier' || node.left.type === 'MemberExpression') {
      const t = sub(node.left);
      return `(${t} = __vec.${ASSIGN[node.operator]}(${t}, ${sub(node.right)}))`;
    }
  }
  let out = '';
  let at = node.start;
  for (const c of children(node)) {
    if (c.start < at) continue; // a shorthand property's key and value are one text
    out += src.slice(at, c.start) + sub(c);
    at = c.end;
  }
  return out + src.slice(at, node.end);
}
