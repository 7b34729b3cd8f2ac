import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

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
  {
    // The core is channel-agnostic: no platform SDK, database, LLM SDK or outer layer inside it.
    files: ['src/core/**/*.ts'],
    ignores: ['src/core/**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['../llm/*', '../tools/*', '../store/*', '../adapters/*', '../main*', '../config*'], message: 'src/core depends only on its ports.' },
            { group: ['openai', 'openai/*', '@slack/*', 'discord.js', '@prisma/*', 'pg', '@electric-sql/*', '@modelcontextprotocol/*'], message: 'src/core depends only on its ports.' },
          ],
        },
      ],
    },
  },
);
