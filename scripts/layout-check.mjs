// Opens HTML pages in headless Chromium at a phone's and a desktop's width and reports every
// element whose content is cut off: wider than its box in a box that hides the overflow, and any
// page wider than the window. Content that scrolls inside its own box is fine.
//   node scripts/layout-check.mjs [--widths 400,1400] FILE.html|DIR ...
// Needs Debian's chromium (/usr/bin/chromium, or CHROMIUM=path) and playwright-core
// (`npm install --prefix .layout-check playwright-core@1`, found through NODE_PATH or there).
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import url from 'node:url';

const require = createRequire(import.meta.url);
let playwright;
for (const base of [process.env.LAYOUT_CHECK_MODULES, '.layout-check/node_modules', 'node_modules'].filter(Boolean)) {
  try { playwright = require(path.resolve(base, 'playwright-core')); break; } catch { /* next */ }
}
if (!playwright) {
  console.error('error: playwright-core not found: npm install --prefix .layout-check playwright-core@1');
  process.exit(2);
}

const args = process.argv.slice(2);
let widths = [400, 1400];
const files = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--widths') widths = args[++i].split(',').map(Number);
  else files.push(args[i]);
}
const pages = files.flatMap(f => fs.statSync(f).isDirectory()
  ? fs.readdirSync(f).filter(n => n.endsWith('.html') && n !== 'print.html' && n !== '404.html' && n !== 'toc.html').sort().map(n => path.join(f, n))
  : [f]);

const browser = await playwright.chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
         '--disable-component-update', '--disable-sync'],
});
let problems = 0;
for (const width of widths) {
  const page = await browser.newPage({ viewport: { width, height: 900 } });
  for (const file of pages) {
    await page.goto(url.pathToFileURL(path.resolve(file)).href, { waitUntil: 'load' });
    const found = await page.evaluate(() => {
      const out = [];
      const doc = document.documentElement;
      if (doc.scrollWidth > window.innerWidth + 1) out.push(`the page is ${doc.scrollWidth} px wide`);
      for (const el of document.querySelectorAll('body *')) {
        const cs = getComputedStyle(el);
        if (cs.display === 'none' || cs.visibility === 'hidden' || el.closest('nav, .sidebar, #sidebar, #menu-bar')) continue;
        const hides = cs.overflowX === 'hidden' || cs.overflowX === 'clip';
        if (hides && el.clientWidth > 0 && el.scrollWidth > el.clientWidth + 1) {
          // Name what sticks out: the first formula, table, listing or figure past the edge.
          const edge = el.getBoundingClientRect().right;
          const scrolls = d => {
            for (let a = d.parentElement; a && a !== el; a = a.parentElement) {
              const o = getComputedStyle(a).overflowX;
              if (o === 'auto' || o === 'scroll') return true;
            }
            return false;
          };
          // The outermost element that sticks out while its parent does not.
          const out_ = d => d.getBoundingClientRect().right > edge + 1;
          const culprit = [...el.querySelectorAll('*')]
            .find(d => out_(d) && d.parentElement && !out_(d.parentElement) && !scrolls(d));
          const what = culprit
            ? `${culprit.tagName.toLowerCase()}${culprit.className ? '.' + String(culprit.className).split(' ')[0] : ''}: ` +
              (culprit.textContent || '').trim().replace(/\s+/g, ' ').slice(0, 50)
            : 'content';
          out.push(`cut off by <${el.tagName.toLowerCase()}${el.id ? '#' + el.id : ''}> (${el.scrollWidth} px in ${el.clientWidth}): ${what}`);
        }
      }
      return out;
    });
    for (const f of found) console.log(`${file} at ${width} px: ${f}`);
    problems += found.length;
  }
  await page.close();
}
await browser.close();
console.log(`layout check: ${pages.length} pages at ${widths.join(' and ')} px, ${problems} problems`);
process.exit(problems ? 1 : 0);
