import type { RenderPlan } from './plan.js';

/**
 * Writes the one ExtendScript that aerender runs (`-r`) after opening the project copy and before rendering.
 * ExtendScript is ECMAScript 3: no let/const, arrow functions, template strings or JSON object. Every value from a
 * request travels inside one data literal written by `esLiteral` (JSON syntax is a valid ES3 literal once the
 * characters ES3 treats as line ends are escaped); the code around it is fixed text.
 */

/** A JSON value as an ES3 literal: all non-ASCII escaped (U+2028/2029 end a string literal in ES3; the file stays ASCII). */
export function esLiteral(value: unknown): string {
  return JSON.stringify(value).replace(
    /[\u007f-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** What the script needs, with media paths pointing at the copies in the job folder. */
export interface ScriptData {
  composition: string;
  layerNames: (string | null)[];
  /** Footage items (by item id) to point at another file before anything else: the job's copy of their file. */
  relink: { id: number; file: string }[];
  text: RenderPlan['text'];
  media: { layer: number; file: string }[];
  expressions: RenderPlan['expressions'];
  add: (Omit<RenderPlan['add'][number], 'url'> & { file?: string })[];
  width?: number;
  height?: number;
  fps?: number;
}

const BODY = `
  function fail(message) { throw new Error("motion: " + message); }
  function log(message) {
    try { gAECommandLineRenderer.log_file.writeln("MOTION: " + message); } catch (e) { $.writeln("MOTION: " + message); }
  }
  var comp = null;
  var footageById = {};
  for (var i = 1; i <= app.project.numItems; i++) {
    var item = app.project.item(i);
    if (item instanceof CompItem && item.name === D.composition && comp === null) comp = item;
    if (item instanceof FootageItem) footageById["f" + item.id] = item;
  }
  if (comp === null) fail("no composition named \\"" + D.composition + "\\"");
  if (comp.numLayers !== D.layerNames.length) fail("composition \\"" + D.composition + "\\" has " + comp.numLayers + " layers, the inspected project had " + D.layerNames.length);
  // Layers are resolved by index before any layer is added (new layers go on top and shift the indices); their own
  // names are checked, so a project changed since it was inspected fails instead of editing another layer.
  var layers = [];
  for (var j = 1; j <= comp.numLayers; j++) {
    layers[j] = comp.layer(j);
    if (D.layerNames[j - 1] !== null && layers[j].name !== D.layerNames[j - 1]) fail("layer " + j + " is \\"" + layers[j].name + "\\", expected \\"" + D.layerNames[j - 1] + "\\"");
  }
  // Footage the project stores by a path of the service's machine, copied into the job folder (a render worker):
  // FootageItem.replace keeps the item, so every layer showing it shows the copy.
  for (var r = 0; r < D.relink.length; r++) {
    var old = footageById["f" + D.relink[r].id];
    if (!old) fail("no footage item with id " + D.relink[r].id);
    var rf = new File(D.relink[r].file);
    if (!rf.exists) fail("file " + D.relink[r].file + " is missing");
    old.replace(rf);
    log("footage " + D.relink[r].id + " relinked");
  }
  var imported = {};
  function importFile(path) {
    if (imported.hasOwnProperty(path)) return imported[path];
    var f = new File(path);
    if (!f.exists) fail("file " + path + " is missing");
    var footage = app.project.importFile(new ImportOptions(f));
    imported[path] = footage;
    return footage;
  }
  function findProperty(layer, names) {
    var p = layer;
    for (var k = 0; k < names.length; k++) {
      var next = p.property(names[k]);
      // "Position" alone: transform properties are named from the layer, as in the expression language.
      if ((next === null || next === undefined) && k === 0) next = layer.property("ADBE Transform Group").property(names[0]);
      if (next === null || next === undefined) fail("layer \\"" + layer.name + "\\" has no property \\"" + names.slice(0, k + 1).join(">") + "\\"");
      p = next;
    }
    return p;
  }
  function setText(prop, text, color) {
    if (prop.numKeys > 0) {
      for (var k = 1; k <= prop.numKeys; k++) {
        var kd = prop.keyValue(k);
        kd.text = text;
        prop.setValueAtKey(k, kd);
      }
    } else {
      var doc = prop.value;
      doc.text = text;
      if (color) doc.fillColor = color;
      prop.setValue(doc);
    }
  }
  var n;
  for (n = 0; n < D.text.length; n++) {
    var tl = layers[D.text[n].layer];
    var sourceText = tl.property("ADBE Text Properties").property("ADBE Text Document");
    // An expression on Source Text would hide the new text: the explicit edit wins.
    if (sourceText.expression !== "") sourceText.expressionEnabled = false;
    setText(sourceText, D.text[n].text, null);
    log("text of layer " + D.text[n].layer + " set");
  }
  for (n = 0; n < D.media.length; n++) {
    // true: expressions that named the old source follow the new one
    layers[D.media[n].layer].replaceSource(importFile(D.media[n].file), true);
    log("source of layer " + D.media[n].layer + " replaced");
  }
  for (n = 0; n < D.expressions.length; n++) {
    var e = D.expressions[n];
    var ep = findProperty(layers[e.layer], e.property);
    if (!ep.canSetExpression) fail("property \\"" + e.property.join(">") + "\\" of layer " + e.layer + " cannot take an expression");
    ep.expression = e.expression;
    log("expression on layer " + e.layer + " set");
  }
  for (n = 0; n < D.add.length; n++) {
    var a = D.add[n];
    var added;
    if (a.type === "text") {
      added = comp.layers.addText(a.text);
      if (a.color) setText(added.property("ADBE Text Properties").property("ADBE Text Document"), a.text, a.color);
    } else if (a.type === "solid") {
      added = comp.layers.addSolid(a.color || [0, 0, 0], a.name, comp.width, comp.height, comp.pixelAspect, comp.duration);
    } else {
      added = comp.layers.add(importFile(a.file));
    }
    added.name = a.name;
    if (a.position) added.property("ADBE Transform Group").property("ADBE Position").setValue(a.position);
    log("layer \\"" + a.name + "\\" added");
  }
  if (D.width !== null) comp.width = D.width;
  if (D.height !== null) comp.height = D.height;
  if (D.fps !== null) comp.frameRate = D.fps;
`;

/** The whole script: one data literal, then the fixed code, in a function so nothing leaks into AE's globals. */
export function generateScript(data: ScriptData): string {
  const literal = esLiteral({ ...data, width: data.width ?? null, height: data.height ?? null, fps: data.fps ?? null });
  return `// Generated by Board Media Service for one render. ExtendScript (ES3).\n(function () {\n  var D = ${literal};\n${BODY}})();\n`;
}
