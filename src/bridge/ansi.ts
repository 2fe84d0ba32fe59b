/**
 * Terminal control sequences, per ECMA-48. Written out here rather than taken from util.stripVTControlCharacters,
 * which leaves OSC strings with spaces (window titles such as `ESC ] 0 ; my title BEL`) in the text.
 * Order matters: control strings first (their payload may contain anything), then CSI, then two-byte escapes.
 */
const SEQUENCES = new RegExp(
  [
    // OSC, DCS, SOS, PM, APC: up to BEL or ST; an unterminated one swallows the rest rather than leaking its payload
    String.raw`(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[\s\S]*?(?:\x07|\x1b\\|\x9c|$)`,
    // CSI: parameters, intermediates, final byte (7-bit ESC [ or 8-bit 0x9b)
    String.raw`(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]`,
    // every other escape: ESC, intermediates, final byte (ESC ( B, ESC 7, ESC =, ESC M ...)
    String.raw`\x1b[\x20-\x2f]*[\x30-\x7e]`,
  ].join('|'),
  'g',
);

/** C0 and C1 controls and DEL, except tab and newline. */
const CONTROLS = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

/**
 * Plain text from terminal output or a chat message: escape sequences removed, CRLF and lone CR turned into newlines
 * (a carriage-return redraw becomes a new line rather than two lines glued together), other controls dropped.
 */
export function stripAnsi(text: string): string {
  return text.replace(SEQUENCES, '').replace(/\r\n?/g, '\n').replace(CONTROLS, '');
}

/** Any C0 or C1 control or DEL, tab and newline included: none of them may reach a terminal as part of a path. */
const ANY_CONTROL = /[\x00-\x1f\x7f-\x9f]/;

/**
 * True when typing `text` into a terminal could do more than insert characters: ESC starts a sequence, CR/LF submit
 * the line, tab completes, C1 0x9b is an 8-bit CSI. Paths are checked with this rather than cleaned, because a
 * cleaned path names another file.
 */
export function hasControlCharacters(text: string): boolean {
  return ANY_CONTROL.test(text);
}
