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
  restrict(['src/core/delivery/**/*.ts'], {
    group: ['**/agent/**'],
    message:
      'The delivery engine runs turns through the turn port (ports/turns.ts), not the agent.',
  }),
);
