import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const PORTS_ONLY = 'src/core depends only on its ports.';
/** What no file of the core may import: an outer layer, or a platform, database, LLM or MCP SDK. */
const outerLayers = [
  {
    group: [
      '**/llm/**',
      '**/tools/**',
      '**/store/**',
      '**/adapters/**',
      '**/main*',
      '**/config*',
      '**/logging*',
      '**/observability*',
      '**/proxy*',
      '**/signals*',
      '**/tracing*',
    ],
    message: PORTS_ONLY,
  },
  {
    group: [
      'openai',
      'openai/*',
      '@slack/*',
      'discord.js',
      '@prisma/*',
      'pg',
      '@modelcontextprotocol/*',
    ],
    message: PORTS_ONLY,
  },
];
/**
 * The rooms of the delivery engine, each with the rooms it may import: the engine drives the rest,
 * and every arrow points down toward the rules, so no room ever reaches back into one above it.
 * (src/core/delivery/settings.ts, beside the rooms, reads any of them.)
 */
const DELIVERY_ROOMS = {
  engine: ['intake', 'waiting', 'commands', 'schedules', 'posts', 'rules'],
  intake: ['rules'],
  waiting: ['posts', 'rules'],
  commands: ['posts', 'rules'],
  schedules: ['rules'],
  posts: ['rules'],
  rules: [],
};
const NOT_THE_AGENT = {
  group: ['**/agent/**'],
  message: 'The delivery engine runs turns through the turn port (ports/turns.ts), not the agent.',
};
/** What a room of the delivery engine may not import: the agent, a room not below it, the settings. */
const roomRules = (room, below) => [
  NOT_THE_AGENT,
  {
    group: [
      ...Object.keys(DELIVERY_ROOMS)
        .filter((other) => other !== room && !below.includes(other))
        .map((other) => `**/${other}/**`),
      '../settings*',
    ],
    message: `The delivery rooms point one way: delivery/${room}/ imports ${
      below.length ? `only from ${below.map((r) => `${r}/`).join(', ')}` : 'from no other room'
    } (docs/architecture.md).`,
  },
];
const restrict = (files, ...patterns) => ({
  files,
  ignores: ['src/core/**/*.test.ts'],
  rules: { 'no-restricted-imports': ['error', { patterns: [...outerLayers, ...patterns] }] },
});

export default tseslint.config(
  { ignores: ['node_modules/', 'src/store/generated/', 'data/', 'workspace/', 'dist/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: globals.node },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      'no-restricted-imports': 'off',
    },
  },
  // No function a reader cannot hold in their head. (Import circles: scripts/import-cycles.mjs,
  // which `npm run lint` runs after ESLint.)
  {
    files: ['src/**/*.ts'],
    ignores: ['src/**/*.test.ts'],
    rules: {
      complexity: ['error', { max: 20, variant: 'modified' }],
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }],
    },
  },
  // The core is channel-agnostic. Its two engines meet only through the ports: the delivery engine
  // runs turns through the turn port, and the loop knows nothing of delivery.
  restrict(['src/core/*.ts', 'src/core/ports/**/*.ts', 'src/core/builtins/**/*.ts']),
  restrict(['src/core/agent/**/*.ts'], {
    group: ['**/delivery/**'],
    message: 'The turn loop knows nothing of delivery.',
  }),
  restrict(['src/core/delivery/**/*.ts'], NOT_THE_AGENT),
  // Within it, each room imports only the rooms below it.
  ...Object.entries(DELIVERY_ROOMS).map(([room, below]) =>
    restrict([`src/core/delivery/${room}/**/*.ts`], ...roomRules(room, below)),
  ),
);
