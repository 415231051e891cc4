/**
 * Which module may import which: the arrows of docs/architecture.md, checked on every
 * `npm run lint` (`npm run lint:deps`). The house is three folders whose arrows point one way,
 * src → actors → machines, and src/ is one folder per concern, stacked in LAYERS below.
 *
 * Scope: src, actors and machines (package.json's lint:deps). Tests, bench and examples are free
 * to import anything. Type-only imports count everywhere but in `no-value-cycles`: a type from
 * the wrong side of an arrow couples the code as much as a value does.
 *
 * The sources are parsed with swc (`options.parser`): dependency-cruiser's own TypeScript parser
 * needs the compiler API TypeScript 7.0 does not have.
 *
 * @type {import('dependency-cruiser').IConfiguration}
 */

/** An npm package, whether node_modules is a folder (CI) or a link to another checkout's (a worktree). */
const npm = (name) => `(^|/)node_modules/${name.replace('/', '\\/')}/`;

/**
 * src/, bottom to top: each layer may import the layers below it (and actors/, machines/), never one
 * above it. A folder takes its subfolders along (src/store/sqlite/ is store).
 */
const LAYERS = [
  ['util', 'src/util/', 'helpers every part uses and that know nothing of swarms: abort signals, optional peer packages, secret redaction, the version'],
  ['errors', 'src/errors.ts', 'the public error classes, each with its code'],
  ['nats', 'src/nats/', 'the supervised NATS connection and the `nats` option (no NATS types)'],
  ['transport', 'src/transport/', 'the transport seam between runtimes: the in-process bus and NATS'],
  ['models', 'src/models/', 'the Model interface, the scripted model and the OpenAI Chat Completions model'],
  ['define', 'src/define/', 'definitions as plain values: agents, swarms, tools, handoffs, ids'],
  ['store', 'src/store/', 'the store interface and its memory, SQLite and JetStream stores'],
  ['a2a', 'src/a2a/', 'remote agents: the RemoteAgentClient seam, the A2A client, A2A mapping, bounded card fetches and the endpoint policy'],
  ['leases', 'src/leases/', "a runtime's identity in a shared store and the renewal of its leases"],
  ['registry', 'src/registry/', 'the agent registry: cards, health, selection, dispatch, its MCP tools'],
  ['catalog', 'src/catalog/', "a runtime's definitions checked together and found by id"],
  ['events', 'src/events/', 'the event stream: stamping, chunk merging, cursors, helpers, the zod schema'],
  ['distribution', 'src/distribution/', 'runtimes calling each other: the protocol, the calls, the NATS parts'],
  ['runners', 'src/runners/', 'running child swarms, remote agents and their questions'],
  ['client', 'src/client/', 'SwarmClient, the handle on one swarm'],
  ['team', 'src/team/', 'team mode: the board, inboxes, the team host and client'],
  ['runtime', 'src/runtime/', 'createRuntime and its parts: hosting, launching, passivation, replay'],
  ['inspect', 'src/inspect/', "the inspection relay: the Stately inspector's wire protocol on 127.0.0.1, live actors kept for late viewers"],
  ['http', 'src/http/', 'HTTP plumbing of the servers: bodies, JSON, errors, auth, SSE'],
  ['server', 'src/server/', 'serve(): REST + SSE, WebSocket, A2A and MCP'],
  ['cli', 'src/cli/', 'the xswarm command line'],
  // The entry points (package.json "exports") sit on top. `no-entry-point-imports` keeps every
  // other module off them, so the layer rules stop below them and do not report an import twice.
  ['index', 'src/index.ts', "the package's main entry point"],
  ['entries', 'src/entries/', 'the subpath entry points: xswarm/server, /sqlite, /a2a, /openai, /nats, /inspect'],
];
const ENTRY_POINTS = new Set(['index', 'entries']);

/** The regular expression of a layer's path: a folder with everything under it, or one file. */
const pathOf = (path) => (path.endsWith('/') ? `^${path}` : `^${path.replace('.', '\\.')}$`);

