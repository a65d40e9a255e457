/**
 * Our server and a real redis-server side by side, each with a raw RESP connection: the
 * set-up of the differential tests that compare replies command by command.
 */
import { startOurs, startRedis, type Proc } from './server.js';
import { RawClient } from './resp-client.js';

export interface Pair {
  ours: Proc;
  redis: Proc;
  /** Raw connections to ours and to redis-server. */
  oc: RawClient;
  rc: RawClient;
  /** Send one command to both; the replies as latin1 text, ours first. */
  both(...args: string[]): Promise<[string, string]>;
  stop(): Promise<void>;
}

export async function startPair(oursArgs: string[] = ['--appendfsync', 'no'], redisArgs: string[] = []): Promise<Pair> {
  const [ours, redis] = await Promise.all([startOurs(oursArgs), startRedis(redisArgs)]);
  const [oc, rc] = await Promise.all([RawClient.connect(ours.port), RawClient.connect(redis.port)]);
  return {
    ours, redis, oc, rc,
    async both(...args: string[]): Promise<[string, string]> {
      const [a, b] = await Promise.all([oc.call(...args), rc.call(...args)]);
      return [a.toString('latin1'), b.toString('latin1')];
    },
    async stop(): Promise<void> {
      oc.close();
      rc.close();
      await Promise.all([ours.stop(), redis.stop()]);
    },
  };
}
