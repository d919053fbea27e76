/**
 * Where a native game keeps refresh credentials (spec 4.3 rule 4): the platform keystore
 * (Keychain, Android Keystore, a console's secure save area). The SDK never keeps a refresh
 * token anywhere else.
 */
export interface SecureStorage {
  get(key: string): Promise<string | null>;
  set(key: string, value: string): Promise<void>;
  delete(key: string): Promise<void>;
}

/** For tests and short-lived tools only: a process-memory store. */
export class MemorySecureStorage implements SecureStorage {
  private readonly values = new Map<string, string>();

  get(key: string): Promise<string | null> {
    return Promise.resolve(this.values.get(key) ?? null);
  }

  set(key: string, value: string): Promise<void> {
    this.values.set(key, value);
    return Promise.resolve();
  }

  delete(key: string): Promise<void> {
    this.values.delete(key);
    return Promise.resolve();
  }
}
