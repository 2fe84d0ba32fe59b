import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { startService, type TestService } from '../helpers/service.js';
import { cdta, chunk, idta, ldta, list, rifx, svap, tdgp, utf8 } from './rifx-writer.js';
import { sampleProject } from './project-builder.js';

const FIXTURES = path.resolve('../shared/fixtures/after-effects');
const haveFixtures = fs.existsSync(path.join(FIXTURES, 'expected.json'));
if (!haveFixtures) console.log(`# motion inspect: ${FIXTURES} is absent, the real After Effects fixtures are skipped`);

/** What the independent reading in expected.json calls "av", split by source the way the API reports it. */
const AV_TYPES = ['footage', 'solid', 'precomp', 'null', 'adjustment'];

describe('motion project inspect', () => {
  let t: TestService;
  let board: string;

  before(async () => {
    t = await startService({ AERENDER_PATH: '/nonexistent/aerender' });
    board = await t.createBoard('Motion');
  });
  after(() => t.close());

  async function uploadElement(name: string, data: Buffer): Promise<{ id: string; url: string }> {
    const up = await t.upload(board, { name, data }, { addToBoard: true });
    assert.equal(up.status, 200, up.text);
    return { id: up.body.element.id, url: up.body.url };
  }

  const inspect = (body: Record<string, unknown>) =>
    t.api('POST', '/api/motion/projects/inspect', { board_id: board, ...body });

  describe('real projects saved by After Effects', { skip: haveFixtures ? false : `${FIXTURES} is absent` }, () => {
    const expected = haveFixtures
      ? (JSON.parse(fs.readFileSync(path.join(FIXTURES, 'expected.json'), 'utf8')) as Record<string, any>)
      : {};
    for (const [file, want] of Object.entries(expected)) {
      it(`reads ${file} to the values of expected.json`, async () => {
        const el = await uploadElement(file, await fsp.readFile(path.join(FIXTURES, file)));
        const res = await inspect({ element_id: el.id });
        assert.equal(res.status, 200, res.text);
        const got = res.body;
        assert.equal(got.installed, false);
        assert.equal(got.ae_version, want.aeVersion);
        assert.equal(got.expression_engine, want.expressionEngine);
        assert.equal(got.compositions.length, want.compositions.length);
        want.compositions.forEach((wc: any, ci: number) => {
          const gc = got.compositions[ci];
          const where = `${file} comp ${wc.name}`;
          assert.deepEqual([gc.id, gc.name, gc.width, gc.height], [wc.id, wc.name, wc.width, wc.height], where);
          assert.ok(Math.abs(gc.frame_rate - wc.frameRate) < 1e-6, `${where} frame rate ${gc.frame_rate}`);
          assert.ok(Math.abs(gc.duration - wc.duration) < 1e-9, `${where} duration ${gc.duration}`);
          assert.deepEqual(gc.background, wc.bgColor, where);
          assert.equal(gc.layers.length, wc.layers.length, `${where} layer count`);
          wc.layers.forEach((wl: any, li: number) => {
            const gl = gc.layers[li];
            const lw = `${where} layer ${wl.index} ${wl.name}`;
            assert.deepEqual([gl.index, gl.id, gl.name, gl.named], [wl.index, wl.id, wl.name, wl.rawName !== ''], lw);
            if (wl.type === 'av') assert.ok(AV_TYPES.includes(gl.type), `${lw}: type ${gl.type}`);
            else assert.equal(gl.type, wl.type, lw);
            assert.equal(gl.source?.id ?? 0, wl.sourceId, lw);
            if (wl.sourcePath) assert.equal(gl.source.path, wl.sourcePath, lw);
            assert.equal(
              gl.parent_index,
              wl.parentId ? gc.layers.findIndex((x: any) => x.id === wl.parentId) + 1 : undefined,
              lw,
            );
            assert.ok(
              Math.abs(gl.in_point - wl.inPoint) < 1e-6 && Math.abs(gl.out_point - wl.outPoint) < 1e-6,
              `${lw} in/out`,
            );
            assert.equal(gl.source_text, wl.sourceText, lw);
            assert.deepEqual(gl.fonts, wl.fonts, lw);
            assert.deepEqual(
              gl.expressions,
              (wl.expressions ?? []).map((e: any) => ({
                property: e.matchNamePath.split('/').join('>'),
                expression: e.expression,
              })),
              lw,
            );
          });
        });
        assert.deepEqual(
          got.footage,
          want.footage.map((f: any) => ({
            id: f.id,
            name: f.name,
            kind: f.kind,
            ...(f.path ? { path: f.path } : {}),
            ...(f.width ? { width: f.width } : {}),
            ...(f.height ? { height: f.height } : {}),
          })),
          `${file} footage`,
        );
        const texts = want.compositions.flatMap((c: any) =>
          c.layers.filter((l: any) => l.type === 'text').map((l: any) => `${c.name}/${l.index}/${l.sourceText}`),
        );
        assert.deepEqual(
          got.editable.text.map((e: any) => `${e.composition}/${e.layer_index}/${e.text}`),
          texts,
        );
        const exprCount = want.compositions.flatMap((c: any) =>
          c.layers.flatMap((l: any) => l.expressions ?? []),
        ).length;
        assert.equal(got.editable.expressions.length, exprCount);
      });
    }

    it('answers by /media URL as well as by element', async () => {
      const el = await uploadElement(
        'by-url.aepx',
        await fsp.readFile(path.join(FIXTURES, 'aepxjs-2layers1image.aepx')),
      );
      const res = await inspect({ url: el.url });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(
        res.body.editable.media.map((m: any) => [m.layer_index, m.layer, m.source_id]),
        [
          [1, '2016-aug-deep.jpg', 12],
          [2, '2016-aug-deep.jpg', 12],
          [3, '2018-aug-deep.jpg', 15],
        ],
      );
    });

    it('names a truncated real project as truncated', async () => {
      const whole = await fsp.readFile(path.join(FIXTURES, 'boltframe-Property-01.aep'));
      const el = await uploadElement('cut.aep', whole.subarray(0, Math.floor(whole.length / 2)));
      const res = await inspect({ element_id: el.id });
      assert.equal(res.status, 400);
      assert.equal(res.body.error.code, 'invalid_project');
      assert.match(res.body.error.message, /cut\.aep: truncated file: the RIFX header declares \d+ bytes/);
    });
  });

  describe('projects built by our own RIFX writer', () => {
    it('reads names, types, sources, parents, text, fonts and expressions; skips SLay and unknown chunks', async () => {
      const unknown = [
        chunk('zzzz', Buffer.from('odd')),
        list('Qqqq', chunk('abc1', Buffer.alloc(7, 1))),
        // a writer that leaves out the pad byte of the last odd chunk of a LIST
        list('Qqqr', chunk('abc2', Buffer.alloc(2)), chunk('abc3', Buffer.alloc(5, 2), { pad: false })),
        chunk('fvdv', Buffer.alloc(0)),
        // property user names as AE 11 to 13 write them (the string itself, an empty one as one or two zero bytes)
        // next to the later form (a Utf8 chunk inside)
        list(
          'tdgp',
          chunk('tdsn', Buffer.alloc(1)),
          chunk('tdsn', Buffer.alloc(2)),
          chunk('tdsn', Buffer.from('Compositing Options\0')),
          chunk('tdsn', utf8('Mine')),
        ),
      ];
      for (const ldtaSize of [160, 164]) {
        const el = await uploadElement(`built-${ldtaSize}.aep`, sampleProject({ ldtaSize, extra: unknown }));
        const res = await inspect({ element_id: el.id });
        assert.equal(res.status, 200, res.text);
        const p = res.body;
        assert.equal(p.ae_version, '23.1x5');
        assert.equal(p.expression_engine, 'javascript-1.0');
        assert.deepEqual(
          p.compositions.map((c: any) => [c.name, c.width, c.height, c.frame_rate, c.duration]),
          [
            ['Main', 320, 180, 25, 2],
            ['Outro', 640, 360, 30, 1],
          ],
        );
        assert.deepEqual(p.compositions[0].background, [10, 20, 30]);
        const layers = p.compositions[0].layers;
        assert.deepEqual(
          layers.map((l: any) => [l.index, l.name, l.type]),
          [
            [1, 'Title', 'text'],
            [2, 'logo.png', 'footage'],
            [3, 'Backdrop', 'solid'],
            [4, 'Bar', 'shape'],
          ],
        );
        assert.equal(layers[0].source_text, 'Hello (world)\r');
        assert.deepEqual(layers[0].fonts, ['Arial-BoldMT']);
        assert.deepEqual(layers[1].source, {
          id: 20,
          name: 'logo.png',
          kind: 'file',
          path: '/Users/someone/Projects/logo.png',
        });
        assert.equal(layers[2].parent_index, 1);
        assert.equal(layers[2].source.name, 'Dark Solid');
        assert.deepEqual(layers[3].expressions, [
          { property: 'ADBE Transform Group>ADBE Position', expression: 'wiggle(2, 10)' },
        ]);
        assert.deepEqual(
          p.compositions[1].layers.map((l: any) => [l.name, l.named, l.type, l.source?.kind]),
          [
            ['Main', false, 'precomp', 'composition'],
            ['Bye', false, 'text', undefined],
          ],
        );
        assert.deepEqual(
          layers.map((l: any) => l.named),
          [true, false, true, true],
        );
        assert.deepEqual(
          p.footage.map((f: any) => [f.id, f.name, f.kind]),
          [
            [20, 'logo.png', 'file'],
            [21, 'Dark Solid', 'solid'],
          ],
        );
        assert.deepEqual(
          p.editable.media.map((m: any) => [m.composition, m.layer_index, m.source_id]),
          [['Main', 2, 20]],
        );
      }
    });

    it('reads expressions as AE 12 stores them (an expr chunk, NUL-terminated), in .aep and .aepx', async () => {
      const binary = ae12Project();
      const xml = aepxOf(binary);
      assert.match(xml, /<expr bdata="[0-9a-f]+00"\/>/);
      for (const [name, data] of [
        ['ae12.aep', binary],
        ['ae12.aepx', Buffer.from(xml)],
      ] as const) {
        const el = await uploadElement(name, data);
        const res = await inspect({ element_id: el.id });
        assert.equal(res.status, 200, `${name}: ${res.text}`);
        assert.equal(res.body.ae_version, '12.1x168', name);
        assert.deepEqual(
          res.body.compositions[0].layers.map((l: any) => [l.name, l.expressions]),
          [
            [
              'Bar',
              [
                { property: 'ADBE Transform Group>ADBE Position', expression: 'wiggle(2, 10) // “AE 12”' },
                { property: 'ADBE Transform Group>ADBE Opacity', expression: 'time * 10 // caf\u00e9' },
              ],
            ],
          ],
          name,
        );
      }
    });

    it('reads a file over the worker threshold (parsed off the event loop)', async () => {
      const big = sampleProject({ extra: [chunk('bulk', Buffer.alloc(1_500_001, 0x41))] });
      assert.ok(big.length > 1024 * 1024);
      const el = await uploadElement('big.aep', big);
      const res = await inspect({ element_id: el.id });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.compositions[0].layers[0].source_text, 'Hello (world)\r');
      // the same file cut short fails in the worker with the same 400
      const cut = await uploadElement('big-cut.aep', big.subarray(0, big.length - 1000));
      const bad = await inspect({ element_id: cut.id });
      assert.equal(bad.status, 400);
      assert.match(bad.body.error.message, /big-cut\.aep: truncated file/);
    });

    it('answers 400 naming what is wrong, for every kind of broken file', async () => {
      const good = sampleProject();
      const huge = Buffer.from(good);
      // the first chunk after the form type ("svap") now claims 4 GiB
      huge.writeUInt32BE(0xffffffff, 16);
      const noPad = (() => {
        // a chunk whose declared size runs past its LIST
        const b = Buffer.from(sampleProject());
        const at = b.indexOf('Layr') - 8;
        b.writeUInt32BE(b.readUInt32BE(at + 4) + 2, at + 4);
        return b;
      })();
      const cases: [string, Buffer, RegExp][] = [
        ['huge.aep', huge, /chunk "svap" at offset 12 declares 4294967295 bytes but only \d+ remain/],
        ['overrun.aep', noPad, /truncated chunk header at offset \d+: 2 bytes left in the enclosing chunk/],
        [
          'image.aep',
          Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'),
          /not an After Effects project: neither RIFX/,
        ],
        ['riff.aep', Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(12)]), /little-endian RIFF/],
        [
          'form.aep',
          Buffer.concat([Buffer.from('RIFX'), Buffer.from([0, 0, 0, 4]), Buffer.from('WAVE')]),
          /form type "WAVE"/,
        ],
        ['empty.aep', Buffer.alloc(0), /the file is empty/],
        [
          'noversion.aep',
          (() => {
            const b = Buffer.alloc(0);
            return Buffer.concat([b, require_rifx()]);
          })(),
          /no version chunk/,
        ],
        [
          'broken.aepx',
          Buffer.from('<?xml version="1.0"?><AfterEffectsProject><Fold></AfterEffectsProject>'),
          /not a readable \.aepx/,
        ],
        ['other.aepx', Buffer.from('<?xml version="1.0"?><svg></svg>'), /root element is <svg>/],
      ];
      for (const [name, data, message] of cases) {
        const el = await uploadElement(name, data);
        const res = await inspect({ element_id: el.id });
        assert.equal(res.status, 400, `${name}: ${res.text}`);
        assert.equal(res.body.error.code, 'invalid_project', name);
        assert.match(res.body.error.message, new RegExp(`^${name.replace('.', '\\.')}: `), name);
        assert.match(res.body.error.message, message, name);
      }
    });

    it('refuses files that are not projects and bad references', async () => {
      const png = await uploadElement('picture.png', Buffer.from('89504e47', 'hex'));
      const notProject = await inspect({ element_id: png.id });
      assert.equal(notProject.status, 400, notProject.text);
      assert.equal(notProject.body.error.code, 'not_a_project');
      const both = await inspect({ element_id: png.id, url: png.url });
      assert.equal(both.status, 400, both.text);
      const missing = await inspect({ element_id: 'el_nothere' });
      assert.equal(missing.status, 404);
      const escape = await inspect({ url: '/media/../../etc/passwd' });
      assert.equal(escape.status, 400, escape.text);
      const wrongType = await t.api('POST', '/api/motion/projects/inspect', {
        board_id: board,
        element_id: { id: 'x' },
      });
      assert.equal(wrongType.status, 400);
      assert.equal(wrongType.body.error.code, 'invalid_request');
    });
  });

  it('detect reports a missing aerender', async () => {
    const res = await t.api('GET', '/api/motion/detect');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { installed: false, binaryPath: '', version: '' });
  });
});

