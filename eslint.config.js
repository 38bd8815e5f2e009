import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'agent-home/', 'coverage/', '**/*.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  {
    // Typed rules: a promise nobody awaits or handles (a lost error, a write racing the next) fails lint.
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: { '@typescript-eslint/no-floating-promises': 'error' },
  },
  {
    // zod and yaml come through src/shared/, whose bundles (zod without its locales) the build ships.
    files: ['src/**/*.ts'],
    ignores: ['src/shared/zod-api.ts', 'src/shared/yaml.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            { name: 'zod', message: 'import { z } from src/shared/zod.js (the build bundles it)' },
            { name: 'yaml', message: 'import from src/shared/yaml.js (the build bundles it)' },
          ],
        },
      ],
    },
  },
  {
    // The status page's script runs in the browser (served as is, no build step).
    files: ['src/server/page/assets/**/*.js'],
    languageOptions: { globals: { document: 'readonly', EventSource: 'readonly' } },
  },
);
