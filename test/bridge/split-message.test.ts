import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { splitMessage } from '../../src/bridge/clients/split-message.js';

/** Every chunk has balanced fences: an even number of fence lines. */
const balanced = (chunk: string) => chunk.split('\n').filter((l) => /^\s*```/.test(l)).length % 2 === 0;

describe('splitMessage (Telegram message splitting)', () => {
  it('keeps short text as one message', () => {
    assert.deepEqual(splitMessage('hello\nworld'), ['hello\nworld']);
    assert.deepEqual(splitMessage(''), []);
  });

  it('splits at line breaks under the limit and loses nothing', () => {
    const lines = Array.from({ length: 300 }, (_, i) => `line number ${i} ${'x'.repeat(i % 40)}`);
    const chunks = splitMessage(lines.join('\n'), 500);
    assert.ok(chunks.length > 1);
    for (const c of chunks) assert.ok(c.length <= 500, `chunk of ${c.length}`);
    assert.deepEqual(chunks.join('\n').split('\n'), lines);
  });

  it('closes a code fence at a split and reopens it with its language', () => {
    const code = Array.from({ length: 60 }, (_, i) => `const v${i} = ${i};`);
    const text = ['Here is the code:', '```ts', ...code, '```', 'Done.'].join('\n');
    const chunks = splitMessage(text, 300);
    assert.ok(chunks.length >= 3);
    for (const c of chunks) {
      assert.ok(c.length <= 300);
      assert.ok(balanced(c), `unbalanced chunk:\n${c}`);
    }
    assert.ok(chunks[0].startsWith('Here is the code:\n```ts\n'));
    assert.ok(chunks[0].endsWith('\n```'));
    for (const c of chunks.slice(1, -1)) assert.ok(c.startsWith('```ts\n') && c.endsWith('\n```'));
    assert.ok(chunks.at(-1)!.endsWith('```\nDone.'));
    // Removing the added fences gives back the original lines.
    const body = chunks.map((c, i) => {
      let ls = c.split('\n');
      if (i > 0 && ls[0] === '```ts') ls = ls.slice(1);
      if (i < chunks.length - 1 && ls.at(-1) === '```') ls = ls.slice(0, -1);
      return ls.join('\n');
    });
    assert.equal(body.join('\n'), text);
  });

  it('cuts a single over-long line, inside a fence too, without splitting surrogate pairs', () => {
    const long = '😀'.repeat(400);
    const chunks = splitMessage(`\`\`\`\n${long}\n\`\`\``, 100);
    for (const c of chunks) {
      assert.ok(c.length <= 100);
      assert.ok(balanced(c));
      assert.doesNotMatch(c, /[\ud800-\udbff](?![\udc00-\udfff])/);
    }
    assert.equal(chunks.map((c) => c.replace(/^```\n?|\n?```$/g, '')).join(''), long);
  });

  it('closes a fence left open at the end of the text', () => {
    const chunks = splitMessage('```\nunterminated', 4000);
    assert.deepEqual(chunks, ['```\nunterminated\n```']);
  });
});
