import { tmpdir } from 'node:os';
import { createTemplateDatabase } from './database';
import { writeTestSecrets } from './test-secrets';

/** Runs once per test run, before the workers start; they inherit this process's environment. */
export default async function globalSetup(): Promise<void> {
  // Start time first (8 base-36 digits until 2059): database.ts reads it to find stale templates.
  process.env.SVC_TEST_RUN_ID = `${Date.now().toString(36).padStart(8, '0')}${process.pid.toString(36)}`;
  process.env.SVC_TEST_SECRETS_FILE = `${tmpdir()}/svc-auth-test-secrets-${process.env.SVC_TEST_RUN_ID}.json`;
  await writeTestSecrets();
  await createTemplateDatabase();
}
