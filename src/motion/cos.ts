/**
 * A reader for the COS (PDF object syntax) that After Effects stores text documents in (`btdk`): dictionaries
 * `<< /key value >>`, arrays `[ ]`, names `/x`, strings `( )` (UTF-16BE after a FE FF mark), numbers and booleans.
 * The body itself is an unbracketed dictionary.
 */
export type CosValue = number | boolean | null | string | { name: string } | CosValue[] | { [key: string]: CosValue };

const MAX_DEPTH = 200;

export function parseCos(buf: Uint8Array): Record<string, CosValue> {
  const r = new Reader(buf);
  const dict = r.dictBody(0, true);
  return dict;
}

class Reader {
  at = 0;
  constructor(private readonly b: Uint8Array) {}

  private ws(): void {
    while (this.at < this.b.length) {
      const c = this.b[this.at];
      if (c === 0x25) {
        // % comment to end of line
        while (this.at < this.b.length && this.b[this.at] !== 0x0a && this.b[this.at] !== 0x0d) this.at++;
      } else if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09 || c === 0x0c || c === 0x00) this.at++;
      else break;
    }
  }

  private fail(what: string): never {
    throw new Error(`text document: ${what} at byte ${this.at}`);
  }

  dictBody(depth: number, top: boolean): Record<string, CosValue> {
    const out: Record<string, CosValue> = {};
    for (;;) {
      this.ws();
      if (this.at >= this.b.length) {
        if (top) return out;
        this.fail('unterminated dictionary');
      }
      if (this.b[this.at] === 0x3e && this.b[this.at + 1] === 0x3e) {
        if (top) this.fail('unexpected >>');
        this.at += 2;
        return out;
      }
      if (this.b[this.at] !== 0x2f) this.fail('expected a /name key');
      const key = this.name();
      out[key] = this.value(depth + 1);
    }
  }

  private name(): string {
    this.at++; // '/'
    const start = this.at;
    while (this.at < this.b.length && !isDelimiter(this.b[this.at])) this.at++;
    return Buffer.from(this.b.subarray(start, this.at)).toString('latin1');
  }

  value(depth: number): CosValue {
    if (depth > MAX_DEPTH) this.fail('nesting too deep');
    this.ws();
    const c = this.b[this.at];
    if (c === undefined) this.fail('missing value');
    if (c === 0x3c && this.b[this.at + 1] === 0x3c) {
      this.at += 2;
      return this.dictBody(depth, false);
    }
    if (c === 0x5b) {
      this.at++;
      const arr: CosValue[] = [];
      for (;;) {
        this.ws();
        if (this.at >= this.b.length) this.fail('unterminated array');
        if (this.b[this.at] === 0x5d) {
          this.at++;
          return arr;
        }
        arr.push(this.value(depth + 1));
      }
    }
    if (c === 0x28) return this.string();
    if (c === 0x2f) return { name: this.name() };
    const start = this.at;
    while (this.at < this.b.length && !isDelimiter(this.b[this.at])) this.at++;
    const word = Buffer.from(this.b.subarray(start, this.at)).toString('latin1');
    if (word === 'true') return true;
    if (word === 'false') return false;
    if (word === 'null') return null;
    const num = Number(word);
    if (word === '' || !Number.isFinite(num)) this.fail(`unexpected token ${JSON.stringify(word.slice(0, 20))}`);
    return num;
  }

  /** `( ... )` with balanced parentheses and backslash escapes; FE FF starts UTF-16BE. */
  private string(): string {
    this.at++;
    const bytes: number[] = [];
    let depth = 1;
    for (;;) {
      if (this.at >= this.b.length) this.fail('unterminated string');
      const c = this.b[this.at++];
      if (c === 0x5c) {
        const e = this.b[this.at++];
        const map: Record<number, number> = { 0x6e: 0x0a, 0x72: 0x0d, 0x74: 0x09, 0x62: 0x08, 0x66: 0x0c };
        if (e >= 0x30 && e <= 0x37) {
          let v = e - 0x30;
          for (let i = 0; i < 2 && this.b[this.at] >= 0x30 && this.b[this.at] <= 0x37; i++)
            v = v * 8 + (this.b[this.at++] - 0x30);
          bytes.push(v & 0xff);
        } else bytes.push(map[e] ?? e);
        continue;
      }
      if (c === 0x28) depth++;
      if (c === 0x29 && --depth === 0) break;
      bytes.push(c);
    }
    const raw = Buffer.from(bytes);
    if (raw.length >= 2 && raw[0] === 0xfe && raw[1] === 0xff) {
      const body = raw.subarray(2);
      const even = Buffer.from(body.subarray(0, body.length - (body.length % 2)));
      return even.swap16().toString('utf16le');
    }
    return raw.toString('latin1');
  }
}

function isDelimiter(c: number): boolean {
  // whitespace, ( ) < > [ ] { } / %
  return (
    c <= 0x20 ||
    c === 0x28 ||
    c === 0x29 ||
    c === 0x3c ||
    c === 0x3e ||
    c === 0x5b ||
    c === 0x5d ||
    c === 0x7b ||
    c === 0x7d ||
    c === 0x2f ||
    c === 0x25
  );
}

/** Follows a path of dictionary keys and array indices; undefined where the shape differs. */
export function cosPath(v: CosValue | undefined, ...keys: (string | number)[]): CosValue | undefined {
  let cur: CosValue | undefined = v;
  for (const k of keys) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = Array.isArray(cur)
      ? typeof k === 'number'
        ? cur[k]
        : undefined
      : (cur as Record<string, CosValue>)[String(k)];
  }
  return cur;
}
