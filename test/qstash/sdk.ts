/**
 * Loads the unmodified @upstash/qstash SDK: from node_modules once it is a devDependency, else
 * from the private development copy in /tmp/qstash-deps (QSTASH_SDK_DIR overrides it).
 */
/* eslint-disable @typescript-eslint/no-explicit-any */
export async function loadSdk(): Promise<any> {
  const name = '@upstash/qstash';
  try {
    return await import(name);
  } catch {
    const dir = process.env.QSTASH_SDK_DIR ?? '/tmp/qstash-deps/node_modules/@upstash/qstash';
    return await import(`${dir}/index.mjs`);
  }
}
