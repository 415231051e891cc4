/**
 * The composition examples (activity booking, support triage, writer–critic, content pipeline,
 * task planner), each run through the public API on its own demo model; and two of them
 * through `examples/main.ts` (what `npm start -- <example>` runs) as child processes on
 * temporary databases, the content pipeline with its editor's answer piped in or not.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { factOf, type Model, type ModelRequest, type Runtime, type SwarmEvent, type SwarmFact } from '../../src/index.js';
import { ActivityRecommendation } from '../../examples/activity-planner/index.js';
import { activityBooking, ActivityBooking, createBookingDemoModel, createBookingRuntime, ticketing } from '../../examples/activity-booking/index.js';
import { createTriageDemoModel, createTriageRuntime, support, supportTriage, TriageResult } from '../../examples/support-triage/index.js';
import { createWriterCriticRuntime, FinalDraft, writerCritic } from '../../examples/writer-critic/index.js';
import { APPROVAL_QUESTION, contentPipeline, createContentRuntime, Publication } from '../../examples/content-pipeline/index.js';
import { createTaskPlannerRuntime, taskPlanner, TaskPlan } from '../../examples/task-planner/index.js';
import { NO_HUMAN } from '../../examples/shared/human.js';
import { examplesInTempFolder, printedResult } from '../support/example-process.js';

let runtime: Runtime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

/** Fast demo models: a little jitter keeps concurrent calls honest, no streaming delay. */
const demo = { latencyMs: [0, 3] as const, chunkDelayMs: 0 };

/** A model that records every request it answers (what the model saw, per speaker). */
function recording(model: Model): Model & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  return { name: model.name, requests, call: (req) => (requests.push(req), model.call(req)) };
}

async function eventsOf(r: Runtime, definitionId: string, swarmId: string): Promise<SwarmEvent[]> {
  const out: SwarmEvent[] = [];
  for await (const e of r.forSwarm(definitionId, swarmId).events()) out.push(e);
  return out;
}

function facts<T extends SwarmFact['type']>(events: SwarmEvent[], type: T): Extract<SwarmFact, { type: T }>[] {
  return events.flatMap((e) => factOf(e, type) ?? []);
}

const toolNames = (req: ModelRequest) => req.tools.map((t) => t.name);

describe('activity booking: a planner swarm with two child swarms', () => {
  it('hands off to the activity-planner and ticketing swarms and completes with a typed plan + booking', async () => {
    const model = recording(createBookingDemoModel(demo));
    runtime = createBookingRuntime({ model }).runtime;
    const client = runtime.forSwarm(activityBooking, 'trip');
    await client.run('Plan my Sunday and book something for the three of us');
    const done = await client.wait();
    expect(done.status).toBe('completed');
    if (done.status !== 'completed') return;
    const { plan, booking } = ActivityBooking.parse(done.result);

    // Sunday is rainy: the plan is indoors, and the museum is what gets booked.
    expect(plan.day).toBe('Sunday');
    expect(booking).toMatchObject({ activity: 'Visit the science museum', day: 'Sunday', people: 3, total: 42 });
    expect(booking.confirmation).toMatch(/^TKT-[0-9A-Z]{6}$/);

    // Each child is a swarm of its own, id `<parent>:t<turn>:<index>`, and its typed result is what the parent used.
    const events = await eventsOf(runtime, activityBooking.id, 'trip');
    expect(facts(events, 'swarm-handoff').map((f) => [f.to, f.childSwarmId])).toEqual([
      ['activity-planner', 'trip:t1:0'],
      ['ticketing', 'trip:t2:0'],
    ]);
    expect(facts(events, 'swarm-handoff')[1]!.input).toEqual({ activity: 'Visit the science museum', day: 'Sunday', people: 3 });
    expect(facts(events, 'child-swarm').map((f) => `${f.childSwarmId}:${f.lifecycle}`)).toEqual([
      'trip:t1:0:started',
      'trip:t1:0:completed',
      'trip:t2:0:started',
      'trip:t2:0:completed',
    ]);
    const planned = await runtime.forSwarm('activity-planner', 'trip:t1:0').getResult();
    expect(planned.status === 'completed' && ActivityRecommendation.parse(planned.result)).toEqual(plan);
    expect(await runtime.forSwarm(ticketing, 'trip:t2:0').getResult()).toEqual({
      status: 'completed',
      result: { confirmation: booking.confirmation, total: 42 },
    });

    // The planner's own agents ran inside the child; ticketing booked through its tool once.
    const planEvents = await eventsOf(runtime, 'activity-planner', 'trip:t1:0');
    expect(facts(planEvents, 'agent-handoff').map((f) => f.to)).toEqual(['weather-agent', 'calendar-agent', 'allergen-agent']);
    const ticketEvents = await eventsOf(runtime, 'ticketing', 'trip:t2:0');
    expect(facts(ticketEvents, 'tool-call').map((f) => f.toolName)).toEqual(['book_tickets']);

    // Structured child input: the handoff tool takes ticketing's input schema; the child sees only its input.
    const spec = model.requests.find((r) => r.agentId === activityBooking.id)!.tools.find((t) => t.name === 'handoff_to_ticketing')!;
    expect(spec.parameters).toMatchObject({ type: 'object', required: ['activity', 'day', 'people'] });
    const child = model.requests.find((r) => r.swarmId === 'trip:t2:0')!;
    expect(child.messages).toHaveLength(2);
    expect(child.messages[0]!.content).toMatch(/^Book 3 ticket\(s\) for "Visit the science museum" on Sunday\./);
  });
});

