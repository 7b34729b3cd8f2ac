import { defineConfig } from 'vitest/config';

// `npm run soak`: the crash suite, apart from `npm test` because its size is a setting (SOAK_KILLS).
export default defineConfig({
  test: {
    include: ['test/soak/**/*.soak.ts'],
    // The bot is started from dist/, compiled first when the source changed.
    globalSetup: ['test/support/build.ts'],
    testTimeout: 900_000,
    hookTimeout: 60_000,
  },
});
