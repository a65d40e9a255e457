/**
 * Loads the unmodified @upstash/qstash SDK (a devDependency).
 */
/* eslint-disable @typescript-eslint/no-explicit-any */
export async function loadSdk(): Promise<any> {
  return import('@upstash/qstash');
}
