// Type-aware lint: the rules that catch unawaited promises and unhandled union cases
// matter most in an auth service, where a forgotten await can skip a check.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';
import { readdirSync } from 'node:fs';

/**
 * Layers of src/ and what each may import (relative imports only; libraries are free). Dependencies
 * point one way: errors and config at the bottom, platform machinery above them, the HTTP edge and
 * the shared directory (tenants, clients, users, identities, memberships) above platform, and the
 * features on top. A feature may use the directory, the edge and the platform, never another
 * feature. The console BFF talks to the API over HTTP only: none of the API's modules (features,
 * directory, database, keys, session store) are in reach, only crypto, Redis and metrics.
 * app.module.ts, app.setup.ts and main.ts compose everything and are not a layer.
 */
const FEATURES = ['management-auth', 'management', 'guest', 'console-bff', 'health', 'openapi', 'cli'];
const TOP = ['errors', 'config', 'platform', 'http', 'directory', ...FEATURES];
const BELOW_FEATURES = ['errors', 'config', 'platform', 'http', 'directory'];
const LAYERS = {
  errors: [],
  config: ['errors'],
  platform: ['errors', 'config'],
  http: ['errors', 'config', 'platform'],
  directory: ['errors', 'config', 'platform'],
  ...Object.fromEntries(FEATURES.map((feature) => [feature, BELOW_FEATURES])),
  'console-bff': ['errors', 'config', 'platform', 'http'],
};
// A new folder under src/ must be given a layer: an unlisted folder would be unrestricted.
const unlayered = readdirSync(new URL('./src', import.meta.url), { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && !(entry.name in LAYERS))
  .map((entry) => `src/${entry.name}`);
if (unlayered.length > 0) throw new Error(`eslint.config.mjs: give ${unlayered.join(', ')} a layer in LAYERS`);

/** Platform folders the console BFF may use: the API's persistence stays out of its reach. */
const CONSOLE_BFF_PLATFORM = ['crypto', 'redis', 'metrics'];

function layerRule(layer, allowed) {
  const forbidden = TOP.filter((top) => top !== layer && !allowed.includes(top));
  const patterns = [
    {
      regex: `^(\\.\\./)+(${forbidden.join('|')})(/|$)`,
      message: `src/${layer} may import only from itself${allowed.map((a) => `, src/${a}`).join('')} and libraries (layers: eslint.config.mjs).`,
    },
  ];
  if (layer === 'console-bff') {
    patterns.push({
      regex: `^(\\.\\./)+platform/(?!(${CONSOLE_BFF_PLATFORM.join('|')})/)`,
      message: `src/console-bff talks to the API over HTTP: of the platform it may use only ${CONSOLE_BFF_PLATFORM.join(', ')}.`,
    });
  }
  return { files: [`src/${layer}/**/*.ts`], rules: { 'no-restricted-imports': ['error', { patterns }] } };
}

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      '**/node_modules/**',
      'coverage/**',
      'test-output/**',
      'bench/out/**',
      // Scripts in JavaScript are linted where they run outside the build: the bench's peer, the browser runner.
      '**/*.js',
      '**/*.mjs',
      '!bench/peers/**/*.mjs',
      '!test/browser/**/*.js',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
      '@typescript-eslint/consistent-type-imports': 'off',
      eqeqeq: ['error', 'always'],
      'no-console': 'error',
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/unbound-method': 'off',
      'no-console': 'off',
    },
  },
  ...Object.entries(LAYERS).map(([layer, allowed]) => layerRule(layer, allowed)),
  // The SDK is a package of its own, published apart from the service: it speaks HTTP only.
  {
    files: ['sdk/src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex: '^(\\.\\./)+src(/|$)', message: 'sdk/ is its own package: it may not import the service.' },
          ],
        },
      ],
    },
  },
  // JavaScript has no types to check: the rules that need them are off, Node's globals are known.
  {
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      globals: Object.fromEntries(
        ['process', 'console', 'Buffer', 'URL', 'URLSearchParams', 'fetch', 'setTimeout', 'clearTimeout'].map((g) => [
          g,
          'readonly',
        ]),
      ),
    },
  },
  {
    files: ['**/*.js'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { require: 'readonly', __dirname: 'readonly', module: 'writable' },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  // Layout is the formatter's job: rules that would fight it are off.
  prettier,
  {
    files: ['src/cli/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
);
