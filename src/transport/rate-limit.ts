import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';

/**
 * Requests per minute per remote address; `perMinute` 0 turns the limit off.
 *
 * Among replicas (`replicas`: how many are alive) each one allows its share of the minute's budget:
 * a balancer spreads an address's requests over them, so together they allow the budget once, and
 * an address held on one replica gets less, never more. Counted in memory: no request waits for
 * the store to be counted.
 */
export class RateLimit {
  private readonly limiter: RateLimiterMemory | undefined;

  constructor(
    private readonly perMinute: number,
    private readonly replicas: () => number = () => 1,
  ) {
    this.limiter = perMinute > 0 ? new RateLimiterMemory({ points: perMinute, duration: 60 }) : undefined;
  }

  /** Resolves true if the address may go on; false when it is over its limit. */
  async allow(address: string): Promise<boolean> {
    if (!this.limiter) return true;
    const share = Math.max(1, Math.ceil(this.perMinute / Math.max(1, this.replicas())));
    try {
      const used = await this.limiter.consume(address);
      return used.consumedPoints <= share;
    } catch (error) {
      if (error instanceof RateLimiterRes) return false;
      throw error;
    }
  }
}

/**
 * Wrong secrets per minute per address, one budget for every edge that compares
 * a secret (webhook, WebSocket, dashboard login, admin API, metrics): a guesser
 * gains nothing by switching between them. It is looked at *before* a secret is
 * compared: an address that has run out is refused without a comparison, so
 * even the right secret from it is refused until the minute is over, and a
 * guess made then learns nothing. `perMinute` 0 turns it off.
 *
 * Kept in memory, and with `shared` (replicas on one PostgreSQL) also counted across replicas: each
 * failure is added to the shared count, and a replica that learns the address is out of failures
 * blocks it here too. A guesser spread over N replicas gets the budget once (plus at most one try per
 * other replica before it learns), never N times; a right secret never waits for the shared count.
 */
export class FailureBudget {
  private readonly limiter: RateLimiterMemory | undefined;

  constructor(
    readonly perMinute: number,
    private readonly shared?: SharedFailureCount,
  ) {
    this.limiter = perMinute > 0 ? new RateLimiterMemory({ points: perMinute, duration: 60 }) : undefined;
  }

  /** Seconds until the address may try again; 0 while it has failures left. */
  async exhausted(address: string): Promise<number> {
    if (!this.limiter) return 0;
    const used = await this.limiter.get(address);
    if (used === null || used.consumedPoints < this.perMinute) return 0;
    return Math.max(1, Math.ceil(used.msBeforeNext / 1000));
  }

  /** Counts one wrong or missing secret against the address. */
  async spend(address: string): Promise<void> {
    if (!this.limiter) return;
    await this.limiter.penalty(address, 1);
    if (!this.shared) return;
    const counted = await this.shared.count(address);
    if (counted !== undefined && counted.failures >= this.perMinute) {
      await this.limiter.block(address, Math.max(1, Math.ceil(counted.msLeft / 1000)));
    }
  }
}

/** The failures of an address across replicas in the current minute (undefined: the count could not be had). */
export interface SharedFailureCount {
  count(address: string): Promise<{ failures: number; msLeft: number } | undefined>;
}

/** What an edge does with a request once it knows who sent it and whether the secret was right. */
export type Admission = 'admitted' | 'unauthorized' | 'limited';

/**
 * The gate of a transport: the failure budget first (an address out of it is
 * refused before its secret is compared), then the secret, then the rate of
 * authenticated requests. Authenticated requests and failures are counted
 * apart: failures never spend the service's budget of requests.
 */
export class AccessLimits {
  constructor(
    private readonly authenticated: RateLimit,
    private readonly failures: FailureBudget,
  ) {}

  /** `authenticates` compares the secret; it is not called for an address out of failures. Undefined: an open edge. */
  async admit(address: string, authenticates: (() => boolean) | undefined): Promise<Admission> {
    if (authenticates) {
      if ((await this.failures.exhausted(address)) > 0) return 'limited';
      if (!authenticates()) {
        await this.failures.spend(address);
        return 'unauthorized';
      }
    }
    return (await this.authenticated.allow(address)) ? 'admitted' : 'limited';
  }
}
