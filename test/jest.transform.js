// One transform for every Jest project. ts-jest transpiles file by file (isolatedModules): type
// errors are the type-check step's job, and a pure-JS transformer keeps `npm ci` free of
// per-platform binaries that a registry mirror may lack.
const typescript = ['ts-jest', { tsconfig: '<rootDir>/test/tsconfig.jest.json', diagnostics: false }];

// jose ships only ES modules. Node 24 requires them natively; Jest 29's module loader does not,
// so its files are transpiled to CommonJS like the tests.
const esModules = ['ts-jest', { tsconfig: '<rootDir>/test/tsconfig.jose.json', diagnostics: false }];

module.exports = {
  transform: { '^.+\\.ts$': typescript, '/node_modules/jose/.+\\.js$': esModules },
  transformIgnorePatterns: ['/node_modules/(?!jose/)'],
};
