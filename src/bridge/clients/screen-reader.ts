import xterm from '@xterm/headless';
import type { IBuffer, IMarker, Terminal as TerminalType } from '@xterm/headless';

const { Terminal } = xterm;

/** Longest text one read returns; beyond it the oldest lines are replaced by a note. */
const MAX_READ_CHARS = 16_000;

interface BufferState {
  /**
   * Normal buffer: the scrollback row just above the screen at the last read, tracked by xterm through scrolling
   * and trimming. It sits in the scrollback because erasing the screen disposes markers on screen rows; it is
   * disposed only when the scrollback itself is trimmed past it or cleared.
   */
  anchor?: IMarker;
  /** Logical lines from the top of the screen at the last read. */
  lines: string[];
}

/**
 * Terminal output as a reader of the screen sees it: the raw pty stream is fed into a headless xterm, and each read
 * returns the lines that are new or changed since the previous read. Cursor movement, redraws, colours and progress
 * bars are resolved by the emulator rather than guessed at with regexes; a full-screen redraw that changes nothing
 * sends nothing.
 */
export class ScreenReader {
  private readonly term: TerminalType;
  private readonly state = { normal: { lines: [] } as BufferState, alternate: { lines: [] } as BufferState };

  constructor(cols: number, rows: number, scrollback = 5000) {
    // The headless build counts `buffer` as proposed API.
    this.term = new Terminal({ cols, rows, scrollback, allowProposedApi: true });
  }

  write(data: string): void {
    this.term.write(data);
  }

  resize(cols: number, rows: number): void {
    this.term.resize(cols, rows);
  }

  /** True when the program asked for bracketed paste (typed text is then wrapped so it arrives as one paste). */
  get bracketedPaste(): boolean {
    return this.term.modes.bracketedPasteMode;
  }

  /** The text of every line that is new or changed since the last read ('' when nothing changed). */
  async read(): Promise<string> {
    await new Promise<void>((resolve) => this.term.write('', resolve));
    const buf = this.term.buffer.active;
    const state = this.state[buf.type];
    // A disposed anchor (line -1): its row was trimmed off or the scrollback was cleared, so everything left is new.
    const lost = state.anchor !== undefined && state.anchor.line < 0;
    const start = state.anchor && !lost ? state.anchor.line + 1 : 0;
    const previous = lost ? [] : state.lines;
    const current = logicalLines(buf, start);
    const changed = current.filter((line, i) => line !== previous[i]);

    state.anchor?.dispose();
    state.anchor = buf.type === 'normal' && buf.baseY > 0 ? this.term.registerMarker(-buf.cursorY - 1) : undefined;
    state.lines = logicalLines(buf, buf.baseY);
    return limit(trimBlankEdges(changed));
  }

  dispose(): void {
    this.term.dispose();
  }
}

/** Rows joined where the terminal soft-wrapped them, from row `start` down, without trailing blank lines. */
function logicalLines(buf: IBuffer, start: number): string[] {
  const lines: string[] = [];
  for (let y = start; y < buf.length; y++) {
    const row = buf.getLine(y);
    if (!row) break;
    const continues = buf.getLine(y + 1)?.isWrapped ?? false;
    const text = row.translateToString(!continues);
    if (row.isWrapped && y > start && lines.length > 0) lines[lines.length - 1] += text;
    else lines.push(text);
  }
  while (lines.length > 0 && lines[lines.length - 1].trim() === '') lines.pop();
  return lines;
}

function trimBlankEdges(lines: string[]): string[] {
  let a = 0;
  let b = lines.length;
  while (a < b && lines[a].trim() === '') a++;
  while (b > a && lines[b - 1].trim() === '') b--;
  return lines.slice(a, b);
}

function limit(lines: string[]): string {
  const text = lines.join('\n');
  if (text.length <= MAX_READ_CHARS) return text;
  let kept = 0;
  let from = lines.length;
  while (from > 0 && kept + lines[from - 1].length + 1 < MAX_READ_CHARS - 100) kept += lines[--from].length + 1;
  return [`… (${from} earlier lines omitted)`, ...lines.slice(from)].join('\n');
}
