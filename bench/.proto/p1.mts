import puppeteer from 'puppeteer-core';
const chromium = (await import('@sparticuz/chromium')).default;
const bad = new Set(['--disable-web-security','--allow-running-insecure-content','--single-process','--no-zygote',"--headless='shell'"]);
const args = chromium.args.filter(a => !bad.has(a));
const mode = process.argv[2] ?? 'bf';
const extra = mode === 'bf' ? ['--enable-begin-frame-control','--run-all-compositor-stages-before-draw','--disable-new-content-rendering-timeout','--disable-threaded-animation','--disable-threaded-scrolling','--disable-checker-imaging'] : [];
let t0 = Date.now();
const browser = await puppeteer.launch({ executablePath: '/tmp/chromium', headless: 'shell', args: [...args, ...extra, '--proxy-server=http://127.0.0.1:9', '--proxy-bypass-list=<-loopback>'], });
console.log('launch', Date.now()-t0, await browser.version());
const ctx = await browser.createBrowserContext({ downloadBehavior: { policy: 'deny' } });
const cdp = await browser.target().createCDPSession();
t0 = Date.now();
let page;
if (mode === 'bf') {
  const [target] = await Promise.all([ctx.waitForTarget(t => t.type() === 'page'), cdp.send('Target.createTarget', { url: 'about:blank', browserContextId: ctx.id, enableBeginFrameControl: true })]);
  page = await target.page();
} else page = await ctx.newPage();
if (process.argv[3]) { page = await ctx.newPage(); }
console.log('page', Date.now()-t0);
await page.setViewport({ width: 640, height: 360 });
const client = await page.createCDPSession();
await page.setRequestInterception(true);
page.on('request', r => { if (r.url().startsWith('http://card.localhost/')) r.respond({ status: 200, contentType: 'text/html', body: `<html><body style="margin:0"><div id=b style="width:100px;height:100px;background:red;animation:a 1s linear infinite"></div><style>@keyframes a{from{background:red}to{background:blue}}</style><script>fetch('http://example.com').then(()=>document.title='net', e=>document.title='blocked:'+e)</script></body></html>` }); else { console.log('abort', r.url()); r.abort(); } });
t0 = Date.now();
await page.goto('http://card.localhost/', { waitUntil: 'load' });
console.log('goto', Date.now()-t0, await page.title());
const N = 30; t0 = Date.now(); let noData = 0;
for (let i = 0; i < N; i++) {
  if (mode === 'bf' && !process.argv[3]) {
    const r: any = await client.send('HeadlessExperimental.beginFrame', { screenshot: { format: 'png', optimizeForSpeed: true } } as any);
    if (!r.screenshotData) noData++;
  } else await page.screenshot({ optimizeForSpeed: true } as any);
}
console.log('fps', N / ((Date.now()-t0)/1000), 'noData', noData);
await browser.close();
