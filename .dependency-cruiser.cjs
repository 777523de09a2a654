/**
 * The house's layers, in one place. A file may import from its own layer or from any layer below
 * it, never from one above; no import may close a circle. `npm test` runs this check
 * (test/layers.test.ts), and docs/architecture.md explains each layer and the rule it keeps.
 *
 * Top to bottom. A path is matched against `src/...` from the repository's root.
 */
const LAYERS = [
  {
    name: 'instruments',
    why: 'the bench and the soak measure Hotline from outside: nothing imports them, and they never ship',
    paths: ['^bench/', '^soak/'],
  },
  {
    name: 'tools',
    why: 'what people run against their own prompts (simulate, scenarios, eval, the CLIs): above the product, which never imports them',
    paths: ['^src/cli/', '^src/simulator/', '^src/scenarios/', '^src/evals/', '^src/testing/', '^src/hotline-address\\.ts$'],
  },
  {
    name: 'entry',
    why: 'the process and its wiring: main, the configuration, startHotline and the feature modules it composes',
    paths: ['^src/main\\.ts$', '^src/server\\.ts$', '^src/features/', '^src/config(\\.ts|-[a-z-]+\\.ts)$', '^src/startup/', '^src/demo/'],
  },
  {
    name: 'faces',
    why: 'what people and other replicas see of a running Hotline: the dashboard, the cluster, the prompt check',
    paths: ['^src/dashboard/', '^src/cluster/', '^src/prompts-check\\.ts$'],
  },
  {
    name: 'transport',
    why: "the network's edges: the voice service's WebSocket and webhook, the HTTP APIs; no conversation logic",
    paths: ['^src/transport/'],
  },
  {
    name: 'features',
    why: 'what a call can use beside its conversation, each reached by the call core through a port it owns',
    paths: ['^src/campaigns/', '^src/knowledge/', '^src/reports/', '^src/privacy/', '^src/tools/', '^src/telemetry/', '^src/voicemail/', '^src/outbound/', '^src/transcripts/'],
  },
  {
    name: 'store',
    why: "the durable record: SQLite or PostgreSQL, the repositories, the call's writer",
    paths: ['^src/store/'],
  },
  {
    name: 'call',
    why: 'one call: its conversation, turns, speech, endings, and the ports (call/ports/) through which everything above reaches it',
    paths: ['^src/call/'],
  },
  {
    name: 'model',
    why: 'what a turn is made of: the LLM client and its stream, the prompt files and their languages, the connections',
    paths: ['^src/llm/', '^src/prompts/', '^src/net/', '^src/language/'],
  },
  {
    name: 'base',
    why: "the protocol's schemas, phone numbers, staff accounts and small helpers everything may use",
    paths: ['^src/protocol/', '^src/phone/', '^src/staff/', '^src/[^/]+\\.ts$'],
  },
];

const pathOf = (layer) => `(${layer.paths.join('|')})`;

const layerRules = LAYERS.flatMap((layer, index) => {
  const above = LAYERS.slice(0, index);
  if (above.length === 0) return [];
  return [
    {
      name: `${layer.name}-imports-up`,
      comment: `${layer.name} (${layer.why}) may not import from a layer above it: ${above.map((l) => l.name).join(', ')}`,
      severity: 'error',
      from: { path: pathOf(layer), pathNot: above.map(pathOf) },
      to: { path: above.map(pathOf) },
    },
  ];
});

module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'no-circular',
      comment: 'a circle of imports: the files in it can be neither understood nor tested apart',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-tests-in-the-product',
      comment: "the product and its tools never import the tests' helpers",
      severity: 'error',
      from: { path: '^(src|bench|soak)/' },
      to: { path: '^test/' },
    },
    {
      name: 'no-unresolvable',
      comment: 'an import that resolves to nothing',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|dist|\\.test-build)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'], extensions: ['.ts', '.js', '.json'] },
    moduleSystems: ['es6', 'cjs'],
  },
};
