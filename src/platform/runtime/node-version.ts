/**
 * The service runs on Node.js 24 LTS (contract section 9). Older majors are past their end of
 * life and measured several times slower; refusing them at start-up means a machine whose system
 * Node is older cannot run the service by accident instead of through the project's scripts.
 */
export const REQUIRED_NODE_MAJOR = 24;

export function assertSupportedNode(version: string = process.versions.node): void {
  const major = Number(version.split('.')[0]);
  if (!(major >= REQUIRED_NODE_MAJOR)) {
    throw new Error(
      `Node.js ${version} is not supported: run on Node.js ${REQUIRED_NODE_MAJOR} LTS (npm ci installs it into node_modules/.bin; npm scripts use it)`,
    );
  }
}
