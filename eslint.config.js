import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist', 'dist/', '.build/', 'coverage/', 'data/', '.tap/', 'node_modules/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      'no-console': 'error',
    },
  },
  // The arrows run one way (service/README.md): service → src/edge, actors → src → subjects.
  ...[
    { files: ['subjects/**/*.ts'], rooms: ['src', 'actors', 'service'], why: 'the contract depends on no domain code: shared value formats live in subjects/formats' },
    { files: ['src/**/*.ts'], rooms: ['actors', 'service'], why: 'only the composition root (service/) knows the workers' },
    { files: ['actors/**/*.ts'], rooms: ['service', 'src/edge'], why: 'workers never import the edge or the composition root' },
  ].map(({ files, rooms, why }) => ({
    files,
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: `^(\\.\\./)+(${rooms.join('|')})/`, message: why }] }],
    },
  })),
  {
    // The portal is a client of the HTTP API (portal/README.md): from outside its folder it takes
    // only the table of currency subunits the API counts amounts in, and the contract's permission
    // names as a type (a value import would bundle zod).
    files: ['portal/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', {
        patterns: [
          { regex: '^(\\.\\./)+(?!subjects/formats/(money|permissions)\\.js$)(service|src|actors|subjects|scripts|bench|test)/', message: 'the portal speaks HTTP: it imports nothing from the rest of the repository but subjects/formats/money.js (and permissions.js as a type)' },
          { regex: '^(\\.\\./)+subjects/formats/permissions\\.js$', allowTypeImports: true, message: 'the portal takes the permission names as a type only: a value import would bundle zod' },
        ],
      }],
    },
  },
  {
    // Plain JavaScript run by node itself (scripts/build.mjs makes the compiled tree).
    files: ['**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', SharedArrayBuffer: 'readonly', Atomics: 'readonly' } },
  },
  {
    // Tests read arbitrary JSON answers and assert on their shape.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