/**
 * A project as AE 12 writes one: property names (tdsn) hold their string itself, and an expression is an `expr`
 * chunk with the NUL-terminated text (UTF-8; one in windows-1252, as older strings are) after the value (cdat).
 */
function ae12Project(): Buffer {
  const leaf = (expr: Buffer) =>
    list(
      'tdbs',
      chunk('tdsb', Buffer.alloc(4)),
      chunk('tdsn', Buffer.alloc(2)),
      chunk('tdb4', Buffer.alloc(124)),
      chunk('cdat', Buffer.alloc(24)),
      chunk('expr', Buffer.concat([expr, Buffer.alloc(1)])),
    );
  const comp = list(
    'Item',
    idta(4, 1),
    utf8('main'),
    cdta({ width: 1280, height: 720, fps: 60, duration: 10 }),
    list(
      'Layr',
      ldta({ id: 20, type: 4 }),
      utf8('Bar'),
      tdgp([
        'ADBE Transform Group',
        tdgp(
          ['ADBE Position', leaf(Buffer.from('wiggle(2, 10) // “AE 12”'))],
          ['ADBE Opacity', leaf(Buffer.from('time * 10 // caf\xe9', 'latin1'))],
        ),
      ]),
    ),
  );
  return rifx(svap(12, 1, 168), list('Fold', comp));
}

