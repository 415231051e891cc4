/**
 * createRuntime's options are checked once, before anything is built or connected: each bad
 * option is refused with one TypeError naming it; good ones are defaulted.
 */
import { describe, expect, it } from 'vitest';
import { resolveOptions } from '../../src/runtime/options.js';
import { createRuntime, type RuntimeOptions, scriptedModel } from '../../src/index.js';

const model = scriptedModel(() => ({ text: 'ok' }));

describe('createRuntime options', () => {
  it.each([
    [{}, /`model` is required/],
    [{ model: { name: 'x' } }, /`model` is required/],
    [{ model, leaseMs: 0 }, /^createRuntime: leaseMs must be positive/],
    [{ model, leaseMs: Number.NaN }, /^createRuntime: leaseMs must be positive/],
    [{ model, passivateAfterMs: -1 }, /^createRuntime: passivateAfterMs must be a finite number/],
    [{ model, owner: '' }, /^createRuntime: owner must be a non-empty string/],
    [{ model, store: {} }, /^createRuntime: store must be a SwarmStore/],
    [{ model, remote: { card: () => undefined } }, /^createRuntime: remote must be a RemoteAgentClient/],
    [{ model, redact: ['ok', 3] }, /^createRuntime: redact must be a list of strings/],
    [{ model, nats: { url: 'nats://x' } }, /^createRuntime: nats must be NATS options with `servers`/],
    [{ model, nats: { servers: 'nats://127.0.0.1:1', prefix: 'a.b' } }, /nats\.prefix must be 1-32 letters/],
    [{ model, transport: {} }, /^createRuntime: transport must be a Transport/],
    [{ model, hosting: { serve: 'yes' } }, /^createRuntime: hosting\.serve must be a boolean/],
    [{ model, hosting: { deadlineMs: -5 } }, /^createRuntime: hosting\.deadlineMs must be a positive number of milliseconds/],
    [{ model, hosting: { heartbeatMs: 5_000, heartbeatTimeoutMs: 1_000 } }, /hosting\.heartbeatMs must be shorter than hosting\.heartbeatTimeoutMs/],
    [{ model, swarms: 'planner' }, /^createRuntime: swarms must be a list of definitions/],
  ])('refuses %j', (options, message) => {
    expect(() => createRuntime(options as unknown as RuntimeOptions)).toThrow(TypeError);
    expect(() => createRuntime(options as unknown as RuntimeOptions)).toThrow(message);
  });

  it('defaults what is not given, and reads the NATS options once into the reach and the redaction', () => {
    const o = resolveOptions({ model, nats: { servers: 'nats://127.0.0.1:4222', pass: 'a-long-secret-pass', prefix: 'team1' } });
    expect(o.leaseMs).toBe(15_000);
    expect(o.owner).toMatch(/:\d+:/);
    expect(o.hosting).toEqual({ deadlineMs: 10_000, heartbeatMs: 2_000, heartbeatTimeoutMs: 10_000, leaseMs: 15_000, serve: true });
    expect(o.reach).toMatchObject({ kind: 'nats', prefix: 'team1', openStore: true });
    expect(o.redact?.({ error: 'auth failed for a-long-secret-pass' })).toEqual({ error: 'auth failed for [REDACTED]' });
    expect(resolveOptions({ model }).reach).toBeUndefined();
  });

  it('lets keys it does not know through, as a spread of a larger object always did', () => {
    expect(() => createRuntime({ model, extra: true } as unknown as RuntimeOptions)).not.toThrow();
  });
});
