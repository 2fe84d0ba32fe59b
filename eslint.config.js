// ESLint with typescript-eslint's recommended rules, run by `npm run lint` beside Prettier (which owns layout).
// Why these choices, and why type-aware rules are not on: docs/architecture.md, "Lint and format".
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  { ignores: ['dist/', 'node_modules/', 'bench/.out/', 'client/dist/', 'client/src/generated/'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    rules: {
      // `_name` marks a value left out on purpose: a field dropped by rest-destructuring, a parameter a signature needs.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // The service matches control characters on purpose: file names, ANSI sequences, paths typed into a terminal.
      'no-control-regex': 'off',
    },
  },
  {
    // Tests read JSON answers whose shape the assertions themselves check.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['scripts/**/*.mjs', '*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
  {
    // The share worker runs on Cloudflare Workers (workerd), with the web platform's globals.
    files: ['worker/src/**/*.js'],
    languageOptions: {
      globals: {
        Response: 'readonly',
        Headers: 'readonly',
        URL: 'readonly',
        crypto: 'readonly',
        TextEncoder: 'readonly',
      },
    },
  },
);
