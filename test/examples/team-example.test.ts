/**
 * The team example (seed 004's PRD build): user stories with dependencies built by database,
 * api and frontend workers on scripted models, one worker stalling and being respawned, and the
 * speedup measured against the same board with one worker; through its API and as
 * `npm start -- team`.
 */
import { describe, expect, it } from 'vitest';
import { runPrdBuild, userStories } from '../../examples/team/index.js';
import { examplesInTempFolder } from '../support/example-process.js';

const { runExample } = examplesInTempFolder('xswarm-team-example-');

describe('team example: the PRD build', () => {
  it('builds every story in dependency order, respawns the stalled worker, and is faster than one worker', async () => {
    const report = await runPrdBuild({ latencyMs: 60 });
    expect(report.team.status).toBe('completed');
    expect(report.solo.status).toBe('completed');
    expect(report.team.counts).toMatchObject({ total: userStories.length, completed: userStories.length });

    const facts = report.events.map((e) => e.metadata);
    const completedAt = new Map<string, number>();
    facts.forEach((f, i) => f.type === 'team-task-completed' && completedAt.set(f.taskId, i));
    for (const story of userStories) {
      const claimed = facts.findIndex((f) => f.type === 'team-task-claimed' && f.taskId === story.id);
      for (const dep of story.dependencies ?? []) expect(claimed).toBeGreaterThan(completedAt.get(dep)!);
    }
    // Stories go to workers of their type.
    for (const f of facts) {
      if (f.type !== 'team-task-claimed') continue;
      const type = userStories.find((s) => s.id === f.taskId)!.metadata!.type!;
      expect(f.workerId.startsWith(`${type}-`)).toBe(true);
    }
    // The stalled worker: its story released, the worker respawned, the story done by attempt 2.
    expect(facts).toContainEqual(expect.objectContaining({ type: 'team-task-released', taskId: 'ui-login', attempt: 1, reason: 'worker silent' }));
    expect(facts.filter((f) => f.type === 'team-worker-respawned')).toHaveLength(1);
    expect(facts).toContainEqual(expect.objectContaining({ type: 'team-task-claimed', taskId: 'ui-login', attempt: 2 }));
    expect(report.team.metrics).toMatchObject({ spawns: 6, respawns: 1 });
    expect(report.team.metrics.workers.reduce((n, w) => n + w.completed, 0)).toBe(userStories.length);
    expect(report.speedup).toBeGreaterThan(1.2);
  });

  it('runs as `npm start -- team` and prints the metrics and the measured speedup', async () => {
    const { code, stdout, stderr } = await runExample(['team', '--memory']);
    expect(code, stderr).toBe(0);
    expect(stdout).toContain('team started with 8 user stories');
    expect(stdout).toMatch(/frontend-1 went silent and was respawned/);
    expect(stdout).toContain('team completed');
    expect(stdout).toMatch(/team of 5: \d+ ms, \d+ batches .* 6 spawns \(1 respawns\)/);
    expect(stdout).toMatch(/speedup: \d+\.\d\dx/);
  });
});
