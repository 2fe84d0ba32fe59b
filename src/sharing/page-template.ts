import type { BoardJson } from './schemas.js';

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** JSON inside a <script> element: `<` escaped, so no `</script>` or `<!--` in the data can end it. */
const scriptJson = (value: unknown) =>
  JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');

const STYLE = `
*{box-sizing:border-box}
html,body{margin:0;background:#f4f3ef;color:#1d1d1f;font:15px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
header{padding:16px 24px;font-weight:600;font-size:18px}
#board{position:relative;width:calc(100% - 32px);max-width:1600px;margin:0 auto 32px}
.item{position:absolute;margin:0;overflow:hidden;border-radius:6px;background:#e4e2dc;box-shadow:0 1px 3px rgba(0,0,0,.15)}
.item img,.item video{display:block;width:100%;height:100%;object-fit:cover;background:#000}
.item .text{padding:12px;white-space:pre-wrap;overflow:auto;height:100%;background:#fffbe6}
.item .file{display:flex;align-items:center;justify-content:center;height:100%;padding:8px;word-break:break-all}
.item audio{width:100%;margin-top:8px}
.open{position:absolute;inset:0;width:100%;height:100%;border:0;padding:0;background:transparent;cursor:zoom-in}
.open.corner{inset:auto 6px 6px auto;width:32px;height:32px;border-radius:16px;background:rgba(0,0,0,.55);color:#fff;font-size:16px}
.open:focus-visible{outline:3px solid #2f6df6;outline-offset:-3px}
#lb{position:fixed;inset:0;background:rgba(10,10,12,.94);display:flex;align-items:center;justify-content:center;z-index:10}
#lb[hidden]{display:none}
#lb .stage{max-width:92vw;max-height:88vh;display:flex;align-items:center;justify-content:center}
#lb img,#lb video{max-width:92vw;max-height:88vh;width:auto;height:auto;display:block}
#lb iframe{border:0;background:#fff;max-width:92vw;max-height:88vh}
#lb .text{background:#fffbe6;padding:24px;max-width:70ch;white-space:pre-wrap}
#lb button{position:absolute;background:rgba(255,255,255,.12);color:#fff;border:0;border-radius:20px;width:40px;height:40px;font-size:20px;cursor:pointer}
#lb .close{top:12px;right:12px}#lb .prev{left:12px;top:calc(50% - 20px)}#lb .next{right:12px;top:calc(50% - 20px)}
#lb .caption{position:absolute;bottom:10px;left:0;right:0;text-align:center;color:#ddd}
@media (max-width:700px){#board{aspect-ratio:auto!important;height:auto!important}.item{position:relative;left:auto!important;top:auto!important;width:100%!important;height:auto!important;margin-bottom:12px}.item img,.item video{height:auto}}
`;

/**
 * The page script: lays out the elements at their board positions (scaled to the window; one column on narrow
 * screens) and runs the lightbox. The data comes from the inline <script id="board-data"> when present (archives,
 * file://), else from board.json next to the page (live shares, so a changed element re-uploads board.json only).
 */
