/** Telegram refuses messages over 4096 characters; a little margin keeps us clear of how it counts. */
const MESSAGE_LIMIT = 4000;

const FENCE = /^\s*```/;
const CLOSE = '```';

/**
 * Splits text into messages of at most `limit` characters, at line breaks where possible. A ``` code block that
 * spans a split is closed at the end of one message and reopened (with its language) at the start of the next, so
 * each message is well-formed on its own. A single line longer than a message is cut hard.
 */
export function splitMessage(text: string, limit = MESSAGE_LIMIT): string[] {
  const chunks: string[] = [];
  let lines: string[] = [];
  let size = 0;
  /** The opening fence line while inside a code block. */
  let fence: string | null = null;
  /** Lines at the start of the chunk that only reopen the fence (not worth a message of their own). */
  let reopened = 0;

  const flush = () => {
    const chunk = lines.join('\n') + (fence ? `\n${CLOSE}` : '');
    if (lines.length > reopened && chunk.trim() !== '') chunks.push(chunk);
    lines = fence ? [fence] : [];
    size = fence ? fence.length : 0;
    reopened = lines.length;
  };
  const append = (line: string) => {
    size += (lines.length > 0 ? 1 : 0) + line.length;
    lines.push(line);
  };
  /** Room for `line` in the current chunk, keeping space to close a fence that is still open after it. */
  const fits = (line: string, fenceAfter: string | null) =>
    size + (lines.length > 0 ? 1 : 0) + line.length + (fenceAfter ? CLOSE.length + 1 : 0) <= limit;

  for (let line of text.split('\n')) {
    const isFence = FENCE.test(line);
    const fenceAfter: string | null = isFence ? (fence ? null : line.trim().slice(0, 64)) : fence;
    if (!fits(line, fenceAfter)) flush();
    while (!fits(line, fenceAfter)) {
      let take = Math.max(2, limit - size - (lines.length > 0 ? 1 : 0) - (fence ? CLOSE.length + 1 : 0));
      const code = line.charCodeAt(take - 1);
      if (code >= 0xd800 && code <= 0xdbff) take--; // never cut a surrogate pair in half
      append(line.slice(0, take));
      line = line.slice(take);
      flush();
    }
    append(line);
    fence = fenceAfter;
  }
  flush();
  return chunks;
}
