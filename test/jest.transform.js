// One transform for every Jest project. ts-jest transpiles file by file (isolatedModules): type
// errors are the type-check step's job, and a pure-JS transformer keeps `npm ci` free of
// per-platform binaries that a registry mirror may lack.
module.exports = ['ts-jest', { tsconfig: '<rootDir>/test/tsconfig.jest.json', diagnostics: false }];
