import { Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { ConfigError } from '../config/config';
import { ControlPlaneSeedService } from './control-plane-seed.service';

/**
 * Spec 1.6: a missing or conflicting control-plane seed stops the service at start-up. Mounted
 * by the service host only; the admin CLI, which writes the seed, does not run it.
 */
@Injectable()
export class ControlPlaneSeedCheck implements OnApplicationBootstrap {
  constructor(private readonly seed: ControlPlaneSeedService) {}

  async onApplicationBootstrap(): Promise<void> {
    const problems = await this.seed.verify();
    if (problems.length > 0) {
      throw new ConfigError(problems.map((p) => `control-plane seed: ${p} (run: npm run admin -- seed-control-plane)`));
    }
  }
}
