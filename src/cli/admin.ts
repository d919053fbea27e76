import 'reflect-metadata';
import { DynamicModule, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { parseArgs } from 'node:util';
import { DataSource } from 'typeorm';
import { APP_CONFIG, loadConfig, type AppConfig } from '../config/config';
import { DirectoryModule } from '../directory/directory.module';
import { CryptoModule } from '../platform/crypto/crypto.module';
import { DatabaseModule } from '../platform/database/database.module';
import { dataSourceOptions } from '../platform/database/data-source-options';
import { AdminInputError, AdminService } from './admin.service';

@Module({})
class CliModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: CliModule,
      imports: [
        {
          module: class ConfigHolder {},
          global: true,
          providers: [{ provide: APP_CONFIG, useValue: config }],
          exports: [APP_CONFIG],
        },
        CryptoModule,
        DatabaseModule,
        DirectoryModule,
      ],
      providers: [AdminService],
    };
  }
}

const USAGE = `usage: npm run --silent admin -- <command>
  migrate
  seed-control-plane
  tenant create --id ID --name NAME
  tenant deactivate --id ID
  client create --tenant ID --id cli_… --name NAME --type browser|native --scopes "openid offline_access" --redirect-uri URL [--web-origins "https://a.example https://b.example"]
  client disable --tenant ID --id cli_…
  membership add --tenant ID --email EMAIL --role owner|admin|developer|viewer
  membership remove --tenant ID --email EMAIL
  chat configure --tenant ID --client-id ID --client-secret SECRET --redirect-uri URL`;

async function migrate(config: AppConfig): Promise<unknown> {
  const ds = new DataSource(dataSourceOptions(config));
  await ds.initialize();
  try {
    const ran = await ds.runMigrations({ transaction: 'each' });
    return { migrated: ran.map((m) => m.name) };
  } finally {
    await ds.destroy();
  }
}

async function run(argv: string[]): Promise<unknown> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      id: { type: 'string' },
      name: { type: 'string' },
      tenant: { type: 'string' },
      type: { type: 'string' },
      scopes: { type: 'string' },
      'redirect-uri': { type: 'string', multiple: true },
      'web-origins': { type: 'string' },
      email: { type: 'string' },
      role: { type: 'string' },
      'client-id': { type: 'string' },
      'client-secret': { type: 'string' },
    },
  });
  const config = loadConfig(process.env);
  const command = positionals.join(' ');
  if (command === 'migrate') return migrate(config);

  const ctx = await NestFactory.createApplicationContext(CliModule.forRoot(config), { logger: false });
  try {
    const admin = ctx.get(AdminService);
    const s = (v: string | undefined): string => v ?? '';
    switch (command) {
      case 'seed-control-plane':
        return await admin.seedControlPlane();
      case 'tenant create':
        return await admin.createTenant(s(values.id), s(values.name));
      case 'tenant deactivate':
        return await admin.deactivateTenant(s(values.id));
      case 'client create':
        return await admin.createClient({
          tenant: s(values.tenant),
          id: s(values.id),
          name: s(values.name),
          type: s(values.type),
          scopes: s(values.scopes),
          redirectUris: values['redirect-uri'] ?? [],
          webOrigins: s(values['web-origins']),
        });
      case 'client disable':
        return await admin.disableClient(s(values.tenant), s(values.id));
      case 'membership add':
        return await admin.addMembership(s(values.tenant), s(values.email), s(values.role));
      case 'membership remove':
        return await admin.removeMembership(s(values.tenant), s(values.email));
      case 'chat configure':
        return await admin.configureChat({
          tenant: s(values.tenant),
          clientId: s(values['client-id']),
          clientSecret: s(values['client-secret']),
          redirectUri: s(values['redirect-uri']?.[0]),
        });
      default:
        throw new AdminInputError(`unknown command\n${USAGE}`);
    }
  } finally {
    await ctx.close();
  }
}

run(process.argv.slice(2)).then(
  (result) => {
    process.stdout.write(`${JSON.stringify(result)}\n`);
  },
  (err: unknown) => {
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(
      `${JSON.stringify({ error: err instanceof AdminInputError ? 'invalid_input' : 'failed', message })}\n`,
    );
    process.exitCode = 1;
  },
);
