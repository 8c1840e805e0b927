import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import vue from '@vitejs/plugin-vue';
import { defineConfig, type Plugin } from 'vite';

const here = path.dirname(fileURLToPath(import.meta.url));

/** The office's web page: built from src/web into dist/web, served by the API at `/` (src/api/web-app.ts). */
export default defineConfig({
  root: here,
  base: '/',
  plugins: [vue(), bundleSize()],
  build: {
    outDir: process.env.WEB_OUT_DIR ? path.resolve(process.env.WEB_OUT_DIR) : path.resolve(here, '../../dist/web'),
    emptyOutDir: true,
    // The polyfill is an inline script; the CSP allows none and every browser the office uses has modulepreload.
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
    chunkSizeWarningLimit: 1_200,
  },
  server: {
    // `npm run dev:web` beside `npm run dev`: the page's requests go to the service.
    proxy: { '/graphql': { target: 'http://127.0.0.1:4000', ws: true } },
  },
});

/**
 * Prints every emitted file, raw and gzip, the totals, and what a first load of the
 * page downloads (the entry chunk, the chunks it imports statically and their CSS;
 * lazy chunks such as the chart come later, when used).
 */
function bundleSize(): Plugin {
  return {
    name: 'jiaowu-bundle-size',
    apply: 'build',
    generateBundle(_options, bundle) {
      const sizes = new Map<string, { raw: number; gzip: number }>();
      for (const [name, file] of Object.entries(bundle)) {
        const bytes = file.type === 'chunk' ? Buffer.from(file.code) : Buffer.from(file.source as string | Uint8Array);
        sizes.set(name, { raw: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length });
      }
      const firstLoad = new Set<string>();
      const visit = (name: string) => {
        const file = bundle[name];
        if (!file || firstLoad.has(name)) return;
        firstLoad.add(name);
        if (file.type !== 'chunk') return;
        for (const css of (file as { viteMetadata?: { importedCss: Set<string> } }).viteMetadata?.importedCss ?? []) firstLoad.add(css);
        for (const imported of file.imports) visit(imported);
      };
      for (const [name, file] of Object.entries(bundle)) if (file.type === 'chunk' && file.isEntry) visit(name);
      const sum = (names: Iterable<string>) => {
        let raw = 0;
        let gzip = 0;
        for (const name of names) {
          raw += sizes.get(name)?.raw ?? 0;
          gzip += sizes.get(name)?.gzip ?? 0;
        }
        return `${kb(raw).padStart(10)} ${kb(gzip).padStart(10)} gzip`;
      };
      const rows = [...sizes.keys()].sort().map((name) => `  ${name.padEnd(44)} ${sum([name])}${firstLoad.has(name) ? '  (first load)' : ''}`);
      console.log(['web bundle (dist/web):', ...rows, `  ${'first load'.padEnd(44)} ${sum(firstLoad)}`, `  ${'all files'.padEnd(44)} ${sum(sizes.keys())}`].join('\n'));
    },
  };
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} kB`;
