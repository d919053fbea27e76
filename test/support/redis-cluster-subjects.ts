import { readdirSync, readFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';

/**
 * What only a Redis Cluster can prove: Lua scripts given more than one key, and commands given more
 * than one key. On a single server they always work; on a cluster only when every key hashes to
 * one slot. Each is named `<module>:<SCRIPT or command>`, e.g. `session-store:ROTATE_LEGACY`.
 */
export interface ClusterSubject {
  readonly name: string;
  readonly file: string;
}

const ROOT = join(__dirname, '..', '..');
/** Commands that take several keys (ioredis method names). */
const MULTI_KEY_COMMANDS = ['rename', 'renamenx', 'del', 'unlink', 'exists', 'mget', 'mset', 'smove', 'lmove', 'copy'];
/** The marker a spec file carries, naming the subjects it exercises: `// @redis-cluster a:B c:D`. */
export const CLUSTER_MARKER = /^\/\/ @redis-cluster((?: [\w.-]+:\w+)+)\s*$/gm;

function filesUnder(dir: string, suffix: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith(suffix))
    .map((f) => join(dir, f));
}

/** The top-level arguments of the call whose `(` is at `open`, as source text. */
function callArguments(source: string, open: number): string[] {
  const args: string[] = [];
  let depth = 0;
  let start = open + 1;
  for (let i = open; i < source.length; i++) {
    const c = source[i];
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') {
      depth--;
      if (depth === 0) {
        args.push(source.slice(start, i));
        return args.map((a) => a.trim()).filter((a) => a.length > 0);
      }
    } else if (c === ',' && depth === 1) {
      args.push(source.slice(start, i));
      start = i + 1;
    }
  }
  throw new Error('unbalanced call');
}

/** A script uses several keys when it reads KEYS[2] or beyond, or walks KEYS. */
function scriptIsMultiKey(lua: string): boolean {
  return [...lua.matchAll(/KEYS\[(\w+)\]/g)].some((m) => m[1] !== '1') || /#KEYS|ipairs\(KEYS\)/.test(lua);
}

/** Every multi-key script and multi-key command call in src/. */
export function clusterSubjects(): ClusterSubject[] {
  const subjects = new Map<string, ClusterSubject>();
  for (const file of filesUnder('src', '.ts')) {
    const source = readFileSync(join(ROOT, file), 'utf8');
    const module = basename(file, '.ts');
    for (const m of source.matchAll(/const (\w+) = new RedisScript\(`([^`]*)`/g))
      if (scriptIsMultiKey(m[2] ?? '')) subjects.set(`${module}:${m[1]}`, { name: `${module}:${m[1]}`, file });
    for (const m of source.matchAll(new RegExp(`\\.redis\\.(${MULTI_KEY_COMMANDS.join('|')})\\(`, 'g'))) {
      const open = (m.index ?? 0) + m[0].length - 1;
      if (callArguments(source, open).length > 1)
        subjects.set(`${module}:${m[1]}`, { name: `${module}:${m[1]}`, file });
    }
  }
  return [...subjects.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * Places in src/ the scan above cannot judge: a `new RedisScript(` not written as
 * `const NAME = new RedisScript(\`…\`)`, or Lua sent with eval/evalsha/defineCommand outside
 * RedisScript. Each would hide a multi-key script from the cluster pass.
 */
export function unscannedScripts(): string[] {
  const found: string[] = [];
  for (const file of filesUnder('src', '.ts')) {
    const source = readFileSync(join(ROOT, file), 'utf8');
    const scripts = (source.match(/new RedisScript\(/g) ?? []).length;
    const named = [...source.matchAll(/const (\w+) = new RedisScript\(`([^`]*)`/g)].length;
    if (scripts !== named)
      found.push(`${file}: ${scripts - named} RedisScript(s) not of the form const NAME = new RedisScript(\`…\`)`);
    if (!file.endsWith('redis-script.ts') && /\.(eval|evalsha|defineCommand)\(/.test(source))
      found.push(`${file}: Lua sent outside RedisScript`);
  }
  return found;
}

/** The e2e spec files with a cluster marker, and the subjects each names (relative to the repository). */
export function clusterSuites(): Map<string, string[]> {
  const suites = new Map<string, string[]>();
  for (const file of filesUnder('test/e2e', '.e2e-spec.ts')) {
    const names = [...readFileSync(join(ROOT, file), 'utf8').matchAll(CLUSTER_MARKER)].flatMap((m) =>
      (m[1] ?? '').trim().split(' '),
    );
    if (names.length > 0) suites.set(relative(ROOT, join(ROOT, file)), names);
  }
  return suites;
}