const layerRules = LAYERS.flatMap(([name, path, holds], index) => {
  const above = LAYERS.slice(index + 1).filter(([upper]) => !ENTRY_POINTS.has(upper));
  if (ENTRY_POINTS.has(name) || above.length === 0) return [];
  return [
    {
      name: `layer-${name}`,
      severity: 'error',
      comment:
        `${path} holds ${holds}. It may import the layers below it, never one above it ` +
        `(${above.map(([upper]) => upper).join(', ')}): see LAYERS in .dependency-cruiser.cjs for the order. ` +
        'Move the shared piece down, or pass it in from above.',
      from: { path: pathOf(path) },
      to: { path: above.map(([, upperPath]) => pathOf(upperPath)) },
    },
  ];
});

module.exports = {
  forbidden: [
    {
      name: 'machines-import-only-xstate',
      severity: 'error',
      comment:
        'machines/ holds pure machine definitions: they import each other and xstate, nothing else — no store, socket, ' +
        'client, Node builtin or other package — so they run and are tested anywhere, and replay is exact. ' +
        'Whatever a machine needs from outside comes in through its actors (actors/ports.ts).',
      from: { path: '^machines/' },
      to: { pathNot: ['^machines/', npm('xstate')] },
    },
    {
      name: 'actors-import-only-machines',
      severity: 'error',
      comment:
        "actors/ holds the loop's steps, which see the runtime only through the ports machines/ and actors/ports.ts " +
        'declare: they import actors/, machines/ and xstate, never src/ or another package.',
      from: { path: '^actors/' },
      to: { pathNot: ['^actors/', '^machines/', npm('xstate')] },
    },
    {
      name: 'no-value-cycles',
      severity: 'error',
      comment:
        'A cycle of value imports, static or dynamic, ties its modules into one: none loads or is tested without the ' +
        'others, and with static imports one of them runs against the others half initialised (a TDZ error, or ' +
        'undefined at load time). Type-only imports are erased when compiled (`import type`), so a cycle that one of ' +
        'them closes is harmless and allowed. dependency-cruiser checks the first cycle it finds through each import; ' +
        "Biome's noImportCycles (ignoreTypes) in biome.jsonc checks them all.",
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    // No two-way folder imports: implied, and so not a rule of its own. Between src/'s folders any
    // two-way import has one arrow pointing up, which a layer rule reports; actors/ and machines/
    // import nothing of src/ (and machines/ nothing of actors/). dependency-cruiser can check it on
    // the folder graph (scope: 'folder', to: { circular: true }), but it then reports every folder
    // of every folder cycle: 17 more errors for the one import of src/store/ in machines/swarm.ts,
    // burying the one that names the mistake. Subfolders of one concern (src/store/sqlite/ and
    // src/store/jetstream/) are that concern's own business.
    ...layerRules,
    {
      name: 'no-entry-point-imports',
      severity: 'error',
      comment:
        "src/index.ts is the package's main entry point: it re-exports everything and loads optional parts a module " +
        'may not need (the OpenAI client). Import the module that defines what you need; only the subpath entry ' +
        'points (src/entries/) may build on src/index.ts.',
      from: { pathNot: '^src/entries/' },
      to: { path: '^src/index\\.ts$' },
    },
    {
      name: 'no-entries-imports',
      severity: 'error',
      comment:
        'src/entries/ are the subpath entry points (package.json "exports"): they exist for users, so nothing in the ' +
        'package imports them, not even another entry point. Import the module they re-export.',
      from: {},
      to: { path: '^src/entries/' },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'Every import must resolve to a file or an installed package; one that does not is an arrow no rule here can see.',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'no-orphans',
      severity: 'error',
      comment: 'A module that imports nothing and that nothing imports is dead code: delete it, or import it where it is meant to be used.',
      from: { orphan: true },
      to: {},
    },
  ],
  options: {
    // Packages are leaves: the rules are about our arrows, not about what a package imports.
    doNotFollow: { path: 'node_modules' },
    // Parsed with swc: dependency-cruiser's TypeScript parser needs the TypeScript compiler API,
    // which TypeScript 7.0 does not offer. swc reads `import type` (and imports whose specifiers
    // are all types) as type-only imports, so they are arrows too (dependency type `type-only`);
    // no-value-cycles sets them apart.
    parser: 'swc',
    // Resolve packages as Node does for an ES module (their "exports" with the import condition),
    // so that ESM-only packages (@xstate/store, @nats-io/*, @a2a-js/sdk's subpaths) resolve.
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
  },
};
