// (Replacements are functions: a replacement string would expand `$&` and friends in the code.)
// Builds the grader's desk (src/web/browser) into ONE self-contained HTML file,
// dist/web/index.html: the page script, its verification worker (inlined and
// started from a blob: URL) and the styles are all inline, so the file works
// opened from disk offline and served by `tally serve`. Its Content-Security-
// Policy (script and style allowed by SHA-256 hash only) is written into the
// page and to dist/web/csp.txt for the server's header.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const outDir = resolve(repo, 'dist/web');
const src = resolve(repo, 'src');
// Platform bindings: a module the page reuses through the engine's own code
// (replay drives the real Engine) but whose Node binding it cannot load —
// node:crypto's SHA-256 — is resolved to its browser twin (src/web/browser/bindings.json).
const BINDINGS = new Map(Object.entries(JSON.parse(readFileSync(resolve(src, 'web/browser/bindings.json'), 'utf8'))).map(([from, to]) => [resolve(src, from), resolve(src, to)]));
function bindings() {
  return {
    name: 'tally-browser-bindings',
    enforce: 'pre',
    async resolveId(source, importer, options) {
      if (!source.startsWith('.') || importer === undefined) return null;
      const r = await this.resolve(source, importer, { ...options, skipSelf: true });
      return r && BINDINGS.has(r.id) ? BINDINGS.get(r.id) : null;
    },
  };
}
const sha = (s) => `'sha256-${createHash('sha256').update(s, 'utf8').digest('base64')}'`;

/** Inlines the emitted script and stylesheet into the HTML and drops the separate files. */
function singleFile() {
  return {
    name: 'tally-single-file',
    enforce: 'post',
    generateBundle(_options, bundle) {
      const html = Object.values(bundle).find((a) => a.type === 'asset' && a.fileName.endsWith('.html'));
      if (!html) throw new Error('no HTML emitted');
      let text = String(html.source);
      let script = '';
      let style = '';
      for (const [name, chunk] of Object.entries(bundle)) {
        if (chunk.type === 'chunk') {
          script += chunk.code.replace(/<\/script/gi, '<\\/script');
          delete bundle[name];
        } else if (name.endsWith('.css')) {
          style += String(chunk.source).replace(/<\/style/gi, '<\\/style');
          delete bundle[name];
        }
      }
      text = text.replace(/<script type="module"[^>]*src="[^"]*"><\/script>\s*/g, '').replace(/<link rel="stylesheet"[^>]*>\s*/g, '');
      const csp = [
        "default-src 'none'",
        // 'wasm-unsafe-eval' lets the page (and its blob: worker, which inherits this
        // policy) compile its WebAssembly SHA-256; it allows no JavaScript eval.
        `script-src ${sha(script)} 'wasm-unsafe-eval'`,
        `style-src ${sha(style)}`,
        'worker-src blob:',
        "connect-src 'self'",
        'img-src data: blob:',
        "base-uri 'none'",
        "form-action 'none'",
      ].join('; ');
      text = text
        .replace('<meta charset="utf-8">', () => `<meta charset="utf-8">\n<meta http-equiv="Content-Security-Policy" content="${csp}">`)
        .replace('</head>', () => `<style>${style}</style>\n</head>`)
        .replace('</body>', () => `<script type="module">${script}</script>\n</body>`);
      html.source = text;
      mkdirSync(outDir, { recursive: true });
      writeFileSync(resolve(outDir, 'csp.txt'), `${csp}\n`);
    },
  };
}

await build({
  configFile: false,
  root: resolve(repo, 'src/web/browser'),
  base: './',
  logLevel: 'warn',
  plugins: [bindings(), singleFile()],
  worker: { format: 'iife', plugins: () => [bindings()] },
  build: {
    outDir,
    emptyOutDir: false,
    target: 'es2022',
    modulePreload: false,
    cssCodeSplit: false,
    assetsInlineLimit: 1 << 30,
    reportCompressedSize: false,
    rolldownOptions: { output: { codeSplitting: false } },
  },
});
