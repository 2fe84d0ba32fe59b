import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as acorn from 'acorn';
import { parseProject } from '../../src/motion/read.js';
import { esLiteral, generateScript, type ScriptData } from '../../src/motion/script.js';
import { buildModel, runScript, TextDocument } from './ae-model.js';
import { sampleProject } from './project-builder.js';

const HERE = fileURLToPath(import.meta.url);
const FIXTURES = path.resolve('../shared/fixtures/after-effects');
const NM05 = path.join(FIXTURES, 'aepxjs-nm05ae15_movedtime.aepx');

/** Strings a request could send to break out of a string literal or an ES3 parser. */
const HOSTILE = [
  '"); app.quit(); ("',
  "'\\\\'; x = 1; //",
  'line1\nline2\r\u2028\u2029end',
  '*/ }); /*',
  '</script>',
  'Grüße 東京 🎬',
  '\u0000nul',
  '${x}`',
];

function data(over: Partial<ScriptData> = {}): ScriptData {
  return {
    composition: 'Main',
    layerNames: ['Title', 'logo.png', 'Backdrop', 'Bar'],
    relink: [],
    text: [],
    media: [],
    expressions: [],
    add: [],
    ...over,
  };
}

describe('generated ExtendScript', () => {
  it('is ES3 (acorn ecmaVersion 3) and ASCII for any string a request can hold', () => {
    for (const s of HOSTILE) {
      const script = generateScript(
        data({
          composition: s,
          text: [{ layer: 1, text: s }],
          expressions: [{ layer: 4, property: [s, 'ADBE Position'], expression: s }],
          add: [{ type: 'text', name: s, text: s }],
        }),
      );
      assert.doesNotThrow(() => acorn.parse(script, { ecmaVersion: 3 }), `not ES3 with ${JSON.stringify(s)}`);
      assert.match(script, /^[\x09\x0a\x20-\x7e]*$/, 'the script is plain ASCII');
    }
    // the ES3 parser really refuses what ExtendScript cannot run
    assert.throws(() => acorn.parse('var f = () => 1;', { ecmaVersion: 3 }));
    assert.throws(() => acorn.parse('let x = `a`;', { ecmaVersion: 3 }));
    assert.equal(eval(esLiteral('\u2028\u00e9')), '\u2028\u00e9');
  });

  it('applies every edit to the right layer and property of the stand-in object model', () => {
    const model = buildModel(parseProject(sampleProject()));
    const hostile = HOSTILE[0] + HOSTILE[2];
    runScript(
      model,
      generateScript(
        data({
          text: [{ layer: 1, text: hostile }],
          media: [{ layer: 2, file: HERE }],
          expressions: [
            { layer: 4, property: ['ADBE Transform Group', 'ADBE Position'], expression: 'wiggle(5, 50)' },
            { layer: 3, property: ['Transform', 'Opacity'], expression: HOSTILE[1] },
          ],
          add: [
            { type: 'solid', name: 'Flash', color: [1, 0, 0.5], position: [10, 20] },
            { type: 'text', name: 'Caption', text: 'Hi', color: [0, 1, 0] },
            { type: 'media', name: 'Clip', file: HERE },
          ],
          width: 800,
          height: 450,
          fps: 24,
        }),
      ),
    );
    const main = model.comps[0];
    const outro = model.comps[1];
    // three layers added on top, in order: the last added is layer 1
    assert.deepEqual(
      main.layerList.map((l) => l.name),
      ['Clip', 'Caption', 'Flash', 'Title', 'logo.png', 'Backdrop', 'Bar'],
    );
    const title = main.layer('Title')!;
    const doc = title.property('ADBE Text Properties')!.property('ADBE Text Document')!.value as TextDocument;
    assert.equal(doc.text, hostile, 'the text reached the text layer verbatim');
    assert.equal(main.layer('logo.png')!.source!.name, path.basename(HERE));
    assert.equal((main.layer('logo.png')!.source as { file: string }).file, HERE);
    assert.equal(
      main.layer('Bar')!.property('ADBE Transform Group')!.property('ADBE Position')!.expression,
      'wiggle(5, 50)',
    );
    assert.equal(main.layer('Backdrop')!.property('Transform')!.property('Opacity')!.expression, HOSTILE[1]);
    assert.equal(
      main.layer('Bar')!.property('Transform')!.property('Opacity')!.expression,
      '',
      'other properties untouched',
    );
    // arrays made inside the script belong to the vm's realm: copy them before comparing
    assert.deepEqual(
      Array.from(main.layer('Flash')!.property('Transform')!.property('Position')!.value as number[]),
      [10, 20],
    );
    assert.deepEqual(
      Array.from(
        (main.layer('Caption')!.property('ADBE Text Properties')!.property('ADBE Text Document')!.value as TextDocument)
          .fillColor!,
      ),
      [0, 1, 0],
    );
    assert.deepEqual(
      Array.from((main.layer('Flash') as unknown as { solid: { color: number[] } }).solid.color),
      [1, 0, 0.5],
    );
    assert.equal(model.imported.length, 1, 'one file imported once for two uses');
    assert.deepEqual([main.width, main.height, main.frameRate], [800, 450, 24]);
    assert.deepEqual(
      [outro.width, outro.height, outro.frameRate],
      [640, 360, 30],
      'the other composition is untouched',
    );
    assert.ok(model.logged.some((m) => m.startsWith('MOTION: ')));
  });

  it('relinks footage items by id before the edits: every layer showing the item shows the new file', () => {
    const model = buildModel(parseProject(sampleProject()));
    runScript(model, generateScript(data({ relink: [{ id: 20, file: HERE }] })));
    const logo = model.comps[0].layer(2)!.source as { id: number; file: string; name: string };
    assert.deepEqual([logo.id, logo.file, logo.name], [20, HERE, path.basename(HERE)]);
    assert.equal(model.imported.length, 0, 'the item is kept, nothing imported');
    assert.ok(model.logged.includes('MOTION: footage 20 relinked'));
  });

  it('fails with a message naming what is missing', () => {
    const project = parseProject(sampleProject());
    const cases: [Partial<ScriptData>, RegExp][] = [
      [{ composition: 'Nope' }, /motion: no composition named "Nope"/],
      [{ layerNames: ['Title'] }, /has 4 layers, the inspected project had 1/],
      [{ layerNames: ['Other', 'logo.png', 'Backdrop', 'Bar'] }, /layer 1 is "Title", expected "Other"/],
      [{ layerNames: [null, null, 'Backdrop', 'Other'] }, /layer 4 is "Bar", expected "Other"/],
      [
        { expressions: [{ layer: 4, property: ['Transform', 'Wobble'], expression: '1' }] },
        /layer "Bar" has no property "Transform>Wobble"/,
      ],
      [{ expressions: [{ layer: 4, property: ['Transform'], expression: '1' }] }, /cannot take an expression/],
      [{ media: [{ layer: 2, file: '/nonexistent/file.png' }] }, /file \/nonexistent\/file.png is missing/],
      [{ relink: [{ id: 99, file: HERE }] }, /no footage item with id 99/],
      [{ relink: [{ id: 20, file: '/nonexistent/logo.png' }] }, /file \/nonexistent\/logo.png is missing/],
    ];
    for (const [over, message] of cases) {
      assert.throws(
        () => runScript(buildModel(project), generateScript(data(over))),
        (err: Error) => message.test(err.message),
        String(message),
      );
    }
  });

  it(
    'disables an expression on Source Text so the text edit shows, and edits every keyframe',
    { skip: fs.existsSync(NM05) ? false : `${NM05} is absent` },
    () => {
      const project = parseProject(fs.readFileSync(NM05));
      const comp = project.compositions[0];
      const model = buildModel(project);
      const sourceText = model.comps[0].layer(4)!.property('Text')!.property('Source Text')!;
      sourceText.keys.push(new TextDocument('a'), new TextDocument('b'));
      runScript(
        model,
        generateScript({
          composition: 'main',
          layerNames: comp.layers.map((l) => l.name),
          relink: [],
          text: [{ layer: 4, text: 'New title' }],
          media: [],
          expressions: [
            {
              layer: 10,
              property: ['ADBE Effect Parade', 'ADBE Change To Color', 'ADBE Change To Color-0002'],
              expression: '[1,0,0,1]',
            },
          ],
          add: [],
        }),
      );
      assert.equal(sourceText.expressionEnabled, false);
      assert.deepEqual(
        sourceText.keys.map((k) => (k as TextDocument).text),
        ['New title', 'New title'],
      );
      assert.equal(
        model.comps[0]
          .layer(10)!
          .property('Effects')!
          .property('ADBE Change To Color')!
          .property('ADBE Change To Color-0002')!.expression,
        '[1,0,0,1]',
      );
      assert.equal(
        model.comps[0].layer(5)!.property('Text')!.property('Source Text')!.expressionEnabled,
        true,
        'other layers untouched',
      );
    },
  );
});