const SCRIPT = `
(function(){
"use strict";
var inline=document.getElementById("board-data");
(inline?Promise.resolve(JSON.parse(inline.textContent)):fetch("board.json",{cache:"no-cache"}).then(function(r){if(!r.ok)throw new Error(r.status);return r.json();}))
.then(render,function(e){document.getElementById("board").textContent="This board could not be loaded ("+e.message+").";});
function el(tag,attrs,kids){var n=document.createElement(tag);for(var k in attrs){if(attrs[k]!=null)n.setAttribute(k,attrs[k]);}(kids||[]).forEach(function(c){n.append(c);});return n;}
function size(e){
  var m=e.video||e.media;var w=e.width||(m&&m.width)||320;var h=e.height||(m&&m.width?w*m.height/m.width:(e.type==="audio"?90:240));
  return {w:w,h:h};
}
function srcset(e){return (e.thumbs||[]).map(function(t){return t.path+" "+t.width+"w";}).concat(e.media?[e.file.path+" "+e.media.width+"w"]:[]).join(", ");}
function smallest(e,min){var t=(e.thumbs||[]).filter(function(t){return t.width>=min;})[0];return t?t.path:e.file.path;}
var items=[];
function render(data){
  var root=document.getElementById("board");
  var els=data.elements;if(!els.length){root.textContent="This board is empty.";return;}
  var sizes=els.map(size);
  var minX=Infinity,minY=Infinity,maxX=-Infinity,maxY=-Infinity;
  els.forEach(function(e,i){minX=Math.min(minX,e.x);minY=Math.min(minY,e.y);maxX=Math.max(maxX,e.x+sizes[i].w);maxY=Math.max(maxY,e.y+sizes[i].h);});
  var W=maxX-minX||1,H=maxY-minY||1;
  root.style.aspectRatio=W+" / "+H;
  els.forEach(function(e,i){
    var s=sizes[i],pct=function(v,of){return (100*v/of).toFixed(4)+"%";};
    var fig=el("figure",{"class":"item","data-type":e.type,"data-id":e.id});
    fig.style.left=pct(e.x-minX,W);fig.style.top=pct(e.y-minY,H);fig.style.width=pct(s.w,W);fig.style.height=pct(s.h,H);
    var label=e.name||e.type;var corner=false;
    if(e.type==="image"&&e.file){
      var vw=Math.max(10,Math.round(100*s.w/W));
      fig.append(el("img",{src:e.media?smallest(e,640):e.file.path,srcset:e.media?srcset(e):null,sizes:"(max-width:700px) 100vw, "+vw+"vw",loading:"lazy",decoding:"async",width:e.media?e.media.width:null,height:e.media?e.media.height:null,alt:label}));
    }else if(e.type==="video"&&e.file){
      fig.append(el("video",{src:e.file.path,poster:e.poster||null,preload:"metadata",playsinline:"",controls:"",width:e.media?e.media.width:null,height:e.media?e.media.height:null}));corner=true;
    }else if(e.type==="html"&&e.video){
      fig.append(el("video",{src:e.video.path,poster:e.poster||null,preload:"metadata",playsinline:"",muted:"",loop:"",autoplay:"",width:e.video.width,height:e.video.height}));
      fig.querySelector("video").muted=true;
    }else if(e.type==="audio"&&e.file){
      fig.append(el("div",{"class":"file"},[label]));fig.append(el("audio",{src:e.file.path,controls:"",preload:"none"}));corner=true;
    }else if(e.type==="text"){
      fig.append(el("div",{"class":"text"},[String(e.data.text||e.data.content||e.name||"")]));
    }else{
      fig.append(el("div",{"class":"file"},[e.file?el("a",{href:e.file.path,download:e.file.name},[e.file.name]):label]));corner=true;
    }
    var b=el("button",{"class":corner?"open corner":"open","aria-label":"Open "+label,type:"button"},[corner?"\\u2922":""]);
    b.addEventListener("click",function(){open(i);});
    fig.append(b);root.append(fig);items.push(e);
  });
}
var lb=document.getElementById("lb"),stage=lb.querySelector(".stage"),caption=lb.querySelector(".caption"),current=-1,opener=null;
function show(i){
  var e=items[i];current=i;stage.replaceChildren();
  if(e.type==="image"&&e.file)stage.append(el("img",{src:e.file.path,srcset:e.media?srcset(e):null,sizes:"92vw",alt:e.name||""}));
  else if(e.type==="video"&&e.file)stage.append(el("video",{src:e.file.path,poster:e.poster||null,controls:"",autoplay:"",playsinline:""}));
  else if(e.type==="html"&&e.html)stage.append(el("iframe",{src:e.html.path,sandbox:"allow-scripts",width:e.video?e.video.width:800,height:e.video?e.video.height:600,title:e.name||"card"}));
  else if(e.type==="audio"&&e.file)stage.append(el("audio",{src:e.file.path,controls:"",autoplay:""}));
  else if(e.file)stage.append(el("a",{href:e.file.path,download:e.file.name,"class":"text"},[e.file.name]));
  else stage.append(el("div",{"class":"text"},[String(e.data.text||e.data.content||e.name||"")]));
  caption.textContent=(e.name||"")+"  "+(i+1)+" / "+items.length;
}
function open(i){opener=document.activeElement;lb.hidden=false;show(i);lb.querySelector(".close").focus();}
function close(){lb.hidden=true;stage.replaceChildren();current=-1;if(opener)opener.focus();}
function step(d){show((current+d+items.length)%items.length);}
lb.querySelector(".close").addEventListener("click",close);
lb.querySelector(".prev").addEventListener("click",function(){step(-1);});
lb.querySelector(".next").addEventListener("click",function(){step(1);});
lb.addEventListener("click",function(ev){if(ev.target===lb)close();});
document.addEventListener("keydown",function(ev){
  if(lb.hidden)return;
  if(ev.key==="Escape"){ev.preventDefault();close();}
  else if(ev.key==="ArrowRight"){ev.preventDefault();step(1);}
  else if(ev.key==="ArrowLeft"){ev.preventDefault();step(-1);}
});
})();
`;

/** index.html of a shared board. Without inline data it depends only on the board's name and cover. */
export function indexHtml(board: BoardJson, opts: { publicUrl?: string; inlineData: boolean }): string {
  const title = escapeHtml(board.board.name || 'Shared board');
  const cover = board.cover
    ? escapeHtml(opts.publicUrl ? new URL(board.cover, opts.publicUrl).href : board.cover)
    : undefined;
  const meta = [
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="robots" content="noindex, nofollow">',
    `<title>${title}</title>`,
    `<meta property="og:title" content="${title}">`,
    '<meta property="og:type" content="website">',
    '<meta property="og:description" content="A shared board">',
    opts.publicUrl ? `<meta property="og:url" content="${escapeHtml(opts.publicUrl)}">` : '',
    cover ? `<meta property="og:image" content="${cover}">` : '',
    `<meta name="twitter:card" content="${cover ? 'summary_large_image' : 'summary'}">`,
    `<meta name="twitter:title" content="${title}">`,
    cover ? `<meta name="twitter:image" content="${cover}">` : '',
  ].filter(Boolean);
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    ...meta,
    `<style>${STYLE}</style>`,
    '</head>',
    '<body>',
    `<header>${title}</header>`,
    '<main id="board"></main>',
    '<div id="lb" role="dialog" aria-modal="true" aria-label="Viewer" hidden><div class="stage"></div><div class="caption"></div>' +
      '<button class="prev" type="button" aria-label="Previous">&#8249;</button><button class="next" type="button" aria-label="Next">&#8250;</button>' +
      '<button class="close" type="button" aria-label="Close">&#215;</button></div>',
    opts.inlineData ? `<script type="application/json" id="board-data">${scriptJson(board)}</script>` : '',
    `<script>${SCRIPT}</script>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
