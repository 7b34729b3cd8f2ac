import { defineConfig } from 'vitest/config';

// `npm run soak`: the crash suite, apart from `npm test` because its size is a setting (SOAK_KILLS).
export default defineConfig({
  test: { include: ['test/soak/**/*.soak.ts'], testTimeout: 900_000, hookTimeout: 60_000 },
});
