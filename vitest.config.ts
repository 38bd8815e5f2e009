import { defineConfig } from 'vitest/config';

// One project per test folder, so that `vitest run --project unit` (npm run test:unit) runs only the
// fast tests and `vitest run` (npm test) runs all four.
const FOLDERS = ['unit', 'integration', 'e2e', 'contract'] as const;

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    reporters: ['default'],
    projects: FOLDERS.map((name) => ({
      extends: true,
      test: { name, include: [`test/${name}/**/*.test.ts`] },
    })),
  },
});
