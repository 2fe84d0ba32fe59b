import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { startService, type TestService } from '../helpers/service.js';

/**
 * Every real project of ../shared/fixtures/after-effects/corpus (AE 11 to 25.5, see its INDEX.md) inspects over HTTP,
 * and what inspect says agrees with what the corpus ships: the version each file's header names, ae-to-json's dump of
 * its test project and aex's expected values (both reported by After Effects' scripting API), the same AE 25.5
 * project saved as .aep and as .aepx, and each file's own "has an expression" flags.
 */
const CORPUS = path.resolve('../shared/fixtures/after-effects/corpus');
const haveCorpus = fs.existsSync(path.join(CORPUS, 'INDEX.md'));
if (!haveCorpus) console.log(`# motion corpus: ${CORPUS} is absent, the real After Effects corpus is skipped`);

interface Listed {
  file: string;
  version: string;
}

/** The project files INDEX.md lists, with the version its "saved by" names (decoded from each file's `head`). */
function listed(): Listed[] {
  const index = fs.readFileSync(path.join(CORPUS, 'INDEX.md'), 'utf8');
  return [...index.matchAll(/^\| `([^`]+\.aepx?)` \|.*\| (?:RIFX|XML); saved by AE (\d+)\.(\d+)\.\d+x(\d+) /gm)].map(
    (m) => ({ file: m[1], version: `${m[2]}.${m[3]}x${m[4]}` }),
  );
}

/**
 * AEP-Downgrader rewrote the `head` of these two so that older versions open them; `svap` still names the AE 24.5
 * that saved them (as does their XMP), and inspect reports `svap`.
 */
const DOWNGRADED: Record<string, string> = {
  'itsAnchorpoint__AEP-Downgrader/examples__dev_aeps__TEST22-x.aep': '24.5x52',
  'itsAnchorpoint__AEP-Downgrader/examples__dev_aeps__TEST23-x.aep': '24.5x52',
};

/**
 * How many leaf properties of a file say they have an expression (tdb4 byte 120 bit 0), read from the raw bytes
 * without the project reader: every such property's expression must be in the inspect answer.
 */
function flaggedExpressions(buf: Buffer, xml: boolean): number {
  let n = 0;
  if (xml) {
    for (const m of buf.toString('utf8').matchAll(/<tdb4 bdata="([0-9a-fA-F]{248})"/g))
      n += parseInt(m[1].slice(240, 242), 16) & 1;
    return n;
  }
  for (let at = buf.indexOf('tdb4'); at >= 0; at = buf.indexOf('tdb4', at + 4))
    if (buf.readUInt32BE(at + 4) === 124) n += buf[at + 8 + 120] & 1;
  return n;
}

const near = (got: number, want: number, tolerance: number) => Math.abs(got - want) <= tolerance;

/** The layer type inspect reports for what ae-to-json dumps (match name, null flag). */
function dumpedType(l: any): string[] {
  switch (l.matchName) {
    case 'ADBE Light Layer':
      return ['light'];
    case 'ADBE Camera Layer':
      return ['camera'];
    case 'ADBE Text Layer':
      return ['text'];
    case 'ADBE Vector Layer':
      return ['shape'];
    default:
      return l.nullLayer ? ['null'] : ['footage', 'solid', 'adjustment', 'precomp'];
  }
}

describe(
  'motion inspect of the real After Effects corpus',
  { skip: haveCorpus ? false : `${CORPUS} is absent` },
  () => {
    let t: TestService;
    let board: string;
    const answers = new Map<string, any>();

    before(async () => {
      t = await startService({ AERENDER_PATH: '/nonexistent/aerender' });
      board = await t.createBoard('Corpus');
    });
    after(() => t.close());

    async function inspect(file: string): Promise<any> {
      const cached = answers.get(file);
      if (cached) return cached;
      const up = await t.upload(
        board,
        { name: path.basename(file), data: await fsp.readFile(path.join(CORPUS, file)) },
        { addToBoard: true },
      );
      assert.equal(up.status, 200, up.text);
      const res = await t.api('POST', '/api/motion/projects/inspect', {
        board_id: board,
        element_id: up.body.element.id,
      });
      assert.equal(res.status, 200, `${file}: ${res.text}`);
      answers.set(file, res.body);
      return res.body;
    }

    it('lists every project file of the corpus in INDEX.md', () => {
      const files = fs
        .readdirSync(CORPUS, { recursive: true, encoding: 'utf8' })
        .filter((f) => /\.aepx?$/i.test(f))
        .sort();
      assert.deepEqual(
        listed()
          .map((l) => l.file)
          .sort(),
        files,
      );
      assert.ok(files.length >= 50, `${files.length} project files`);
    });

    it('inspects every file: the version that saved it, and every property flagged with an expression listed', async () => {
      for (const { file, version } of listed()) {
        const got = await inspect(file);
        assert.equal(got.ae_version, DOWNGRADED[file] ?? version, file);
        const buf = await fsp.readFile(path.join(CORPUS, file));
        assert.equal(got.editable.expressions.length, flaggedExpressions(buf, file.endsWith('.aepx')), file);
        for (const c of got.compositions) {
          assert.ok(c.width > 0 && c.height > 0 && c.frame_rate > 0 && c.duration > 0, `${file} ${c.name}`);
          c.layers.forEach((l: any, i: number) => assert.equal(l.index, i + 1, `${file} ${c.name}`));
        }
      }
    });

    it("agrees with ae-to-json's dump of its test project (AE 13.7)", async () => {
      const dump = JSON.parse(
        await fsp.readFile(path.join(CORPUS, 'seco__ae-to-json/example__example.json'), 'utf8'),
      ) as any;
      const got = await inspect('seco__ae-to-json/test__ae__testProject.aepx');
      assert.equal(got.ae_version, dump.version);
      // the dump names the project's folder from the home directory (~)
      const home = (p: string | undefined) => p?.replace(/^\/Users\/[^/]+/, '~');
      const comps = dump.project.items.filter((i: any) => i.typeName === 'Composition');
      assert.deepEqual(got.compositions.map((c: any) => c.id).sort(), comps.map((c: any) => c.id).sort());
      for (const want of comps) {
        const c = got.compositions.find((x: any) => x.id === want.id);
        const where = `composition ${want.name}`;
        assert.deepEqual([c.name, c.width, c.height], [want.name, want.width, want.height], where);
        // AE's frameRate is the 16.16 field (29.9700012207031); inspect gives the exact timebase ratio (29.97)
        assert.ok(near(c.frame_rate, want.frameRate, 2 ** -16), `${where}: ${c.frame_rate} fps`);
        assert.ok(near(c.duration, want.duration, 1e-9), `${where}: ${c.duration} s`);
        assert.deepEqual(
          c.background,
          want.bgColor.map((v: number) => Math.round(v * 255)),
          where,
        );
        const layers = [...(want.layers ?? [])].sort((a: any, b: any) => a.index - b.index);
        assert.equal(c.layers.length, layers.length, where);
        for (const wl of layers) {
          const l = c.layers[wl.index - 1];
          const lw = `${where} layer ${wl.index}`;
          assert.deepEqual([l.name, l.named], [wl.name, wl.isNameSet], lw);
          assert.ok(dumpedType(wl).includes(l.type), `${lw}: ${l.type} for ${wl.matchName}`);
          assert.ok(near(l.out_point, wl.outPoint, 1e-9), `${lw}: out ${l.out_point}`);
          assert.equal(l.parent_index, wl.parent ?? undefined, lw);
          if (typeof wl.source === 'string') assert.equal(home(l.source?.path), wl.source, lw);
        }
      }
      const footage = dump.project.items
        .flatMap((i: any) => (i.typeName === 'Folder' ? i.items : [i]))
        .filter(
          (i: any, n: number, all: any[]) => i.typeName === 'Footage' && all.findIndex((x) => x.id === i.id) === n,
        );
      assert.equal(got.footage.length, footage.length);
      for (const want of footage) {
        const f = got.footage.find((x: any) => x.id === want.id);
        assert.deepEqual([f?.name, f?.width, f?.height], [want.name, want.width, want.height], `footage ${want.id}`);
        assert.equal(home(f.path), want.mainSource.file, `footage ${want.name}`);
      }
    });

    it("agrees with aex's expected values (AE 17.7)", async () => {
      const cases: [string, string][] = [
        ['cep__test__assets__comp_basic.aep', 'cep__test__assets__comp_basic.comp.json'],
        ['cep__test__assets__comp_markers.aep', 'cep__test__assets__comp_markers.json'],
        ['cep__test__assets__layer_camera.aep', 'cep__test__assets__layer_camera.comp.json'],
      ];
      for (const [project, expected] of cases) {
        const want = JSON.parse(await fsp.readFile(path.join(CORPUS, 'KraftyFX__aex', expected), 'utf8')) as any;
        const got = await inspect(`KraftyFX__aex/${project}`);
        assert.equal(got.compositions.length, want.stats.compCount, project);
        assert.equal(
          got.compositions.reduce((n: number, c: any) => n + c.layers.length, 0),
          want.stats.layerCount,
          project,
        );
        for (const wc of want.object.comps ?? [want.object]) {
          // aexid is "<lower-case name>:<item id>"
          const id = Number(wc.aexid.split(':').pop());
          const c = got.compositions.find((x: any) => x.id === id);
          const where = `${project} ${wc.name}`;
          assert.deepEqual(
            [c?.name, c?.width, c?.height, c?.frame_rate, c?.duration],
            [wc.name, wc.width, wc.height, wc.frameRate, wc.duration],
            where,
          );
          assert.deepEqual(
            c.layers.map((l: any) => l.name),
            (wc.layers ?? []).map((l: any) => l.name),
            where,
          );
          (wc.layers ?? []).forEach((wl: any, i: number) => {
            if (wl.type === 'aex:layer:camera') assert.equal(c.layers[i].type, 'camera', `${where} ${wl.name}`);
          });
        }
      }
    });

    it('reads the solid of an AE 11 project (opti type 8 there, 9 later)', async () => {
      // lottie-web's old exporter imports this project and takes helperSolidComp's layer 1, made (its commented-out
      // code says) by addSolid(..., "helperSolid", 10, 10, 1)
      const got = await inspect('airbnb__lottie-web/build__old_parser__helperProject.aep');
      const comp = got.compositions.find((c: any) => c.name === 'helperSolidComp');
      assert.deepEqual(
        comp.layers.map((l: any) => [l.name, l.type, l.source.kind]),
        [['helperSolid', 'solid', 'solid']],
      );
      assert.deepEqual(got.footage, [{ id: 15, name: 'helperSolid', kind: 'solid', width: 10, height: 10 }]);
    });

    it('reads the same AE 25.5 project alike as .aep and as .aepx', async () => {
      const base = 'edforman-75__aftereffects-automation/sample_files__test-after-effects-project';
      const aep = await inspect(`${base}.aep`);
      const aepx = await inspect(`${base}.aepx`);
      // The two were saved from different folders: each names the footage where its own copy pointed.
      const paths = (p: any) => [
        ...p.footage.map((f: any) => f.path),
        ...p.compositions.flatMap((c: any) => c.layers.map((l: any) => l.source?.path)),
      ];
      const withoutFolders = (p: any) =>
        JSON.parse(JSON.stringify(p), (k, v) => (k === 'path' ? path.posix.basename(v) : v)) as unknown;
      assert.deepEqual(withoutFolders(aepx), withoutFolders(aep));
      for (const [p, file] of [
        [aep, `${base}.aep`],
        [aepx, `${base}.aepx`],
      ]) {
        const bytes = await fsp.readFile(path.join(CORPUS, file));
        for (const fp of paths(p).filter(Boolean)) assert.ok(bytes.includes(fp), `${file} names ${fp}`);
      }
      assert.ok(aep.compositions.length > 0 && aep.footage.length > 0);
      // footage cut from one layer of a Photoshop file is named "<PSD layer>/<file>", as AE's Project panel shows it
      assert.ok(aep.footage.some((f: any) => f.name === 'Background/test-photoshop-doc.psd'));
    });
  },
);