describe('support triage: customized child swarms (VIP path)', () => {
  it('customizes the support child for a VIP (extra instructions, agent, tool, turns) and not for a normal customer', async () => {
    const model = recording(createTriageDemoModel(demo));
    runtime = createTriageRuntime({ model }).runtime;
    const vip = runtime.forSwarm(supportTriage, 'vip');
    const normal = runtime.forSwarm(supportTriage, 'std');
    await Promise.all([
      vip.run('Customer C-1001: I was charged twice for order #4417, please sort this out today.'),
      normal.run('Customer C-2002: I was charged twice for order #5120.'),
    ]);
    const [vipDone, normalDone] = await Promise.all([vip.wait(), normal.wait()]);
    expect(vipDone.status).toBe('completed');
    expect(normalDone.status).toBe('completed');
    const vipResult = TriageResult.parse(vipDone.status === 'completed' && vipDone.result);
    const normalResult = TriageResult.parse(normalDone.status === 'completed' && normalDone.result);

    // lookup_customer decided the path.
    expect(vipResult).toMatchObject({ customer: 'Ada Lovelace', tier: 'vip', customized: true });
    expect(normalResult).toMatchObject({ customer: 'Sam Taylor', tier: 'standard', customized: false });

    // What the child's model saw: the customization extends its own configuration…
    const childRequest = (swarmId: string) => model.requests.find((r) => r.agentId === support.id && r.swarmId === swarmId)!;
    const vipChild = childRequest('vip:t2:0');
    const normalChild = childRequest('std:t2:0');
    expect(vipChild.messages[0]!.content).toMatch(/^You resolve a customer support ticket\.[\s\S]*\n\nAda Lovelace is a VIP customer: resolve on first contact\./);
    expect(toolNames(vipChild)).toEqual(['search_help_center', 'issue_refund', 'handoff_to_billing_agent', 'handoff_to_escalation_agent', 'complete', 'pause', 'fail']);
    // …and the plain child has exactly its own.
    expect(normalChild.messages[0]!.content).not.toMatch(/VIP/);
    expect(toolNames(normalChild)).toEqual(['search_help_center', 'handoff_to_billing_agent', 'complete', 'pause', 'fail']);

    // The customized child used the added agent and tool; the plain one could not.
    const vipEvents = await eventsOf(runtime, support.id, 'vip:t2:0');
    const normalEvents = await eventsOf(runtime, support.id, 'std:t2:0');
    // (A swarm's stream also reports its agents' tool calls; the orchestrator's are the ones with agent 'support'.)
    const ownTools = (events: SwarmEvent[]) =>
      facts(events, 'tool-call')
        .filter((f) => f.agent === support.id)
        .map((f) => f.toolName);
    expect(ownTools(vipEvents)).toEqual(['issue_refund']);
    expect(facts(vipEvents, 'agent-handoff').map((f) => f.to)).toEqual(['billing-agent', 'escalation-agent']);
    expect(ownTools(normalEvents)).toEqual(['search_help_center']);
    expect(facts(normalEvents, 'agent-handoff').map((f) => f.to)).toEqual(['billing-agent']);
    // max_turns_override: 8 instead of support's own 4.
    expect(facts(vipEvents, 'turn-completed')[0]!.maxTurns).toBe(8);
    expect(facts(normalEvents, 'turn-completed')[0]!.maxTurns).toBe(4);

    expect(vipResult.actions).toEqual(['billing-agent', 'issue_refund', 'escalation-agent']);
    expect(vipResult.resolution).toMatch(/refunded the duplicate 89 EUR right away \(refund RF-/);
    expect(vipResult.resolution).toMatch(/Dana Kim \(senior support\) will follow up personally/);
    expect(normalResult.actions).toEqual(['billing-agent', 'search_help_center']);
    expect(normalResult.resolution).toMatch(/reversed automatically within 5-7 business days/);

    // The customization travelled in the parent's handoff call, and only for the VIP.
    const vipCall = model.requests.filter((r) => r.swarmId === 'vip' && r.agentId === supportTriage.id).at(-1)!;
    const sent = vipCall.messages.flatMap((m) => m.toolCalls ?? []).find((c) => c.name === 'handoff_to_support')!;
    expect(JSON.parse(sent.arguments).customization).toMatchObject({
      additional_agents: ['escalation-agent'],
      additional_tools: ['issue_refund'],
      max_turns_override: 8,
    });
    const stdCall = model.requests.filter((r) => r.swarmId === 'std' && r.agentId === supportTriage.id).at(-1)!;
    const plain = stdCall.messages.flatMap((m) => m.toolCalls ?? []).find((c) => c.name === 'handoff_to_support')!;
    expect(JSON.parse(plain.arguments)).not.toHaveProperty('customization');
  });
});

describe('writer–critic loop with an inline critic', () => {
  it('revises until the critic approves (two revisions, three critic rounds) and completes with the final draft', async () => {
    const setup = createWriterCriticRuntime({ env: {}, demo });
    expect(setup.offline).toBe(true);
    runtime = setup.runtime;
    const client = runtime.forSwarm(writerCritic, 'wc');
    await client.run('Write a short blog intro on why small teams should adopt code review');
    const done = await client.wait();
    expect(done.status).toBe('completed');
    const draft = FinalDraft.parse(done.status === 'completed' && done.result);

    const events = await eventsOf(runtime, writerCritic.id, 'wc');
    const rounds = facts(events, 'agent-handoff').filter((f) => f.to === 'critic');
    expect(rounds).toHaveLength(3);
    expect(
      facts(events, 'tool-call')
        .filter((f) => f.agent === 'critic')
        .map((f) => f.toolName),
    ).toEqual(['text_stats', 'text_stats', 'text_stats']);
    expect(draft.revisions).toBe(2);
    expect(draft.notes.map((n) => n.split(':')[0])).toEqual(['REVISE', 'REVISE', 'APPROVED']);
    expect(draft.notes[0]).toMatch(/sentences are too long/);
    expect(draft.notes[1]).toMatch(/concrete example/);
    // The final draft is the one the critic approved, with both fixes in it.
    expect(rounds[2]!.request.endsWith(draft.text)).toBe(true);
    expect(draft.text).toContain('For example,');
    expect(draft.title).toBe('Why small teams should adopt code review');
  });
});

describe('content pipeline with a human approval pause', () => {
  it('pauses with the approval question, and after resume publishes once with the feedback and completes', async () => {
    runtime = createContentRuntime({ env: {}, demo }).runtime;
    const client = runtime.forSwarm(contentPipeline, 'post');
    await client.run('urban beekeeping');
    const paused = await client.wait();
    expect(paused).toMatchObject({ status: 'paused', reason: { type: 'HITL' } });
    if (paused.status !== 'paused') return;
    expect(paused.reason.message.startsWith(APPROVAL_QUESTION)).toBe(true);
    expect(paused.reason.message).toContain('TITLE: Urban beekeeping: what the numbers say');

    const feedback = 'Approved, but please use a shorter title.';
    await client.resume(feedback);
    const done = await client.wait();
    expect(done.status).toBe('completed');
    const post = Publication.parse(done.status === 'completed' && done.result);
    expect(post).toMatchObject({ title: 'Urban beekeeping', url: 'https://blog.example.com/posts/urban-beekeeping', editorFeedback: feedback });

    const events = await eventsOf(runtime, contentPipeline.id, 'post');
    expect(facts(events, 'agent-handoff').map((f) => f.to)).toEqual(['researcher', 'copywriter']);
    // Published only after the human answered.
    const steps = events.flatMap((e) => {
      if (factOf(e, 'paused')) return ['paused'];
      if (factOf(e, 'resumed')) return ['resumed'];
      return factOf(e, 'tool-call')?.toolName === 'publish_post' ? ['publish_post'] : [];
    });
    expect(steps).toEqual(['paused', 'resumed', 'publish_post']);
    const publishes = events.filter((e) => e.kind === 'internal:tool-start' && e.toolName === 'publish_post');
    expect(publishes).toHaveLength(1);
    const args = JSON.parse((publishes[0] as Extract<SwarmEvent, { kind: 'internal:tool-start' }>).arguments);
    expect(args).toMatchObject({ title: 'Urban beekeeping', editor_feedback: feedback });
  });

  it('does not publish when the editor rejects the post', async () => {
    runtime = createContentRuntime({ env: {}, demo }).runtime;
    const client = runtime.forSwarm(contentPipeline, 'no');
    await client.run('urban beekeeping');
    expect((await client.wait()).status).toBe('paused');
    await client.resume('Reject: we covered bees last week.');
    expect(await client.wait()).toEqual({ status: 'failed', reason: 'The editor rejected the post: Reject: we covered bees last week.' });
    const events = await eventsOf(runtime, contentPipeline.id, 'no');
    expect(facts(events, 'tool-call').filter((f) => f.toolName === 'publish_post')).toHaveLength(0);
  });
});

describe('task planner with the swarm registry', () => {
  it('searches the registry per task and hands off only to swarms the searches returned', async () => {
    runtime = createTaskPlannerRuntime({ env: {}, demo }).runtime;
    const client = runtime.forSwarm(taskPlanner, 'tp');
    await client.run('Check the weather for Saturday and book kayaking for 3 people');
    const done = await client.wait();
    expect(done.status).toBe('completed');
    const plan = TaskPlan.parse(done.status === 'completed' && done.result);

    const events = await eventsOf(runtime, taskPlanner.id, 'tp');
    const searches = events.flatMap((e) => (e.kind === 'internal:tool-complete' && e.toolName === 'swarm_registry_search' ? [e] : []));
    expect(searches).toHaveLength(2);
    const found = searches.map((s) => (JSON.parse(s.content) as { matches: { id: string }[] }).matches.map((m) => m.id));
    expect(found[0]![0]).toBe('forecaster');
    expect(found[1]![0]).toBe('ticketing');

    // Both handoffs in one response (turn 2): concurrent children tp:t2:0 and tp:t2:1.
    const handoffs = facts(events, 'swarm-handoff');
    expect(handoffs.map((h) => [h.to, h.childSwarmId])).toEqual([
      ['forecaster', 'tp:t2:0'],
      ['ticketing', 'tp:t2:1'],
    ]);
    for (const h of handoffs) expect(found.flat()).toContain(h.to);
    expect(handoffs[1]!.input).toEqual({ activity: 'Kayaking', day: 'Saturday', people: 3 });
    expect(await runtime.forSwarm('forecaster', 'tp:t2:0').getResult()).toMatchObject({ status: 'completed', result: expect.stringMatching(/^Saturday: sunny/) });
    expect(await runtime.forSwarm(ticketing, 'tp:t2:1').getResult()).toMatchObject({ status: 'completed', result: { total: 75 } });

    expect(plan.tasks.map((t) => t.swarm)).toEqual(['forecaster', 'ticketing']);
    expect(plan.tasks[1]!.outcome).toMatch(/^booked, reference TKT-\w{6}, 75 EUR in total$/);
    expect(plan.summary).toContain('Check the weather for Saturday: Saturday: sunny');
  });
});

const { runExample, newDb } = examplesInTempFolder('xswarm-examples-composition-');

describe('npm start -- <example>', () => {
  it('runs support-triage, and content-pipeline with no stdin at all (the model decides without a human), to completion', async () => {
    const [triage, pipeline] = await Promise.all([runExample(['support-triage'], { launcher: 'npx' }), runExample(['content-pipeline'])]);
    expect(triage.code, triage.stderr).toBe(0);
    expect(triage.stdout).toContain('support-triage calls lookup_customer');
    expect(TriageResult.parse(printedResult(triage.stdout))).toMatchObject({ tier: 'vip', customized: true });

    expect(pipeline.code, pipeline.stderr).toBe(0);
    expect(pipeline.stdout).toContain(`⏸ paused (HITL): ${APPROVAL_QUESTION}`);
    expect(pipeline.stdout).toContain(`▶ resumed: "${NO_HUMAN}"`);
    expect(Publication.parse(printedResult(pipeline.stdout)).editorFeedback).toBe(NO_HUMAN);
  });

  it("content-pipeline reads the editor's answer from piped stdin: `echo reject |` fails it, `echo approve |` publishes", async () => {
    const [rejected, approved, auto] = await Promise.all([
      runExample(['content-pipeline'], { stdin: 'reject\n' }),
      runExample(['content-pipeline'], { stdin: 'approve\n' }),
      // Asked explicitly to answer itself, it ignores what is piped in.
      runExample(['content-pipeline', '--auto-answer'], { stdin: 'reject\n' }),
    ]);
    expect(rejected.code).toBe(1);
    expect(rejected.stdout).toContain('> reject\n');
    expect(rejected.stdout).toContain('▶ resumed: "reject"');
    expect(rejected.stderr).toContain('failed: The editor rejected the post: reject');
    // The question is printed once, by the narration.
    expect(rejected.stdout.split(APPROVAL_QUESTION)).toHaveLength(2);

    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toContain('content-pipeline calls publish_post');
    expect(Publication.parse(printedResult(approved.stdout))).toMatchObject({ title: 'Urban beekeeping: what the numbers say', editorFeedback: 'approve' });

    expect(auto.code, auto.stderr).toBe(0);
    expect(Publication.parse(printedResult(auto.stdout)).editorFeedback).toBe(NO_HUMAN);
  });

  it('content-pipeline whose piped stdin ends without an answer stays paused (exit 3); the next run asks again and finishes', async () => {
    const db = newDb();
    const unanswered = await runExample(['content-pipeline', '--db', db], { stdin: '' });
    expect(unanswered.code, unanswered.stderr).toBe(3);
    const id = /^swarm (\S+)$/m.exec(unanswered.stdout)![1]!;
    expect(unanswered.stdout).toMatch(/> \(stdin ended without an answer\)\n$/);
    expect(unanswered.stderr).toBe(`swarm ${id} waits for an answer (state in ${db}); answer it with: npm start -- content-pipeline --db ${db}\n`);

    const answered = await runExample(['content-pipeline', '--db', db], { stdin: 'Approved, but use a shorter title.\n' });
    expect(answered.code, answered.stderr).toBe(0);
    expect(answered.stdout).toContain(`continuing swarm ${id}, paused earlier, waiting for an answer (${db})`);
    expect(Publication.parse(printedResult(answered.stdout))).toMatchObject({ title: 'Urban beekeeping', editorFeedback: 'Approved, but use a shorter title.' });
  });

  it('--help says how a swarm that pauses gets its answer', async () => {
    const help = await runExample(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('echo reject | npm start -- content-pipeline');
    expect(help.stdout).toMatch(/--auto-answer +nobody answers/);
  });
});
