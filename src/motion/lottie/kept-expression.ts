import { parse, type Program } from 'acorn';
import { withVectorOperators } from '../scene/expressions/operators.js';

/**
 * An After Effects expression as lottie-web runs it (`expressions: keep`): lottie-web evaluates the text in a function
 * and takes the value of `$bm_rt`, and adds arrays with `$bm_sum`/`$bm_sub`/`$bm_mul`/`$bm_div`/`$bm_neg` as bodymovin
 * rewrites them. The operators are rewritten by the sandbox's own rewriter (scene/expressions/operators.ts), whose
 * helper calls are renamed to lottie-web's; the last statement's value is assigned to `$bm_rt`.
 */
const HELPERS: Record<string, string> = {
  add: '$bm_sum',
  sub: '$bm_sub',
  mul: '$bm_mul',
  div: '$bm_div',
  neg: '$bm_neg',
};

export function keptExpression(
  source: string,
): { ok: true; text: string } | { ok: false; text: string; reason: string } {
  const rewritten = withVectorOperators(source).replace(
    /__vec\.(add|sub|mul|div|neg)\(/g,
    (_, op: string) => `${HELPERS[op]}(`,
  );
  let program: Program;
  try {
    program = parse(rewritten, { ecmaVersion: 'latest', sourceType: 'script' });
  } catch (err) {
    return { ok: false, text: source, reason: `it does not parse (${(err as Error).message})` };
  }
  const last = program.body[program.body.length - 1];
  if (!last || last.type !== 'ExpressionStatement')
    return {
      ok: false,
      text: `var $bm_rt;\n${rewritten}`,
      reason: 'its last statement is not an expression, so lottie-web gets no value from it',
    };
  const value = rewritten.slice(last.expression.start, last.expression.end);
  return {
    ok: true,
    text: `var $bm_rt;\n${rewritten.slice(0, last.start)}$bm_rt = ${value};${rewritten.slice(last.end)}`,
  };
}
