/** Unit tests of the QStash header languages: durations, retry-delay expressions, cron, flow values. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseDuration, compileRetryDelay, defaultBackoff, parseRetryAfter, parseFlowValue } from '../../dist/qstash/expr.js';
import { parseCron, nextRun } from '../../dist/qstash/cron.js';

describe('qstash expressions', () => {
  it('durations', () => {
    assert.equal(parseDuration('10s'), 10_000);
    assert.equal(parseDuration('1h30m'), 5_400_000);
    assert.equal(parseDuration('500ms'), 500);
    assert.equal(parseDuration('2d'), 172_800_000);
    assert.equal(parseDuration('7'), 7000);
    assert.ok(Number.isNaN(parseDuration('soon')));
    assert.ok(Number.isNaN(parseDuration('10x')));
  });
  it('retry delay expressions', () => {
    assert.equal(compileRetryDelay('1000')(3), 1000);
    assert.equal(compileRetryDelay('pow(2, retried) * 100')(3), 800);
    assert.equal(compileRetryDelay('min(86400000, 1000 * (1 + retried))')(1), 2000);
    assert.equal(compileRetryDelay('max(10, sqrt(retried * 100))')(4), 20);
    assert.equal(compileRetryDelay('floor(exp(retried))')(1), 2);
    assert.equal(compileRetryDelay('abs(-5) + ceil(0.2) + round(1.6)')(0), 8);
    assert.equal(compileRetryDelay('2 ^ 3 ^ 2')(0), 512);
    assert.equal(compileRetryDelay('-5')(0), 0);
    for (const bad of ['pow(', 'foo(1)', '1 +', 'retried retried', 'pow(1)', '1; 2', '']) assert.throws(() => compileRetryDelay(bad), bad);
    assert.equal(defaultBackoff(0), 12182);
    assert.equal(defaultBackoff(100), 86_400_000);
  });
  it('Retry-After and flow values', () => {
    assert.equal(parseRetryAfter('3', 0), 3000);
    assert.equal(parseRetryAfter('6m5s', 0), 365_000);
    assert.equal(parseRetryAfter('999999999', 0), 86_400_000);
    const now = Date.parse('2026-01-01T00:00:00Z');
    assert.equal(parseRetryAfter('Thu, 01 Jan 2026 00:00:10 GMT', now), 10_000);
    assert.equal(parseRetryAfter('garbage!', 0), null);
    assert.deepEqual(parseFlowValue('parallelism=2, rate=10, period=1m'), { parallelism: 2, rate: 10, period: 60_000 });
    assert.deepEqual(parseFlowValue('rate=5'), { rate: 5 });
    assert.throws(() => parseFlowValue('period=1s'));
    assert.throws(() => parseFlowValue('parallelism=0'));
  });
  it('cron in UTC', () => {
    const t = Date.parse('2026-03-15T10:07:30Z');
    const at = (e: string, from = t) => new Date(nextRun(parseCron(e), from)).toISOString();
    assert.equal(at('* * * * *'), '2026-03-15T10:08:00.000Z');
    assert.equal(at('*/15 * * * *'), '2026-03-15T10:15:00.000Z');
    assert.equal(at('0 9 * * *'), '2026-03-16T09:00:00.000Z');
    assert.equal(at('30 8 1 * *'), '2026-04-01T08:30:00.000Z');
    assert.equal(at('0 0 * * mon'), '2026-03-16T00:00:00.000Z');
    assert.equal(at('0 0 29 2 *'), '2028-02-29T00:00:00.000Z');
    assert.equal(at('@hourly'), '2026-03-15T11:00:00.000Z');
    assert.equal(at('CRON_TZ=UTC 5 10 * * *'), '2026-03-16T10:05:00.000Z');
    assert.equal(at('0 12 * jan-mar 1-5'), '2026-03-16T12:00:00.000Z');
    for (const bad of ['* * * *', '61 * * * *', 'a b c d e', 'CRON_TZ=Europe/Paris * * * * *', '*/0 * * * *']) assert.throws(() => parseCron(bad), bad);
  });
});