/** The .aepx form of a RIFX project (chunks as elements with hex bdata, LISTs as elements, Utf8 as <string>). */
function aepxOf(aep: Buffer): string {
  const element = (buf: Buffer, at: number, end: number): string => {
    let out = '';
    while (at + 8 <= end) {
      const id = buf.toString('latin1', at, at + 4).trim();
      const size = buf.readUInt32BE(at + 4);
      const body = buf.subarray(at + 8, at + 8 + size);
      if (id === 'LIST') {
        const type = body.toString('latin1', 0, 4).trim();
        out += `<${type}>${element(buf, at + 12, at + 8 + size)}</${type}>`;
      } else if (id === 'Utf8') out += `<string>${body.toString('utf8')}</string>`;
      else out += `<${id} bdata="${body.toString('hex')}"/>`;
      at += 8 + size + (size % 2);
    }
    return out;
  };
  const body = element(aep, 12, aep.length);
  return `<?xml version="1.0" encoding="UTF-8"?>\n<AfterEffectsProject>${body}</AfterEffectsProject>`;
}

/** A RIFX project with a folder but no svap/head chunk. */
function require_rifx(): Buffer {
  const body = Buffer.concat([Buffer.from('Egg!'), list('Fold', utf8(''))]);
  const head = Buffer.alloc(8);
  head.write('RIFX');
  head.writeUInt32BE(body.length, 4);
  return Buffer.concat([head, body]);
}
