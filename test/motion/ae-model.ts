import fs from 'node:fs';
import vm from 'node:vm';
import type { InspectedProject } from '../../src/motion/schemas.js';

/**
 * A small stand-in of After Effects' scripting object model (app.project, CompItem, layers, properties,
 * TextDocument, File, ImportOptions), built from an inspected project. It implements only what the generated
 * script may call, with AE's semantics (1-based collections, property() by display or match name, new layers on
 * top), so running the script here shows which layer and property each edit reached.
 */

export class TextDocument {
  fillColor?: number[];
  constructor(public text: string) {}
}

export class Property {
  expression = '';
  expressionEnabled = true;
  canSetExpression = true;
  value: unknown;
  keys: unknown[] = [];
  readonly children: Property[] = [];
  constructor(
    readonly name: string,
    readonly matchName: string,
    value?: unknown,
  ) {
    this.value = value;
    // groups (no value) cannot take expressions, leaf properties can
    this.canSetExpression = value !== undefined;
  }
  get numKeys(): number {
    return this.keys.length;
  }
  property(n: string | number): Property | null {
    if (typeof n === 'number') return this.children[n - 1] ?? null;
    return this.children.find((c) => c.name === n || c.matchName === n) ?? null;
  }
  setValue(v: unknown): void {
    this.value = v instanceof TextDocument ? new TextDocument(v.text) : v;
    if (v instanceof TextDocument && v.fillColor) (this.value as TextDocument).fillColor = v.fillColor;
  }
  keyValue(k: number): unknown {
    const v = this.keys[k - 1];
    return v instanceof TextDocument ? new TextDocument(v.text) : v;
  }
  setValueAtKey(k: number, v: unknown): void {
    this.keys[k - 1] = v;
  }
  /** Finds or creates a nested property by match names (used to build the tree from inspected expressions). */
  ensure(path: string[]): Property {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the walk down the tree starts at this node
    let p: Property = this;
    for (const mn of path) {
      let next: Property | null = p.children.find((c) => c.matchName === mn) ?? null;
      if (!next) {
        next = new Property(mn, mn, 0);
        p.children.push(next);
      }
      p = next;
    }
    return p;
  }
}

export class FootageItem {
  constructor(
    public name: string,
    public file: string | null,
    readonly id = 0,
  ) {}
  /** FootageItem.replace(file): the item now shows another file; an item without a name of its own takes the file's. */
  replace(file: AeFile): void {
    if (!file.exists) throw new Error(`File not found: ${file.fsName}`);
    this.file = file.fsName;
    this.name = file.fsName.split(/[\\/]/).pop()!;
  }
}

export class Layer extends Property {
  source: FootageItem | CompItem | null;
  constructor(
    public override name: string,
    readonly kind: string,
    source: FootageItem | CompItem | null,
  ) {
    super(name, kind === 'text' ? 'ADBE Text Layer' : 'ADBE AV Layer');
    this.source = source;
    const transform = new Property('Transform', 'ADBE Transform Group');
    for (const [n, mn, v] of [
      ['Anchor Point', 'ADBE Anchor Point', [0, 0]],
      ['Position', 'ADBE Position', [0, 0]],
      ['Scale', 'ADBE Scale', [100, 100]],
      ['Rotation', 'ADBE Rotate Z', 0],
      ['Opacity', 'ADBE Opacity', 100],
    ] as const) {
      transform.children.push(new Property(n, mn, v));
    }
    this.children.push(transform);
    this.children.push(new Property('Effects', 'ADBE Effect Parade'));
  }
  replaceSource(item: FootageItem | CompItem, _fixExpressions: boolean): void {
    this.source = item;
  }
}

export class CompItem {
  pixelAspect = 1;
  readonly layerList: Layer[] = [];
  readonly layers: LayerCollection;
  constructor(
    public name: string,
    public width: number,
    public height: number,
    public frameRate: number,
    public duration: number,
  ) {
    this.layers = new LayerCollection(this);
  }
  get numLayers(): number {
    return this.layerList.length;
  }
  layer(i: number | string): Layer | null {
    return (typeof i === 'number' ? this.layerList[i - 1] : this.layerList.find((l) => l.name === i)) ?? null;
  }
}

export class LayerCollection {
  constructor(private readonly comp: CompItem) {}
  private top(layer: Layer): Layer {
    this.comp.layerList.unshift(layer);
    return layer;
  }
  addText(text: string): Layer {
    const l = new Layer(text, 'text', null);
    const t = new Property('Text', 'ADBE Text Properties');
    t.children.push(new Property('Source Text', 'ADBE Text Document', new TextDocument(text)));
    l.children.push(t);
    return this.top(l);
  }
  addSolid(color: number[], name: string, w: number, h: number, _pa: number, _dur: number): Layer {
    const l = new Layer(name, 'solid', new FootageItem(name, null));
    (l as Layer & { solid: unknown }).solid = { color, w, h };
    return this.top(l);
  }
  add(item: FootageItem): Layer {
    return this.top(new Layer(item.name, 'footage', item));
  }
}

export class AeFile {
  constructor(readonly fsName: string) {}
  get exists(): boolean {
    return fs.existsSync(this.fsName);
  }
}

export class ImportOptions {
  constructor(readonly file: AeFile) {}
}

export interface AeModel {
  comps: CompItem[];
  /** The project's own footage items. */
  footage: FootageItem[];
  imported: FootageItem[];
  logged: string[];
  context: vm.Context;
}

/** Builds the stand-in from an inspected project: its compositions, layers (names, sources, text) and properties. */
export function buildModel(project: InspectedProject): AeModel {
  const imported: FootageItem[] = [];
  const logged: string[] = [];
  const footage = new Map(project.footage.map((f) => [f.id, new FootageItem(f.name, f.path ?? null, f.id)]));
  const comps = project.compositions.map((c) => new CompItem(c.name, c.width, c.height, c.frame_rate, c.duration));
  project.compositions.forEach((c, ci) => {
    for (const l of c.layers) {
      const src = l.source
        ? l.source.kind === 'composition'
          ? comps[project.compositions.findIndex((x) => x.id === l.source!.id)]
          : footage.get(l.source.id)
        : null;
      const layer = new Layer(l.name, l.type, src ?? null);
      if (l.type === 'text') {
        const t = new Property('Text', 'ADBE Text Properties');
        t.children.push(new Property('Source Text', 'ADBE Text Document', new TextDocument(l.source_text ?? '')));
        layer.children.push(t);
      }
      for (const e of l.expressions) layer.ensure(e.property.split('>')).expression = e.expression;
      comps[ci].layerList.push(layer);
    }
  });
  const items: unknown[] = [...comps, ...footage.values()];
  const app = {
    project: {
      get numItems() {
        return items.length;
      },
      item: (i: number) => items[i - 1] ?? null,
      importFile: (io: ImportOptions) => {
        const f = new FootageItem(io.file.fsName.split(/[\\/]/).pop()!, io.file.fsName);
        items.push(f);
        imported.push(f);
        return f;
      },
    },
  };
  const context = vm.createContext({
    app,
    CompItem,
    FootageItem,
    File: AeFile,
    ImportOptions,
    $: { writeln: (m: string) => logged.push(m) },
    gAECommandLineRenderer: { log_file: { writeln: (m: string) => logged.push(m) } },
  });
  return { comps, footage: [...footage.values()], imported, logged, context };
}

/** Runs a generated script in the stand-in (throws what the script throws). */
export function runScript(model: AeModel, script: string): void {
  vm.runInContext(script, model.context, { timeout: 2000 });
}
