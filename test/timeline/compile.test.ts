import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { compileTimeline, type ClipInput, type OutputSpec } from '../../src/timeline/compile.js';
import { curveExpr, valueAt, type Curve } from '../../src/timeline/curves.js';
import { parseOrigin, parseValue, timelineDuration } from '../../src/timeline/timeline.js';
import type { ProjectData } from '../../src/timeline/project.js';

/** Evaluates the subset of ffmpeg's expression language the curves use (numbers, + - * /, if, lt). */
function evalFfmpeg(expr: string, t: number): number {
  const js = expr.replace(/\bif\(/g, 'iff(');
  return new Function('t', 'iff', 'lt', `return ${js};`)(
    t,
    (c: number, a: number, b: number) => (c ? a : b),
    (a: number, b: number) => (a < b ? 1 : 0),
  );
}

const inputs: Record<string, ClipInput> = {
  a: { path: '/x/a.mp4', width: 320, height: 240, hasAudio: true, still: false },
  b: { path: '/x/b.mp4', width: 640, height: 360, hasAudio: true, still: false },
  c: { path: '/x/c.png', width: 100, height: 100, hasAudio: false, still: true },
};
const out: OutputSpec = {
  path: '/out/o.mp4',
  width: 1920,
  height: 1080,
  fps: 30,
  format: 'mp4',
  codec: 'h264',
  crf: 23,
};
const clips = [
  { id: 'a', url: '/media/b/a.mp4', duration: 5 },
  { id: 'b', url: '/media/b/b.mp4', duration: 5 },
  { id: 'c', url: '/media/b/c.png', duration: 5, mediaType: 'image' },
];

describe('timeline compiler', () => {
  it('curve expressions compute the same values as valueAt for every easing', () => {
    for (const easing of ['Linear', 'Smooth', 'EaseIn', 'EaseOut', 'Hold'] as const) {
      const curve: Curve = {
        base: 0,
        keys: [
          { t: 0.5, v: 10, easing },
          { t: 2.5, v: -30, easing: 'Linear' },
          { t: 3, v: 5, easing: 'Smooth' },
        ],
      };
      for (const t of [0, 0.5, 1, 1.5, 2.2, 2.5, 2.75, 3, 4]) {
        assert.ok(Math.abs(evalFfmpeg(curveExpr(curve, 't'), t) - valueAt(curve, t)) < 1e-6, `${easing} at ${t}`);
      }
    }
    const lin: Curve = {
      base: 0,
      keys: [
        { t: 0, v: 0, easing: 'Linear' },
        { t: 1, v: 1, easing: 'Linear' },
      ],
    };
    const smooth: Curve = {
      base: 0,
      keys: [
        { t: 0, v: 0, easing: 'Smooth' },
        { t: 1, v: 1, easing: 'Linear' },
      ],
    };
    assert.equal(valueAt(lin, 0.25), 0.25);
    assert.equal(valueAt(smooth, 0.25), 0.15625);
    assert.equal(valueAt(smooth, 0.5), 0.5);
  });

  it('parses keyframe values and origins strictly', () => {
    assert.equal(parseValue('1.5'), 1.5);
    assert.equal(parseValue('-0.25'), -0.25);
    assert.equal(parseValue(' 2 '), 2);
    assert.equal(parseValue('1e2'), 100);
    for (const bad of ['', ' ', '1px', '0x10', 'NaN', 'Infinity', '1,5', null, true, {}])
      assert.equal(parseValue(bad), undefined, String(bad));
    assert.deepEqual(parseOrigin('center'), { x: 0.5, y: 0.5 });
    assert.deepEqual(parseOrigin(undefined), { x: 0.5, y: 0.5 });
    assert.deepEqual(parseOrigin('top-left'), { x: 0, y: 0 });
    assert.deepEqual(parseOrigin('left top'), { x: 0, y: 0 });
    assert.deepEqual(parseOrigin('bottom right'), { x: 1, y: 1 });
    assert.deepEqual(parseOrigin('25% 75%'), { x: 0.25, y: 0.75 });
    assert.equal(parseOrigin('middle'), undefined);
    assert.equal(parseOrigin('25%'), undefined);
  });

  it('compiles one ffmpeg command: one seeked input per item, layers bottom to top, audio mixed', () => {
    const project: ProjectData = {
      clips,
      channels: [
        { id: 'top', items: [{ id: 't1', clipId: 'b', trimStart: 1, trimEnd: 3, start: 0.5 }] },
        { id: 'off', visible: false, items: [{ id: 'h', clipId: 'a', trimStart: 0, trimEnd: 4 }] },
        {
          id: 'bottom',
          items: [
            { id: 'b1', clipId: 'a', trimStart: 0, trimEnd: 2 },
            { id: 'b2', clipId: 'c', trimStart: 0, trimEnd: 1.5 },
          ],
        },
      ],
    };
    assert.equal(timelineDuration(project), 3.5);
    const { args, duration, graph } = compileTimeline(project, inputs, out);
    assert.equal(duration, 3.5);
    assert.equal(args.filter((a) => a === '-filter_complex').length, 1);
    assert.deepEqual(
      args.filter((_, i) => args[i - 1] === '-i'),
      ['/x/a.mp4', '/x/c.png', '/x/b.mp4'],
      'bottom channel first, hidden channel left out',
    );
    assert.equal(args[args.indexOf('/x/b.mp4') - 5], '-ss', 'the top item is input-seeked to its in point');
    assert.equal(args[args.indexOf('/x/b.mp4') - 4], '1');
    assert.ok(args.includes('-loop'), 'the still image is looped');
    // The image item follows the first bottom item end to end: it starts at 2 s.
    assert.match(graph, /\[1:v\][^;]*setpts=PTS\+2\/TB\[v1\]/);
    // Overlays chain base -> bottom items -> top item.
    const overlays = [...graph.matchAll(/\[(\w+)\]\[(v\d)\]overlay/g)].map((m) => `${m[1]}<${m[2]}`);
    assert.deepEqual(overlays, ['base0<v0', 'o0<v1', 'o1<v2']);
    assert.match(graph, /adelay=500\|500/);
    assert.match(graph, /amix=inputs=2/);
    assert.deepEqual(args.slice(-5), ['-movflags', '+faststart', '-f', 'mp4', '/out/o.mp4']);
    assert.ok(args.includes('libx264'));
  });

  it('uses per-frame expressions for keyframes and tmix for motion blur', () => {
    const project: ProjectData = {
      motionBlurEnabled: true,
      motionBlurShutter: 180,
      clips,
      channels: [
        {
          id: 'c',
          items: [
            {
              id: 'k',
              clipId: 'a',
              trimStart: 0,
              trimEnd: 2,
              propertyKeyframes: {
                zoom: [
                  { position: 0, value: '1', easing: 'Smooth' },
                  { position: 2, value: '2', easing: 'Linear' },
                ],
                opacity: [
                  { position: 0, value: '0', easing: 'Linear' },
                  { position: 1, value: '100', easing: 'Linear' },
                ],
              },
            },
          ],
        },
      ],
    };
    const { graph } = compileTimeline(project, inputs, { ...out, codec: 'vp9', format: 'webm' });
    // 30 fps: 8 sub-frames per frame rendered at 240 fps, a 180 degree shutter averages 4 of them.
    assert.match(graph, /fps=240/);
    assert.match(graph, /tmix=frames=4/);
    assert.match(graph, /fps=30,format=yuva420p\[vout\]/);
    assert.match(graph, /perspective=.*eval=frame/);
    assert.match(graph, /format=gray,geq=.*alphamerge/s);
    assert.match(graph, /color=c=black@0\.0/, 'vp9 keeps gaps transparent');
  });

  it('zooms a frame-filling layer with zoompan and anything else with perspective', () => {
    const zoom = (clipId: string, from: string, to: string): ProjectData => ({
      clips,
      channels: [
        {
          id: 'c',
          items: [
            {
              id: 'z',
              clipId,
              trimStart: 0,
              trimEnd: 2,
              propertyKeyframes: {
                zoom: [
                  { position: 0, value: from },
                  { position: 2, value: to },
                ],
              },
            },
          ],
        },
      ],
    });
    assert.match(compileTimeline(zoom('b', '1', '1.5'), inputs, out).graph, /zoompan=z=.*:d=1:s=1920x1080:fps=30/);
    assert.doesNotMatch(compileTimeline(zoom('b', '1', '1.5'), inputs, out).graph, /perspective/);
    assert.match(
      compileTimeline(zoom('b', '0.5', '1.5'), inputs, out).graph,
      /perspective/,
      'zooming out below fit shows past the edges',
    );
    assert.match(
      compileTimeline(zoom('a', '1', '1.5'), inputs, out).graph,
      /perspective/,
      'a 4:3 clip does not fill a 16:9 frame',
    );
  });

  it('names the item when a clip is unknown or has no media', () => {
    const unknown: ProjectData = {
      clips,
      channels: [{ id: 'c', name: 'Main', items: [{ id: 'x1', clipId: 'zzz', trimStart: 0, trimEnd: 1 }] }],
    };
    assert.throws(
      () => compileTimeline(unknown, inputs, out),
      /item "x1" of channel "Main" \(channels\[0\]\.items\[0\]\) refers to unknown clip "zzz"/,
    );
    const noInput: ProjectData = {
      clips: [...clips, { id: 'd', url: '/media/b/d.mp4', duration: 2 }],
      channels: [{ id: 'c', items: [{ id: 'x2', clipId: 'd', trimEnd: 1 }] }],
    };
    assert.throws(() => compileTimeline(noInput, inputs, out), /item "x2".*no media for clip "d"/);
    const inverted: ProjectData = {
      clips,
      channels: [{ id: 'c', items: [{ id: 'x3', clipId: 'a', trimStart: 2, trimEnd: 1 }] }],
    };
    assert.throws(() => compileTimeline(inverted, inputs, out), /item "x3".*trimEnd not after trimStart/);
  });
});
