import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const PORTS_ONLY = 'src/core depends only on its ports.';
/** What no file of the core may import: an outer layer, or a platform, database, LLM or MCP SDK. */
const outerLayers = [
  { group: ['**/llm/**', '**/tools/**', '**/store/**', '**/adapters/**', '**/main*', '**/config*', '**/logging*', '**/observability*', '**/proxy*'], message: PORTS_ONLY },
  { group: ['openai', 'openai/*', '@slack/*', 'discord.js', '@prisma/*', 'pg', '@modelcontextprotocol/*'], message: PORTS_ONLY },
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
  // The core is channel-agnostic. Its two engines meet only through the ports: the pipeline runs
  // turns through the turn port, and the loop knows nothing of delivery.
  restrict(['src/core/*.ts', 'src/core/ports/**/*.ts']),
  restrict(['src/core/agent/**/*.ts'], { group: ['**/inbound/**'], message: 'The turn loop knows nothing of delivery.' }),
  restrict(['src/core/inbound/**/*.ts'], { group: ['**/agent/**'], message: 'The pipeline runs turns through the turn port (ports/turns.ts), not the agent.' }),
);
