import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';

/** Requests per minute per remote address; `perMinute` 0 turns the limit off. */
export class RateLimit {
  private readonly limiter: RateLimiterMemory | undefined;

  constructor(perMinute: number) {
    this.limiter = perMinute > 0 ? new RateLimiterMemory({ points: perMinute, duration: 60 }) : undefined;
  }

  /** Resolves true if the address may go on; false when it is over its limit. */
  async allow(address: string): Promise<boolean> {
    if (!this.limiter) return true;
    try {
      await this.limiter.consume(address);
      return true;
    } catch (error) {
      if (error instanceof RateLimiterRes) return false;
      throw error;
    }
  }
}

/** What an edge does with a request once it knows who sent it and whether the secret was right. */
export type Admission = 'admitted' | 'unauthorized' | 'limited';

/**
 * Rate limits applied after authentication: authenticated requests and failed
 * attempts are counted apart, per address. Anyone can claim the voice
 * service's address (or share its NAT), so failed attempts must never spend
 * the service's own budget; they only run out their own, then get 429.
 */
export class AccessLimits {
  constructor(
    private readonly authenticated: RateLimit,
    private readonly failures: RateLimit,
  ) {}

  async admit(address: string, authenticated: boolean): Promise<Admission> {
    if (authenticated) return (await this.authenticated.allow(address)) ? 'admitted' : 'limited';
    return (await this.failures.allow(address)) ? 'unauthorized' : 'limited';
  }
}
