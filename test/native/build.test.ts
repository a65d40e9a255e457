/**
 * Every native/<name>/build.sh, rebuilt into a temporary directory, gives the bytes of the
 * committed native/<name>.wasm: source and binary cannot drift apart, and builds are
 * reproducible (no path or time in the output). Needs clang and wasm-ld (Debian: clang lld
 * wasi-libc libclang-rt-dev-wasm32), as CI installs.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const NATIVE = fileURLToPath(new URL('../../native/', import.meta.url));
const builds = readdirSync(NATIVE, { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(join(NATIVE, d.name, 'build.sh')))
  .map((d) => d.name);

describe('native builds match the committed .wasm', () => {
  it('finds the native modules', () => {
    assert.ok(builds.includes('lzf'), `native/: ${builds.join(', ')}`);
  });
  for (const name of builds) {
    it(`native/${name}/build.sh rebuilds native/${name}.wasm byte for byte`, () => {
      const dir = mkdtempSync(join(tmpdir(), `native-${name}-`));
      try {
        const out = join(dir, `${name}.wasm`);
        execFileSync('sh', [join(NATIVE, name, 'build.sh')], { env: { ...process.env, OUT: out }, stdio: ['ignore', 'ignore', 'pipe'], timeout: 600_000 });
        const built = readFileSync(out);
        const committed = readFileSync(join(NATIVE, `${name}.wasm`));
        assert.ok(built.equals(committed), `native/${name}.wasm differs from its rebuild (${committed.length} vs ${built.length} bytes): run native/${name}/build.sh and commit`);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
