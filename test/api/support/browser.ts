import fs from 'node:fs';

/** Debian's chromium (`.ci/run` installs it); override with CHROMIUM_PATH. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * For browser test files: `describe.runIf(requireChromium())(...)`. True when the
 * chromium binary is there. When it is not: under `CI=true` it throws (the file fails,
 * never skips); otherwise it prints a loud warning and returns false.
 */
export function requireChromium(file: string): boolean {
  if (fs.existsSync(CHROMIUM_PATH)) return true;
  const why = `no chromium at ${CHROMIUM_PATH}`;
  if (process.env.CI === 'true') {
    throw new Error(`${why}; ${file} needs it and CI=true forbids skipping. Install it with \`apt-get install -y chromium\` (or set CHROMIUM_PATH).`);
  }
  const bar = '!'.repeat(78);
  console.warn(
    `\n${bar}\n!! SKIPPING ${file}\n!! because ${why}.\n` +
      '!! Install it with `apt-get install -y chromium`; under CI=true this is a failure.\n' +
      `${bar}\n`,
  );
  return false;
}
